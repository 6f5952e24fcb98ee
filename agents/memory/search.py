"""Full-text search over memory items: Postgres tsvector or SQLite FTS5 (see migration 0002).

Both return ``(item_id, relevance)`` pairs, most relevant first, relevance > 0 and comparable
only within one call.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.postgres.search import SearchQuery, SearchRank, SearchVectorField
from django.db import connection
from django.db.models import QuerySet
from django.db.models.expressions import RawSQL

from agents.memory import scoring
from agents.memory.models import MemoryItem

MAX_TERMS = 24
#: At most this many matches (the newest) are ranked per search: a bound on the work when common
#: words match most of someone's memory. Older matches lose to recency weighting anyway.
CANDIDATES = 500
#: SQLite's relevance: how many times the query's words occur in the item (``highlight()``
#: marks each match with one character). Like Postgres's ``ts_rank`` it needs no statistics of
#: the whole table: ``bm25()`` reads every match of every word in the table to weigh the words,
#: 13 ms a search over 100,000 items against 1.5 ms for this (bench/memory.py).
SQLITE_HITS = (
    "(length(highlight(memory_item_fts, 0, char(1), '')) - length(memory_item_fts.\"text\")"
    " + length(highlight(memory_item_fts, 1, char(1), '')) - length(memory_item_fts.\"key\")"
    " + length(highlight(memory_item_fts, 2, char(1), '')) - length(memory_item_fts.\"value\"))"
)
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
            f"SELECT memory_item_fts.rowid, {SQLITE_HITS} FROM memory_item_fts "  # noqa: S608
            f'CROSS JOIN "{table}" ON "{table}"."id" = memory_item_fts.rowid '
            f"WHERE memory_item_fts MATCH %s AND ({where}) "
            "ORDER BY memory_item_fts.rowid DESC LIMIT %s"
        )
    else:
        inner, params = items.order_by().values("id").query.sql_with_params()
        sql = (
            f"SELECT memory_item_fts.rowid, {SQLITE_HITS} FROM memory_item_fts "  # noqa: S608
            # The unary + keeps SQLite from handing the IN list to FTS5 as one MATCH per id.
            f"WHERE memory_item_fts MATCH %s AND +memory_item_fts.rowid IN ({inner}) "
            "ORDER BY memory_item_fts.rowid DESC LIMIT %s"
        )
    # FTS5 yields matches newest first without sorting, so only CANDIDATES rows are scored.
    with connection.cursor() as cursor:
        cursor.execute(sql, [match, *params, CANDIDATES])
        rows = cursor.fetchall()
    scored = [(int(item_id), max(float(hits), 1e-6)) for item_id, hits in rows]
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


# --- Retrieval at turn start: the structured profile and the ranked matches in one statement ---

#: Relevance, confidence and recency are combined in SQL as ``scoring`` defines.
PROFILE_MAX_ROWS = 200
_ITEM = MemoryItem._meta.db_table
_COLUMNS = (
    'i.id, i.owner_id, i.scope, i.kind, i."key", i."value", i."text", i.confidence, i.pinned, '
    "i.kinds, i.shared"
)
#: How many of ``_COLUMNS`` there are (``TurnRow.from_columns`` reads them in order).
N_COLUMNS = 11


@dataclass(frozen=True)
class TurnRow:
    """One row of ``turn_rows``: a profile item (score 1) or a ranked match."""

    reason: str  # "profile" or "relevant"
    id: int
    owner_id: int
    scope: str
    kind: str
    key: str
    value: str
    text: str
    confidence: float
    pinned: bool
    kinds: str
    shared: bool
    score: float
    relevance: float = 1.0  # full-text relevance scaled to the best match's (0..1)
    weight: float = 1.0  # scoring.weight(confidence, age)

    @classmethod
    def from_columns(
        cls, reason: str, columns: Sequence[Any], *, score: float, relevance: float, weight: float
    ) -> TurnRow:
        """A row from the values of ``_COLUMNS``, in that order."""
        return cls(
            reason=reason,
            id=int(columns[0]),
            owner_id=int(columns[1]),
            scope=columns[2],
            kind=columns[3],
            key=columns[4],
            value=columns[5],
            text=columns[6],
            confidence=float(columns[7]),
            pinned=bool(columns[8]),
            kinds=str(columns[9] or ""),
            shared=bool(columns[10]),
            score=score,
            relevance=relevance,
            weight=weight,
        )


@dataclass(frozen=True)
class Whose:
    """Whose memory a turn may read: these people's personal memory (everywhere, and in the
    workspace) unless they switched memory off, and the workspace's team memory.

    With ``private_ids`` given, only those people's unshared items are readable; everyone
    else's personal memory only where they shared it ("share with my workspaces"). A turn
    passes its requester: a reply others read never carries someone else's unshared memory."""

    person_ids: tuple[int, ...]
    workspace_id: int | None
    private_ids: tuple[int, ...] | None = None

    def _shared_only(self, pk: int) -> str:
        return "" if self.private_ids is None or pk in self.private_ids else " AND i.shared"

    def branches(self) -> list[tuple[str, list[Any]]]:
        """One predicate per (scope, owner) over ``i``; each can walk an index in id order."""
        branches: list[tuple[str, list[Any]]] = []
        for pk in self.person_ids:
            # workspace_id IS NULL (always true of personal items) lets the index
            # (owner, scope, workspace, id) yield the newest first without sorting.
            only = self._shared_only(pk)
            branches.append(
                ("i.owner_id = %s AND i.scope = 'personal' AND i.workspace_id IS NULL" + only, [pk])
            )
            if self.workspace_id is not None:
                branches.append(
                    (
                        "i.scope = 'workspace' AND i.owner_id = %s AND i.workspace_id = %s" + only,
                        [pk, self.workspace_id],
                    )
                )
        if self.workspace_id is not None:
            branches.append(("i.scope = 'team' AND i.workspace_id = %s", [self.workspace_id]))
        return branches

    def memory_on(self) -> tuple[str, list[Any]]:
        """People who switched memory off lose their personal memory (one look-up per query)."""
        if not self.person_ids:
            return "1 = 1", []
        marks = ", ".join(["%s"] * len(self.person_ids))
        return (
            f"(i.scope = 'team' OR i.owner_id NOT IN (SELECT s.user_id FROM "  # noqa: S608
            f"memory_memorysettings s WHERE NOT s.enabled AND s.user_id IN ({marks})))",
            list(self.person_ids),
        )

    def predicate(self) -> tuple[str, list[Any]]:
        """All branches OR-ed, active items only, memory switched on."""
        branches = self.branches()
        if not branches:
            return "1 = 0", []
        on, on_params = self.memory_on()
        sql = " OR ".join(f"({where})" for where, _ in branches)
        params = [p for _, ps in branches for p in ps]
        return f"i.status = 'active' AND ({sql}) AND {on}", [*params, *on_params]

    def tags(self) -> list[str]:
        tags = [personal_tag(pk) for pk in self.person_ids]
        if self.workspace_id is not None:
            tags += [workspace_tag(self.workspace_id, pk) for pk in self.person_ids]
            tags.append(team_tag(self.workspace_id))
        return tags


def turn_rows(
    whose: Whose, query: str, *, now: datetime, limit: int, profile_limit: int = PROFILE_MAX_ROWS
) -> list[TurnRow]:
    """The structured profile (keyed or pinned items, newest first, at most ``profile_limit``)
    and the ``limit`` best other items matching ``query`` (of the newest ``CANDIDATES``
    matches, best first), in one statement of hand-written SQL (no ORM query building on this
    path)."""
    where, params = whose.predicate()
    profile_sql = (
        f"SELECT 'profile' AS reason, {_COLUMNS}, 1.0 AS score, 1.0 AS relevance, 1.0 AS weight "  # noqa: S608
        f"FROM {_ITEM} i "
        # The same condition as the partial profile index (models.PROFILE).
        f"WHERE {where} AND (i.\"key\" > '' OR i.pinned) "
        "ORDER BY i.pinned DESC, i.confirmed_at DESC, i.id DESC LIMIT %s"
    )
    # Every piece is constant SQL of this module; every value is a parameter.
    statement = f"SELECT * FROM ({profile_sql}) p"  # noqa: S608
    all_params: list[Any] = [*params, profile_limit]
    words = terms(query)
    if words and limit > 0 and whose.branches():
        stamp = connection.ops.adapt_datetimefield_value(now)
        relevant_sql, relevant_params = (
            _relevant_postgres(whose, words, stamp, limit)
            if connection.vendor == "postgresql"
            else _relevant_sqlite(whose, words, stamp, limit)
        )
        statement += f" UNION ALL SELECT * FROM ({relevant_sql}) r"  # noqa: S608
        all_params += relevant_params
    with connection.cursor() as cursor:
        cursor.execute(statement, all_params)
        rows = cursor.fetchall()
    profile = [row for row in rows if row[0] == "profile"]
    n = N_COLUMNS
    relevant = sorted(
        (row for row in rows if row[0] != "profile"), key=lambda r: (-r[n + 1], -r[1])
    )
    return [
        TurnRow.from_columns(
            row[0],
            row[1 : n + 1],
            score=float(row[n + 1]),
            relevance=float(row[n + 2]),
            weight=float(row[n + 3]),
        )
        for row in [*profile, *relevant]
    ]


_NOT_PROFILE = "i.\"key\" = '' AND NOT i.pinned"


def _ranked(candidates: str, relevance: str) -> str:
    """Rank ``candidates`` (rows with ``id``, ``confidence``, ``confirmed_at`` and the columns
    ``relevance`` reads) by ``relevance * scoring.weight(confidence, age)``, the relevance
    scaled to the best candidate's. Parameters in order: now, then those of ``relevance`` and
    ``candidates``, then the limit.

    On Postgres ``OFFSET 0`` keeps the relevance a computed column: otherwise the planner
    inlines it and computes ``ts_rank`` twice (for the value and for the window)."""
    if connection.vendor == "postgresql":
        # float8 throughout: EXTRACT returns numeric, and numeric POWER costs ~10 µs a row.
        age = "GREATEST(0, EXTRACT(EPOCH FROM (%s - c.confirmed_at))::float8 / 86400)"
        fence = " OFFSET 0"
    else:
        age = "MAX(0, julianday(%s) - julianday(c.confirmed_at))"
        fence = ""  # the hits are already a column of the candidates
    weight = scoring.weight_sql("c.confidence", age)
    # Only ids and numbers go through the ranking; the best rows' text is read at the end.
    join = "JOIN" if connection.vendor == "postgresql" else "CROSS JOIN"  # SQLite: s first
    return (
        f"SELECT 'relevant' AS reason, {_COLUMNS}, s.score, s.relevance, s.weight FROM ("  # noqa: S608
        "SELECT w.id, w.relevance * w.weight AS score, w.relevance, w.weight FROM ("
        f"SELECT c.id, c.rel / MAX(c.rel) OVER () AS relevance, {weight} AS weight FROM ("
        f"SELECT m.*, {relevance} AS rel FROM ({candidates}) m{fence}"
        ") c) w ORDER BY 2 DESC, 1 DESC LIMIT %s"
        f") s {join} {_ITEM} i ON i.id = s.id"
    )


def _relevant_postgres(
    whose: Whose, words: list[str], now: Any, limit: int
) -> tuple[str, list[Any]]:
    # One branch per (scope, owner), each its newest CANDIDATES matches: a walk of the partial
    # (owner, scope, workspace, id) index in id order when the words are common, the GIN index
    # when they are rare (the planner knows which from the column's statistics); then the
    # newest CANDIDATES of all branches are ranked.
    on, on_params = whose.memory_on()
    tsquery = "websearch_to_tsquery('english'::regconfig, %s)"
    text_query = " or ".join(words)
    parts, params = [], []
    for branch, branch_params in whose.branches():
        parts.append(
            "(SELECT i.id, i.confidence, i.confirmed_at, i.search_vector "  # noqa: S608
            f"FROM {_ITEM} i WHERE i.status = 'active' AND {branch} AND {on} "
            f"AND {_NOT_PROFILE} AND i.search_vector @@ {tsquery} ORDER BY i.id DESC LIMIT %s)"
        )
        params += [*branch_params, *on_params, text_query, CANDIDATES]
    union = " UNION ALL ".join(parts)
    candidates = f"SELECT * FROM ({union}) u ORDER BY id DESC LIMIT %s"  # noqa: S608
    relevance = f"GREATEST(ts_rank(m.search_vector, {tsquery}), 1e-6)"
    sql = _ranked(candidates, relevance)
    return sql, [now, text_query, *params, CANDIDATES, limit]


def _relevant_sqlite(whose: Whose, words: list[str], now: Any, limit: int) -> tuple[str, list[Any]]:
    # FTS5 yields matches newest first without sorting and is narrowed by the tags of whose
    # memory this is, so only the newest CANDIDATES matches are joined and scored. CROSS JOIN
    # makes SQLite read the matches first (a plain JOIN may run MATCH once per item instead).
    where, params = whose.predicate()
    quoted = " OR ".join('"' + word.replace('"', '""') + '"' for word in words)
    match = "tags : (" + " OR ".join(whose.tags()) + ') AND {"text" "key" "value"} : ('
    match += quoted + ")"
    candidates = (
        f"SELECT i.id, i.confidence, i.confirmed_at, {SQLITE_HITS} AS hits "  # noqa: S608
        "FROM memory_item_fts "
        f"CROSS JOIN {_ITEM} i ON i.id = memory_item_fts.rowid "
        f"WHERE memory_item_fts MATCH %s AND {where} AND {_NOT_PROFILE} "
        "ORDER BY memory_item_fts.rowid DESC LIMIT %s"
    )
    sql = _ranked(candidates, "MAX(m.hits, 1e-6)")
    return sql, [now, match, *params, CANDIDATES, limit]
