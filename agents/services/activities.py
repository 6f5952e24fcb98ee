"""What an outside program posts to its turn (issue 29): typed activities, each checked
before it is kept, and kept at most once per id.

The program's activities are not actions yet: the turn's producer
(``agents/engine/producers/outside.py``), which waits while the turn runs, streams the reply
chunks as they come and, once the program finishes, hands the others to the pipeline as the
turn's actions, which ``apply`` stores and applies at most once, as for any agent. Refused
activities are logged and kept as refused (an unauthenticated request is only logged).
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from agents.models import Activity, ActivityKind, Agent, AgentMode, Turn, TurnStatus
from agents.schemas import ACTIONS_MAX, FIND_MAX, TEXT_MAX
from agents.services.actions import validate_action
from collab.lib.errors import Conflict

log = logging.getLogger(__name__)

# The activities that become the turn's actions, and the action each becomes.
ACTION_OF: dict[str, str] = {
    ActivityKind.REPLY: "reply",
    ActivityKind.REPLY_CHUNK: "reply",
    ActivityKind.QUESTION: "ask",
    ActivityKind.SUGGESTION: "suggest",
    ActivityKind.EDIT: "edit",
    ActivityKind.NOTE: "note",
}
ENDS = (ActivityKind.FINISH, ActivityKind.ERROR)
NEEDS_TEXT = (
    ActivityKind.REPLY,
    ActivityKind.REPLY_CHUNK,
    ActivityKind.QUESTION,
    ActivityKind.NOTE,
    ActivityKind.ERROR,
)


def allowed_kinds(agent: Agent, turn: Turn) -> list[str]:
    """What the program may post to ``turn`` (the webhook's ``allowed`` list says so too)."""
    kinds = [str(k) for k in ActivityKind]
    if agent.mode != AgentMode.MAY_EDIT:
        kinds.remove(ActivityKind.EDIT)
    if turn.inputs.get("timed_out"):  # nobody answered its last question: no new one
        kinds.remove(ActivityKind.QUESTION)
    return kinds


def _seconds_left(turn: Turn) -> float:
    if turn.started_at is None:
        return float(settings.AGENTS_TURN_TIME_BUDGET_SECONDS)
    used = (timezone.now() - turn.started_at).total_seconds()
    return settings.AGENTS_TURN_TIME_BUDGET_SECONDS - used


def _check_turn(turn: Turn, accepted: list[Activity]) -> None:
    if turn.status == TurnStatus.CANCELLED:
        raise Conflict(f"The turn was stopped ({turn.error or 'cancelled'}); obey the Stop.")
    if any(a.kind in ENDS for a in accepted) or turn.status != TurnStatus.RUNNING:
        raise Conflict(f"The turn has ended ({turn.get_status_display().lower()}).")
    if _seconds_left(turn) <= 0:
        raise Conflict("The turn is out of time (AGENTS_TURN_TIME_BUDGET_SECONDS).")


def _check_activity(
    *, agent: Agent, turn: Turn, kind: str, payload: dict[str, Any], accepted: list[Activity]
) -> None:
    """Why the activity may not be kept: ``PermissionDenied`` for one the agent may not take,
    ``ValidationError`` (field reasons) for nonsense."""
    if kind not in ActivityKind.values:
        raise ValidationError({"type": f"Unknown activity type {kind!r}."})
    if kind not in allowed_kinds(agent, turn):
        if kind == ActivityKind.EDIT:
            raise PermissionDenied(
                f"{agent.name} may not edit the document directly (its mode is suggest only): "
                "post a suggestion."
            )
        raise PermissionDenied("No new question after a question timed out: go ahead or finish.")
    errors: dict[str, list[str]] = {}
    text = str(payload.get("text", ""))
    if kind in NEEDS_TEXT and not text.strip():
        errors["text"] = ["This activity needs a text."]
    if len(text) > TEXT_MAX:
        errors["text"] = [f"Keep it under {TEXT_MAX} characters."]
    if len(str(payload.get("find", ""))) > FIND_MAX:
        errors["find"] = [f"Keep it under {FIND_MAX} characters."]
    if len(str(payload.get("replace", ""))) > TEXT_MAX:
        errors["replace"] = [f"Keep it under {TEXT_MAX} characters."]
    if kind == ActivityKind.REPLY_CHUNK:
        streamed = sum(len(a.payload.get("text", "")) for a in accepted if a.kind == kind)
        if streamed + len(text) > TEXT_MAX:
            errors["text"] = [f"The streamed reply may be at most {TEXT_MAX} characters."]
    if kind in (ActivityKind.SUGGESTION, ActivityKind.EDIT) and not errors:
        problem = validate_action(turn=turn, kind=ACTION_OF[kind], payload=payload)
        if problem:
            errors["find" if "text to replace" in problem else "__all__"] = [problem]
    if kind in ACTION_OF and _action_count(accepted, adding=kind) > ACTIONS_MAX:
        errors["__all__"] = [
            f"At most {ACTIONS_MAX} replies, questions, suggestions, edits and notes per turn."
        ]
    if errors:
        raise ValidationError(errors)


def _action_count(accepted: list[Activity], *, adding: str) -> int:
    kinds = [a.kind for a in accepted if a.kind in ACTION_OF] + [adding]
    chunks = ActivityKind.REPLY_CHUNK in kinds
    return len([k for k in kinds if k != ActivityKind.REPLY_CHUNK]) + int(chunks)


def record_activity(
    *, agent: Agent, turn_id: int, activity_id: str, kind: str, payload: dict[str, Any]
) -> Activity:
    """Keep one activity of ``agent``'s program for its turn ``turn_id``, or refuse it:
    ``Turn.DoesNotExist`` (not its turn), ``Conflict`` (a replayed id; the turn was stopped,
    has ended or is out of time), ``PermissionDenied``, ``ValidationError``. A refusal is
    logged and kept as a refused activity."""
    fields = {k: str(payload[k]) for k in ("text", "find", "replace") if payload.get(k)}
    try:
        with transaction.atomic():
            turn = (
                Turn.objects.select_for_update(of=("self",))
                .select_related("agent")
                .filter(pk=turn_id, agent=agent)
                .first()
            )
            if turn is None:
                raise Turn.DoesNotExist
            accepted = list(Activity.objects.filter(turn=turn, status=Activity.Status.ACCEPTED))
            if Activity.objects.filter(
                agent=agent, activity_id=activity_id, status=Activity.Status.ACCEPTED
            ).exists():
                raise Conflict(f"Activity {activity_id} was already received: nothing was redone.")
            _check_turn(turn, accepted)
            _check_activity(agent=agent, turn=turn, kind=kind, payload=fields, accepted=accepted)
            return Activity.objects.create(
                agent=agent,
                turn=turn,
                activity_id=activity_id,
                kind=kind,
                payload=fields,
                status=Activity.Status.ACCEPTED,
            )
    except IntegrityError:  # the same id twice at once: the other one was kept
        _refused(agent, turn_id, activity_id, kind, fields, "a replayed id")
        raise Conflict(
            f"Activity {activity_id} was already received: nothing was redone."
        ) from None
    except Turn.DoesNotExist:
        log.warning(
            "outside agent %s: activity %s for turn %s refused: not its turn",
            agent.pk,
            activity_id,
            turn_id,
        )
        raise
    except (Conflict, PermissionDenied, ValidationError) as exc:
        reason = "; ".join(getattr(exc, "messages", [str(exc)]))
        _refused(agent, turn_id, activity_id, kind, fields, reason)
        raise


def _refused(
    agent: Agent, turn_id: int, activity_id: str, kind: str, payload: dict[str, Any], reason: str
) -> None:
    log.warning(
        "outside agent %s: activity %s (%s) for turn %s refused: %s",
        agent.pk,
        activity_id,
        kind,
        turn_id,
        reason,
    )
    Activity.objects.create(
        agent=agent,
        turn_id=turn_id,
        activity_id=activity_id[:100],
        kind=kind if kind in ActivityKind.values else "",
        payload=payload,
        status=Activity.Status.REFUSED,
        reason=reason[:500],
    )


def refuse_unauthenticated(*, turn_id: int, reason: str) -> None:
    """A request that proved no agent (bad token or signature): logged, never stored."""
    log.warning("outside activity for turn %s refused: %s", turn_id, reason)
