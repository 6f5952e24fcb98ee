"""Retrieval by meaning, when an embedding model is configured (``MEMORY_EMBEDDING_*``).

Vectors are stored portably (``MemoryEmbedding``: float32 bytes, unit length) on both databases
and compared with numpy over a bounded set of each turn's candidates: the people's newest
``MEMORY_EMBEDDING_CANDIDATES`` items plus the full-text matches. Why not pgvector or sqlite-vec:
docs/adr/0006-memory-embeddings.md.

Hybrid relevance of an item:
``(1 - w) * fulltext + w * max(0, cosine)`` with ``w = MEMORY_EMBEDDING_WEIGHT`` (0.5), where
``fulltext`` is the full-text relevance scaled to the best match's (0 if the words do not
match); an item found by meaning alone needs ``cosine >= MEMORY_EMBEDDING_MIN_SIMILARITY``. The
score is that relevance times ``scoring.weight``, as without embeddings. With no embedding
model configured none of this runs.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np
from django.conf import settings
from django.db import connection, transaction
from langchain_core.embeddings import Embeddings

from agents import llm
from agents.llm.embeddings import EmbeddingProfile, build_embeddings, embedding_profile
from agents.memory import local_embeddings, queue, scoring, search
from agents.memory.models import MemoryEmbedding, MemoryItem, Status

log = logging.getLogger(__name__)


def profile() -> EmbeddingProfile | None:
    """The site's embedding model (``MEMORY_EMBEDDING_*``); ``None`` when switched off."""
    configured = embedding_profile()
    if configured is not None and configured.provider == "wordllama":
        return EmbeddingProfile(
            provider="wordllama",
            model=local_embeddings.CONFIG,
            dimensions=local_embeddings.DIMENSIONS,
        )
    return configured


def build(chosen: EmbeddingProfile) -> Embeddings:
    """The model for ``chosen``: the shipped WordLlama here, others by ``agents/llm/``."""
    if chosen.provider == "wordllama":
        return local_embeddings.WordLlamaEmbeddings()
    return build_embeddings(chosen)


def enabled() -> bool:
    return profile() is not None


def embedded_text(item: MemoryItem) -> str:
    """What is embedded: the readable text, with the structured form where there is one."""
    return f"{item.text} ({item.key}: {item.value})" if item.key else item.text


def text_hash(text: str, identity: str) -> str:
    return hashlib.sha256(f"{identity}\0{text}".encode()).hexdigest()


def to_bytes(vector: Sequence[float]) -> bytes:
    values = np.asarray(vector, dtype=np.float32)
    norm = float(np.linalg.norm(values))
    return (values / norm if norm > 0 else values).astype(np.float32).tobytes()


def from_bytes(raw: bytes | memoryview) -> np.ndarray:
    return np.frombuffer(bytes(raw), dtype=np.float32)


# --- Writing vectors (the job and the backfill command) ---------------------------------------


def embed_items(item_ids: Iterable[int]) -> int:
    """Embed these items if they are current and their text (or the model) changed since they
    were last embedded. Idempotent; the model call runs outside any transaction. Returns how
    many vectors were written."""
    site = profile()
    ids = sorted(set(item_ids))
    if site is None or not ids:
        return 0
    items = list(MemoryItem.objects.filter(pk__in=ids, status=Status.ACTIVE))
    stored = dict(
        MemoryEmbedding.objects.filter(item_id__in=ids, model=site.identity).values_list(
            "item_id", "text_hash"
        )
    )
    todo = []
    for item in items:
        text = embedded_text(item)
        digest = text_hash(text, site.identity)
        if stored.get(item.pk) != digest:
            todo.append((item.pk, text, digest))
    if not todo:
        return 0
    try:
        vectors = build(site).embed_documents([text for _, text, _ in todo])
    except local_embeddings.LocalEmbeddingError as exc:
        raise llm.ModelConfigError(str(exc)) from exc
    except Exception as exc:  # provider errors of any kind: the job retries
        raise llm.ModelError(f"Embedding failed: {type(exc).__name__}: {exc}") from exc
    with transaction.atomic():
        alive = set(
            MemoryItem.objects.filter(pk__in=[pk for pk, _, _ in todo]).values_list("pk", flat=True)
        )
        rows = [
            MemoryEmbedding(
                item_id=pk, model=site.identity, text_hash=digest, vector=to_bytes(vector)
            )
            for (pk, _, digest), vector in zip(todo, vectors, strict=True)
            if pk in alive  # deleted meanwhile ("forget everything")
        ]
        MemoryEmbedding.objects.bulk_create(
            rows,
            update_conflicts=True,
            unique_fields=["item"],
            update_fields=["model", "text_hash", "vector", "updated_at"],
        )
    return len(rows)


EMBED_JOB = "memory.embed_items"


def schedule(item_ids: Sequence[int]) -> None:
    """On commit, embed these items in a job (ids only). Nothing when no model is configured."""
    if not item_ids or not enabled():
        return
    queue.enqueue_on_commit(EMBED_JOB, list(item_ids))


def backfill(*, batch: int = 256) -> int:
    """Embed every current item that has no vector of the configured model (or a stale one)."""
    written = 0
    last = 0
    while True:
        ids = list(
            MemoryItem.objects.filter(status=Status.ACTIVE, pk__gt=last)
            .order_by("pk")
            .values_list("pk", flat=True)[:batch]
        )
        if not ids:
            return written
        written += embed_items(ids)
        last = ids[-1]


# --- Retrieval ---------------------------------------------------------------------------------


def _aware(value: Any) -> datetime:
    """A ``confirmed_at`` from raw SQL: an aware datetime (Postgres) or UTC text (SQLite)."""
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    parsed = datetime.fromisoformat(str(value))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _vectors(
    whose: search.Whose, identity: str, *, newest: int, also: Sequence[int]
) -> list[tuple[Any, ...]]:
    """``(id, vector)`` of the people's newest ``newest`` non-profile items and of the items
    ``also`` (the full-text matches, already known to be eligible), in one statement. The ids
    come first (one branch per (person, scope), each walking its index newest first, as the
    full-text search does), the vectors are then read by id: sorting rows that carry vectors
    cost several times more. Rows may repeat; items not embedded yet have no row."""
    on, on_params = whose.memory_on()
    parts, params = [], []
    for branch, branch_params in whose.branches():
        parts.append(
            f"SELECT * FROM (SELECT i.id FROM {search._ITEM} i "  # noqa: S608
            f"WHERE i.status = 'active' AND {branch} AND {on} AND {search._NOT_PROFILE} "
            "ORDER BY i.id DESC LIMIT %s) b"
        )
        params += [*branch_params, *on_params, newest]
    if not parts:
        return []
    union = " UNION ALL ".join(parts)
    ids = f"SELECT * FROM (SELECT * FROM ({union}) u ORDER BY id DESC LIMIT %s) r"  # noqa: S608
    params.append(newest)
    if also:
        marks = ", ".join(["%s"] * len(also))
        ids += f" UNION ALL SELECT id FROM {search._ITEM} WHERE id IN ({marks})"  # noqa: S608
        params += [*also]
    sql = (
        f"SELECT e.item_id, e.vector FROM ({ids}) n "  # noqa: S608
        "JOIN memory_memoryembedding e ON e.item_id = n.id WHERE e.model = %s"
    )
    params.append(identity)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def _rows_by_id(ids: Sequence[int], now: datetime) -> list[search.TurnRow]:
    """The fields of items found by meaning alone (at most ``limit`` of them)."""
    if not ids:
        return []
    marks = ", ".join(["%s"] * len(ids))
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {search._COLUMNS}, i.confirmed_at FROM {search._ITEM} i "  # noqa: S608
            f"WHERE i.id IN ({marks})",
            list(ids),
        )
        rows = cursor.fetchall()
    n = search.N_COLUMNS
    return [
        search.TurnRow.from_columns(
            "relevant",
            row[:n],
            score=0.0,
            relevance=0.0,
            weight=scoring.weight(float(row[7]), scoring.age_days(_aware(row[n]), now)),
        )
        for row in rows
    ]


def hybrid_rows(
    whose: search.Whose,
    query: str,
    fulltext: list[search.TurnRow],
    *,
    now: datetime,
    limit: int,
) -> list[search.TurnRow]:
    """The full-text matches and the items nearest in meaning, ranked together (see the module
    docstring), best first. Falls back to ``fulltext`` if the embedding model fails."""
    site = profile()
    if site is None or not query.strip():
        return fulltext
    try:
        query_vector = from_bytes(to_bytes(build(site).embed_query(query)))
    except Exception as exc:  # a provider failure must not fail the turn
        log.warning("Memory retrieval without embeddings this turn: %s", exc)
        return fulltext
    weight = float(settings.MEMORY_EMBEDDING_WEIGHT)
    floor = float(settings.MEMORY_EMBEDDING_MIN_SIMILARITY)
    matched = {row.id: row for row in fulltext}
    found = _vectors(
        whose,
        site.identity,
        newest=int(settings.MEMORY_EMBEDDING_CANDIDATES),
        also=sorted(matched),
    )
    size = query_vector.nbytes
    usable = [(int(pk), bytes(raw)) for pk, raw in found if len(raw) == size]
    cosine: dict[int, float] = {}
    if usable:
        matrix = np.frombuffer(b"".join(raw for _, raw in usable), dtype=np.float32)
        values = matrix.reshape(len(usable), -1) @ query_vector
        cosine = {pk: float(value) for (pk, _), value in zip(usable, values, strict=True)}

    def relevance(item_id: int) -> float:
        words = matched[item_id].relevance if item_id in matched else 0.0
        return (1 - weight) * words + weight * max(0.0, cosine.get(item_id, 0.0))

    # Best by meaning alone, as far as they could still make the cut (weights are <= 1).
    by_meaning = sorted(
        (pk for pk, value in cosine.items() if pk not in matched and value >= floor),
        key=lambda pk: -cosine[pk],
    )[:limit]
    rows = [*matched.values(), *_rows_by_id(by_meaning, now)]
    scored = []
    for row in rows:
        value = relevance(row.id)
        scored.append(
            search.TurnRow(**{**row.__dict__, "score": value * row.weight, "relevance": value})
        )
    scored.sort(key=lambda r: (-r.score, -r.id))
    return scored[:limit]
