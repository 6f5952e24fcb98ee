"""The first stage, claim: at most one running turn per agent and task (a partial unique
constraint), held by a lease its worker renews while it works; a turn whose lease ran out (its
worker died) is taken over by the next delivery. A turn not yet decided is also held to the
workspace's monthly spending limit and to its own wall-clock budget (``lease``)."""

from __future__ import annotations

import logging
from contextlib import nullcontext
from dataclasses import dataclass

from django.db import IntegrityError, connection, transaction
from django.db.models import Exists
from django.utils import timezone

from agents import profiles
from agents.engine.lease import lease_expiry, out_of_time_message, seconds_left
from agents.engine.outcome import Outcome
from agents.models import FINAL_STATUSES, ModelProfile, Turn, TurnStatus
from agents.models.outside import outside_of
from agents.outbox import events
from agents.review.usage import check_budget
from agents.services import turns as turn_services

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Claim:
    """A claimed turn (``outcome`` None), or why this delivery does not run it."""

    turn: Turn | None
    outcome: Outcome | None
    profile: ModelProfile | None = None  # the turn's resolved model profile, once claimed

    def summary(self) -> str:
        if self.turn is None:
            return str(self.outcome)
        resumed = " (decided by an earlier delivery)" if self.turn.decision is not None else ""
        return f"attempt {self.turn.attempts}, {self.turn.model_label or self.turn.model}{resumed}"


def claim(turn_id: int) -> Claim:
    """The claim stage: ``claim_turn``, then the limits a turn not yet decided must be within
    (a redelivery after its decision only applies what is stored). ``outcome`` says why this
    delivery does not run the turn; a turn over a limit is failed."""
    claimed = claim_turn(turn_id)
    turn = claimed.turn
    if turn is None or claimed.profile is None or turn.decision is not None:
        return claimed
    review = getattr(turn.task.workspace, "review_settings", None)  # loaded by the claim
    if review is not None and review.monthly_budget is not None:
        budget = check_budget(turn.task.workspace_id)
        if budget.blocked:  # the workspace's monthly hard stop (agents/review/usage.py)
            turn_services.fail_turn(turn_id=turn_id, error=budget.message)
            return Claim(None, Outcome.OVER_BUDGET)
    if seconds_left(turn) <= 0:  # a retry that came too late
        turn_services.fail_turn(turn_id=turn_id, error=out_of_time_message())
        return Claim(None, Outcome.FAILED)
    return claimed


def answered_by(turn: Turn, profile: ModelProfile) -> dict[str, str]:
    """The claimed turn's ``provider``, ``model`` and ``model_label``: an outside (webhook,
    pull or A2A) agent's own, so that a turn stopped or failed before its program answered is
    not labelled as the model profile's (the embedded model); otherwise the profile's."""
    row = outside_of(turn.agent)  # joined by the claim's query
    if row is not None:
        return row.turn_fields()
    return {"provider": profile.provider, "model": profile.model, "model_label": profile.label}


_CLAIM_RELATED = (
    "agent",
    "agent__model_profile",
    "agent__outside",  # whether a program outside Collab produces its turns, without a query
    "task",
    "task__workspace",
    "task__workspace__review_settings",  # the budget check needs no query when none is set
    "requested_by",
)


def claim_turn(turn_id: int) -> Claim:
    """Mark the turn running: the common case (a queued turn, no other turn of its agent
    running on the task) is one read and one conditional UPDATE; everything else (a redelivery,
    a lease to take over, a blocker, a switched-off agent) takes the locked path below."""
    turn = Turn.objects.select_related(*_CLAIM_RELATED).filter(pk=turn_id).first()
    if turn is None:
        return Claim(None, Outcome.MISSING)
    if turn.status == TurnStatus.QUEUED and turn.agent.is_active:
        profile = profiles.resolve_profile(turn.agent.model_profile)
        now = timezone.now()
        running_sibling = Turn.objects.filter(
            agent_id=turn.agent_id, task_id=turn.task_id, status=TurnStatus.RUNNING
        )
        claimed = {
            "status": TurnStatus.RUNNING,
            "attempts": turn.attempts + 1,
            "lease_expires_at": lease_expiry(),
            "started_at": turn.started_at or now,
            **answered_by(turn, profile),
            "policy_name": turn.agent.policy_name,
        }
        # One statement needs no transaction of its own; inside a caller's transaction, a
        # savepoint keeps a lost race from aborting it.
        guard = transaction.atomic() if connection.in_atomic_block else nullcontext()
        try:
            with guard:
                updated = (
                    Turn.objects.filter(
                        pk=turn_id, status=TurnStatus.QUEUED, attempts=turn.attempts
                    )
                    .exclude(Exists(running_sibling))
                    .update(**claimed)
                )
        except IntegrityError:  # a sibling was claimed between the two statements
            updated = 0
        if updated:
            for name, value in claimed.items():
                setattr(turn, name, value)
            transaction.on_commit(lambda: events.turn_changed(turn_id, turn=turn))
            return Claim(turn, None, profile)
    return _claim_locked(turn_id)


def _claim_locked(turn_id: int) -> Claim:
    with transaction.atomic():
        turn = (
            Turn.objects.select_for_update(of=("self",))
            .select_related(*_CLAIM_RELATED)
            .filter(pk=turn_id)
            .first()
        )
        if turn is None:
            return Claim(None, Outcome.MISSING)
        if turn.status in (*FINAL_STATUSES, TurnStatus.WAITING):
            return Claim(None, Outcome.ALREADY_ENDED)
        now = timezone.now()
        if turn.status == TurnStatus.RUNNING:
            if turn.lease_expires_at and turn.lease_expires_at > now:
                return Claim(None, Outcome.RUNNING_ELSEWHERE)
            log.warning("turn %s: lease expired, taking it over", turn.pk)
        else:
            blocker = (
                Turn.objects.filter(agent=turn.agent, task=turn.task, status=TurnStatus.RUNNING)
                .exclude(pk=turn.pk)
                .first()
            )
            if blocker is not None:
                # The blocker enqueues the next queued turn when it ends. If its worker died,
                # wake its own redelivery now rather than waiting for the broker to notice.
                if blocker.lease_expires_at is None or blocker.lease_expires_at <= now:
                    transaction.on_commit(lambda: turn_services.enqueue_turn(blocker.pk))
                return Claim(None, Outcome.BLOCKED)
        if not turn.agent.is_active:
            turn.status = TurnStatus.CANCELLED
            turn.error = "The agent was switched off."
            turn.finished_at = now
            turn.save(update_fields=["status", "error", "finished_at"])
            return Claim(None, Outcome.AGENT_INACTIVE)
        profile = profiles.resolve_profile(turn.agent.model_profile)
        turn.status = TurnStatus.RUNNING
        turn.attempts += 1
        turn.lease_expires_at = lease_expiry()
        turn.started_at = turn.started_at or now
        for name, value in answered_by(turn, profile).items():
            setattr(turn, name, value)
        turn.policy_name = turn.agent.policy_name
        claimed = [
            "status",
            "attempts",
            "lease_expires_at",
            "started_at",
            "provider",
            "model",
            "model_label",
            "policy_name",
        ]
        try:
            with transaction.atomic():
                turn.save(update_fields=claimed)
        except IntegrityError:
            return Claim(None, Outcome.BLOCKED)
        transaction.on_commit(lambda: events.turn_changed(turn_id, turn=turn))
    return Claim(turn, None, profile)
