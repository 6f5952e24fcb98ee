"""Reads for the turn traces: lists of model calls and turns with filters, and one turn's whole
trace. Every list is one query (joins and EXISTS sub-selects, never a query per row) and pages by
keyset on the primary key, so page 10,000 costs what page 1 costs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from time import monotonic
from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import connection
from django.db.models import Count, Exists, OuterRef, Q, QuerySet, Subquery
from django.db.models.expressions import RawSQL
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Coalesce, Substr
from django.http import Http404
from django.utils import timezone

from agents.models import (
    Action,
    Agent,
    Feedback,
    ModelCall,
    Question,
    Suggestion,
    Turn,
    TurnStatus,
)
from agents.review.privacy import TraceMemory, redact_memory_data, trace_memory_for
from agents.review.selectors import ReviewScope

PAGE_SIZE = 50
DECIDED_SUGGESTIONS = (
    Suggestion.Status.ACCEPTED,
    Suggestion.Status.EDITED,
    Suggestion.Status.REJECTED,
)


@dataclass(frozen=True)
class TraceFilter:
    workspace: int | None = None
    task: int | None = None
    agent: int | None = None
    model: str = ""
    status: str = ""
    decision: str = ""
    policy: str = ""
    since: date | None = None
    until: date | None = None
    has_feedback: bool | None = None
    has_error: bool | None = None
    q: str = ""


@dataclass
class TracePage:
    rows: list[Any]
    next_before: str | None
    filters: TraceFilter = field(default_factory=TraceFilter)


Cursor = tuple[datetime, int]


def encode_cursor(created_at: datetime, pk: int) -> str:
    """Where the next page starts: the last row's time (µs since the epoch) and id."""
    micros = int(created_at.timestamp()) * 1_000_000 + created_at.microsecond
    return f"{micros}.{pk}"


def decode_cursor(value: str) -> Cursor:
    micros, _, pk = value.partition(".")
    if not (micros.isdigit() and pk.isdigit()):
        raise ValueError("Not a page cursor.")
    moment = datetime.fromtimestamp(int(micros) // 1_000_000, tz=UTC)
    return moment.replace(microsecond=int(micros) % 1_000_000), int(pk)


def _keyset_page(
    values: QuerySet[Any], before: Cursor | None, limit: int
) -> tuple[list[Any], str | None]:
    """Newest first by (created_at, id), the order of the (created_at, id) indexes: a date range
    is an index range, and a later page starts where the previous one ended."""
    if before is not None:
        moment, pk = before
        values = values.filter(created_at__lte=moment).exclude(created_at=moment, id__gte=pk)
    rows = list(values.order_by("-created_at", "-id")[: limit + 1])
    if len(rows) <= limit:
        return rows, None
    last = rows[limit - 1]
    return rows[:limit], encode_cursor(last["created_at"], last["id"])


def _day_start(day: date) -> datetime:
    return timezone.make_aware(datetime.combine(day, time.min), timezone.get_current_timezone())


# A search the planner expects to match at most this share of all calls reads the matches
# from the full-text index first; a commoner one walks the newest calls and stops at a page's
# worth. Measured on a million calls (bench/review.py): reading a match through the index costs
# about 30 µs, testing a row on the walk about 20 µs, so the two meet near 0.6%. Words the
# statistics have never seen are estimated at 0.5% or less: rare, so they use the index.
SELECTIVE_SEARCH_SHARE = 0.006
FTS_MATCH = (
    "to_tsvector('simple'::regconfig, coalesce(response, '') || ' ' || messages::text) "
    "@@ plainto_tsquery('simple'::regconfig, %s)"
)
_table_rows: dict[str, tuple[float, float]] = {}  # table -> (rows, when read)
TABLE_ROWS_TTL = 600.0


def _estimated_share(q: str) -> float:
    """Postgres's own estimate (from the index expression's statistics) of the share of calls
    that match ``q``: words it has seen often are estimated well; unseen words are rare."""
    table = ModelCall._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN (FORMAT JSON) SELECT 1 FROM {table} WHERE {FTS_MATCH}", [q])  # noqa: S608
        plan = cursor.fetchone()[0]
        rows, read_at = _table_rows.get(table, (0.0, 0.0))
        if monotonic() - read_at > TABLE_ROWS_TTL:
            cursor.execute("SELECT reltuples FROM pg_class WHERE oid = %s::regclass", [table])
            rows = float(cursor.fetchone()[0])
            _table_rows[table] = (rows, monotonic())
    if isinstance(plan, str):
        plan = json.loads(plan)
    return float(plan[0]["Plan"]["Plan Rows"]) / max(rows, 1.0)


def _search_sql(q: str, *, column: str) -> RawSQL:
    """Ids (``column`` is ``id`` or ``turn_id``, never user input) of the model calls whose
    prompt or response matches ``q``: full-text on Postgres (GIN index), LIKE elsewhere."""
    table = ModelCall._meta.db_table
    if connection.vendor == "postgresql":
        if _estimated_share(q) <= SELECTIVE_SEARCH_SHARE:
            # MATERIALIZED: planned on its own, so the GIN index answers it, instead of a walk
            # of the whole table in id order hoping to meet a page of matches soon.
            sql = (
                f"WITH matches AS MATERIALIZED (SELECT {column} FROM {table} "  # noqa: S608
                f"WHERE {FTS_MATCH}) SELECT {column} FROM matches"
            )
        else:
            sql = f"SELECT {column} FROM {table} WHERE {FTS_MATCH}"  # noqa: S608
        return RawSQL(sql, [q])  # noqa: S611 (the query text is a parameter)
    escaped = q.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    pattern = f"%{escaped}%"
    sql = (
        f"SELECT {column} FROM {table} WHERE response LIKE %s ESCAPE '\\' "  # noqa: S608
        "OR messages LIKE %s ESCAPE '\\'"
    )
    return RawSQL(sql, [pattern, pattern])  # noqa: S611 (the pattern is a parameter)


def given_feedback() -> QuerySet[Feedback]:
    """Feedback rows that say something (a rating, a comment or "unnecessary"): a row whose
    rating was clicked away and that has nothing else is kept for the bandit, not shown."""
    return Feedback.objects.exclude(rating="", comment="", unnecessary_question=False)


def _feedback_exists(turn_ref: str) -> Q:
    """People rated something the turn produced (an EXISTS on the indexed turn column)."""
    return Q(Exists(given_feedback().filter(turn=OuterRef(turn_ref))))


def _feedback_count(**condition: Any) -> Coalesce:
    counted = (
        Feedback.objects.filter(turn=OuterRef("pk"), **condition)
        .order_by()
        .values("turn")
        .annotate(n=Count("pk"))
        .values("n")
    )
    return Coalesce(Subquery(counted), 0)


def _turn_filters(filters: TraceFilter, *, prefix: str) -> Q:
    """Conditions on the turn (``prefix`` is ``"turn__"`` from a model call, ``""`` on turns)."""
    q = Q()
    if filters.task is not None:
        q &= Q(**{f"{prefix}task_id": filters.task})
    if filters.status:
        q &= Q(**{f"{prefix}status": filters.status})
    if filters.decision:
        q &= Q(**{f"{prefix}policy_decision__decision": filters.decision})
    if filters.policy:
        q &= Q(**{f"{prefix}policy_name": filters.policy})
    return q


def _date_filters(filters: TraceFilter) -> Q:
    q = Q()
    if filters.since is not None:
        q &= Q(created_at__gte=_day_start(filters.since))
    if filters.until is not None:
        q &= Q(created_at__lt=_day_start(filters.until + timedelta(days=1)))
    return q


CALL_COLUMNS = (
    "id",
    "created_at",
    "provider",
    "model",
    "purpose",
    "tokens_in",
    "tokens_out",
    "latency_ms",
    "cost",
    "error",
    "agent__name",
    "turn_id",
    "turn__status",
    "turn__policy_name",
    "turn__task__title",
    "turn__task__workspace__name",
)


def list_model_calls(
    *,
    scope: ReviewScope,
    filters: TraceFilter,
    before: Cursor | None = None,
    limit: int = PAGE_SIZE,
) -> TracePage:
    """A page of model calls, newest first, in one query."""
    workspace_id = scope.workspace_id or filters.workspace
    calls: QuerySet[ModelCall] = ModelCall.objects.all()
    if workspace_id is not None:
        calls = calls.filter(agent__workspace_id=workspace_id)
    if filters.agent is not None:
        calls = calls.filter(agent_id=filters.agent)
    if filters.model:
        calls = calls.filter(model=filters.model)
    calls = calls.filter(_turn_filters(filters, prefix="turn__") & _date_filters(filters))
    if filters.has_error is True:
        calls = calls.filter(~Q(error="") | Q(turn__status=TurnStatus.FAILED))
    elif filters.has_error is False:
        calls = calls.filter(error="").exclude(turn__status=TurnStatus.FAILED)
    feedback = _feedback_exists("turn_id")
    if filters.has_feedback is True:
        calls = calls.filter(feedback)
    elif filters.has_feedback is False:
        calls = calls.exclude(feedback)
    if filters.q:
        calls = calls.filter(id__in=_search_sql(filters.q, column="id"))
    # Plain rows, not model instances: no JSON decoding of whole policy records, no deferred
    # model classes; the page reads only these columns.
    values = calls.annotate(
        response_preview=Substr("response", 1, 140),
        decision=KeyTextTransform("decision", "turn__policy_decision"),
    ).values(*CALL_COLUMNS, "response_preview", "decision")
    rows, next_before = _keyset_page(values, before, limit)
    return TracePage(rows=rows, next_before=next_before, filters=filters)


TURN_COLUMNS = (
    "id",
    "created_at",
    "trigger",
    "status",
    "policy_name",
    "model",
    "model_label",
    "tokens_in",
    "tokens_out",
    "cost",
    "agent__name",
    "task__title",
    "task__workspace__name",
)


def list_turns(
    *,
    scope: ReviewScope,
    filters: TraceFilter,
    before: Cursor | None = None,
    limit: int = PAGE_SIZE,
) -> TracePage:
    """A page of turns, newest first, in one query (totals are stored on the turn)."""
    workspace_id = scope.workspace_id or filters.workspace
    turns: QuerySet[Turn] = Turn.objects.all()
    if workspace_id is not None:
        turns = turns.filter(task__workspace_id=workspace_id)
    if filters.agent is not None:
        turns = turns.filter(agent_id=filters.agent)
    if filters.model:
        turns = turns.filter(model=filters.model)
    turns = turns.filter(_turn_filters(filters, prefix="") & _date_filters(filters))
    if filters.has_error is True:
        turns = turns.filter(
            Q(status=TurnStatus.FAILED)
            | Exists(ModelCall.objects.filter(turn=OuterRef("pk")).exclude(error=""))
        )
    elif filters.has_error is False:
        turns = turns.exclude(status=TurnStatus.FAILED).exclude(
            Exists(ModelCall.objects.filter(turn=OuterRef("pk")).exclude(error=""))
        )
    feedback = _feedback_exists("pk")
    if filters.has_feedback is True:
        turns = turns.filter(feedback)
    elif filters.has_feedback is False:
        turns = turns.exclude(feedback)
    if filters.q:
        turns = turns.filter(id__in=_search_sql(filters.q, column="turn_id"))
    values = turns.annotate(
        decision_value=KeyTextTransform("decision", "policy_decision"),
        failed_hint=Substr("error", 1, 80),
        decided_suggestions=Exists(
            Suggestion.objects.filter(turn=OuterRef("pk"), status__in=DECIDED_SUGGESTIONS)
        ),
        answered_questions=Exists(
            Question.objects.filter(turn=OuterRef("pk"), status=Question.Status.ANSWERED)
        ),
        thumbs_up=_feedback_count(rating=Feedback.Rating.UP),
        thumbs_down=_feedback_count(rating=Feedback.Rating.DOWN),
        unnecessary=_feedback_count(unnecessary_question=True),
        commented=Exists(Feedback.objects.filter(turn=OuterRef("pk")).exclude(comment="")),
    ).values(
        *TURN_COLUMNS,
        "decision_value",
        "failed_hint",
        "decided_suggestions",
        "answered_questions",
        "thumbs_up",
        "thumbs_down",
        "unnecessary",
        "commented",
    )
    rows, next_before = _keyset_page(values, before, limit)
    return TracePage(rows=rows, next_before=next_before, filters=filters)


def filter_choices(scope: ReviewScope) -> dict[str, list[Any]]:
    """Values for the filter form's selects (small tables only; never a scan of model calls)."""
    agents = Agent.objects.select_related("workspace").order_by("workspace__name", "name")
    if scope.workspace is not None:
        agents = agents.filter(workspace=scope.workspace)
    return {"agents": list(agents)}


@dataclass(frozen=True)
class TurnTrace:
    turn: Turn
    calls: list[ModelCall]
    actions: list[Action]
    suggestions: list[Suggestion]
    questions: list[Question]
    memory_ids: list[int]
    feedback: list[Feedback] = field(default_factory=list)
    memory: TraceMemory = field(default_factory=TraceMemory)


def _withhold_memory(turn: Turn, calls: list[ModelCall], memory: TraceMemory) -> None:
    """Replace the withheld memory in what the page shows of the turn and its model calls.
    These instances are the page's own copies: they are rendered, never saved."""
    if not memory.withheld:
        return
    turn.context = redact_memory_data(turn.context, memory)
    turn.inputs = redact_memory_data(turn.inputs, memory)
    turn.policy_decision = redact_memory_data(turn.policy_decision, memory)
    turn.decision = redact_memory_data(turn.decision, memory)
    turn.error = redact_memory_data(turn.error, memory)
    for call in calls:
        call.messages = redact_memory_data(call.messages, memory)
        call.response = redact_memory_data(call.response, memory)
        call.error = redact_memory_data(call.error, memory)


def get_turn_trace(*, scope: ReviewScope, turn_id: int, viewer: AbstractBaseUser) -> TurnTrace:
    """One turn's whole trace as ``viewer`` may see it: other people's unshared memory is
    withheld (``privacy.trace_memory_for``); ``memory.read_of`` names the people whose memory
    a staff viewer is shown, which the caller records as admin reads."""
    turns = Turn.objects.select_related(
        "agent", "agent__model_profile", "task__workspace", "requested_by"
    )
    if scope.workspace is not None:
        turns = turns.filter(task__workspace=scope.workspace)
    turn = turns.filter(pk=turn_id).first()
    if turn is None:
        raise Http404("No such turn.")
    context = turn.context if isinstance(turn.context, dict) else {}
    memory_ids = [int(i) for i in context.get("memory_item_ids", []) if str(i).isdigit()]
    memory = trace_memory_for(context, viewer)
    calls = list(turn.model_calls.order_by("id"))
    _withhold_memory(turn, calls, memory)
    return TurnTrace(
        turn=turn,
        calls=calls,
        memory=memory,
        actions=list(turn.actions.order_by("index")),
        suggestions=list(turn.suggestions.select_related("decided_by").order_by("id")),
        questions=list(turn.questions.select_related("answered_by").order_by("id")),
        memory_ids=memory_ids,
        feedback=list(
            given_feedback()
            .filter(turn=turn)
            .select_related("user", "message", "question", "suggestion")
            .order_by("created_at", "id")
        ),
    )
