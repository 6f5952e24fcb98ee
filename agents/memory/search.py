"""Full-text search over memory items: Postgres tsvector or SQLite FTS5 (see migration 0002).

Both return ``(item_id, relevance)`` pairs, most relevant first, relevance > 0 and comparable
only within one call.
"""

from __future__ import annotations

import re

from django.contrib.postgres.search import SearchQuery, SearchRank, SearchVector
from django.db import connection
from django.db.models import F, QuerySet

from agents.memory.models import MemoryItem

MAX_TERMS = 24
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


def search(items: QuerySet[MemoryItem], query: str, *, limit: int) -> list[tuple[int, float]]:
    words = terms(query)
    if not words or limit <= 0:
        return []
    if connection.vendor == "postgresql":
        return _search_postgres(items, words, limit)
    if connection.vendor == "sqlite":
        return _search_sqlite(items, words, limit)
    return _search_fallback(items, words, limit)


def _search_postgres(
    items: QuerySet[MemoryItem], words: list[str], limit: int
) -> list[tuple[int, float]]:
    # The same expression as the GIN index of migration 0002, so the index is used.
    vector = SearchVector("text", "key", "value", config="english")
    query = SearchQuery(" or ".join(words), config="english", search_type="websearch")
    rows = (
        items.annotate(document=vector, relevance=SearchRank(F("document"), query))
        .filter(document=query)
        .order_by("-relevance", "-id")
        .values_list("id", "relevance")[:limit]
    )
    return [(item_id, float(relevance) or 1e-6) for item_id, relevance in rows]


def _search_sqlite(
    items: QuerySet[MemoryItem], words: list[str], limit: int
) -> list[tuple[int, float]]:
    match = " OR ".join('"' + word.replace('"', '""') + '"' for word in words)
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
            "SELECT memory_item_fts.rowid, bm25(memory_item_fts) FROM memory_item_fts "  # noqa: S608
            f'CROSS JOIN "{table}" ON "{table}"."id" = memory_item_fts.rowid '
            f"WHERE memory_item_fts MATCH %s AND ({where}) "
            "ORDER BY bm25(memory_item_fts) LIMIT %s"
        )
    else:
        inner, params = items.order_by().values("id").query.sql_with_params()
        sql = (
            "SELECT memory_item_fts.rowid, bm25(memory_item_fts) FROM memory_item_fts "  # noqa: S608
            # The unary + keeps SQLite from handing the IN list to FTS5 as one MATCH per id.
            f"WHERE memory_item_fts MATCH %s AND +memory_item_fts.rowid IN ({inner}) "
            "ORDER BY bm25(memory_item_fts) LIMIT %s"
        )
    with connection.cursor() as cursor:
        cursor.execute(sql, [match, *params, limit])
        rows = cursor.fetchall()
    # bm25() is negative, more negative meaning more relevant.
    return [(int(item_id), max(-float(score), 1e-6)) for item_id, score in rows]


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
