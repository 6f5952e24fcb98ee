"""Full-text search over memory items: Postgres tsvector or SQLite FTS5 (see migration 0002).

Both return ``(item_id, relevance)`` pairs, most relevant first, relevance > 0 and comparable
only within one call.
"""

from __future__ import annotations

import re

from django.contrib.postgres.search import SearchQuery, SearchRank, SearchVectorField
from django.db import connection
from django.db.models import QuerySet
from django.db.models.expressions import RawSQL

from agents.memory.models import MemoryItem

MAX_TERMS = 24
#: At most this many matches (the newest) are ranked per search: a bound on the work when common
#: words match most of someone's memory. Older matches lose to recency weighting anyway.
CANDIDATES = 500
_TERM = re.compile(r"[^\W_]{2,}", re.UNICODE)
# Words too common to say anything about relevance (both engines would match them everywhere).
STOP_WORDS = frozenset(
    """a about above after again all also am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further
    had has have having he her here hers him his how i if in into is it its itself just me more
    most my no nor not now of off on once only or other our ours out over own please same she
    should so some such than that the their them then there these they this those through to too
    under until up very was we were what when where which while who whom why will with would you
    your yours""".split()  # noqa: SIM905
)


def terms(query: str) -> list[str]:
    """The distinct, meaningful words of a query, in order, at most ``MAX_TERMS``."""
    seen: dict[str, None] = {}
    for word in _TERM.findall(query.lower()):
        if word not in STOP_WORDS:
            seen.setdefault(word, None)
    return list(seen)[:MAX_TERMS]


def personal_tag(owner_id: int) -> str:
    return f"p{owner_id}"


def workspace_tag(workspace_id: int, owner_id: int) -> str:
    return f"w{workspace_id}x{owner_id}"


def team_tag(workspace_id: int) -> str:
    return f"t{workspace_id}"


def search(
    items: QuerySet[MemoryItem], query: str, *, limit: int, tags: list[str] | None = None
) -> list[tuple[int, float]]:
    """Active ``items`` matching any meaningful word of ``query``, most relevant first.

    ``tags`` (see migration 0004) may narrow the search to whose memory ``items`` covers, which
    lets SQLite skip everyone else's matches inside the index; ``items`` still filters the result.
    """
    words = terms(query)
    if not words or limit <= 0 or tags == []:
        return []
    if connection.vendor == "postgresql":
        return _search_postgres(items, words, limit)
    if connection.vendor == "sqlite":
        return _search_sqlite(items, words, limit, tags)
    return _search_fallback(items, words, limit)


def _search_postgres(
    items: QuerySet[MemoryItem], words: list[str], limit: int
) -> list[tuple[int, float]]:
    # The stored, GIN-indexed column of migration 0003 (outside Django's model state).
    # A constant column name, no user input: S611 does not apply.
    vector = RawSQL(f'"{MemoryItem._meta.db_table}"."search_vector"', [], SearchVectorField())  # noqa: S611
    query = SearchQuery(" or ".join(words), config="english", search_type="websearch")
    # Rank only the newest CANDIDATES matches: common words can match most of someone's memory.
    # Two statements, not a sub-query: the raw column name must refer to the top-level table.
    newest = list(
        items.annotate(document=vector)
        .filter(document=query)
        .order_by("-id")
        .values_list("id", flat=True)[:CANDIDATES]
    )
    if not newest:
        return []
    rows = (
        MemoryItem.objects.filter(pk__in=newest)
        .annotate(relevance=SearchRank(vector, query))
        .order_by("-relevance", "-id")
        .values_list("id", "relevance")[:limit]
    )
    return [(item_id, float(relevance) or 1e-6) for item_id, relevance in rows]


def _search_sqlite(
    items: QuerySet[MemoryItem], words: list[str], limit: int, tags: list[str] | None
) -> list[tuple[int, float]]:
    quoted = " OR ".join('"' + word.replace('"', '""') + '"' for word in words)
    match = '{"text" "key" "value"} : (' + quoted + ")"
    if tags:
        match = "tags : (" + " OR ".join(tags) + ") AND " + match
    query = items.query
    compiler = query.get_compiler(connection=connection)
    table = MemoryItem._meta.db_table
    joined = {alias for alias, count in query.alias_refcount.items() if count}
    if joined <= {table}:
        # Filters on the item table only: join and filter in one pass (no id list built).
        # CROSS JOIN makes SQLite read the full-text matches first; a plain JOIN lets the
        # planner run the MATCH once per candidate row instead (seconds, not milliseconds).
        where, params = compiler.compile(query.where) if query.where else ("1", [])
        sql = (
            # The WHERE is compiled by Django's ORM; every value is a parameter.
            "SELECT memory_item_fts.rowid, bm25(memory_item_fts, 1, 1, 1, 0) FROM memory_item_fts "  # noqa: S608
            f'CROSS JOIN "{table}" ON "{table}"."id" = memory_item_fts.rowid '
            f"WHERE memory_item_fts MATCH %s AND ({where}) "
            "ORDER BY memory_item_fts.rowid DESC LIMIT %s"
        )
    else:
        inner, params = items.order_by().values("id").query.sql_with_params()
        sql = (
            "SELECT memory_item_fts.rowid, bm25(memory_item_fts, 1, 1, 1, 0) FROM memory_item_fts "  # noqa: S608
            # The unary + keeps SQLite from handing the IN list to FTS5 as one MATCH per id.
            f"WHERE memory_item_fts MATCH %s AND +memory_item_fts.rowid IN ({inner}) "
            "ORDER BY memory_item_fts.rowid DESC LIMIT %s"
        )
    # FTS5 yields matches newest first without sorting, so only CANDIDATES rows are scored.
    with connection.cursor() as cursor:
        cursor.execute(sql, [match, *params, CANDIDATES])
        rows = cursor.fetchall()
    # bm25() is negative, more negative meaning more relevant.
    scored = [(int(item_id), max(-float(score), 1e-6)) for item_id, score in rows]
    scored.sort(key=lambda pair: (-pair[1], -pair[0]))
    return scored[:limit]


def _search_fallback(
    items: QuerySet[MemoryItem], words: list[str], limit: int
) -> list[tuple[int, float]]:
    """Other databases: count matching words in the newest items (correct, not fast)."""
    scored = []
    for item_id, text, key, value in items.values_list("id", "text", "key", "value")[:5000]:
        haystack = f"{text} {key} {value}".lower()
        hits = sum(1 for word in words if word in haystack)
        if hits:
            scored.append((item_id, float(hits)))
    scored.sort(key=lambda pair: (-pair[1], -pair[0]))
    return scored[:limit]
