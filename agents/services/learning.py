"""Persisted state of learning clarification policies (the contextual bandit) and how feedback
becomes a reward.

* Deciding: ``decide_with_state`` locks the workspace's (or, with ``Agent.learn_per_person``,
  the requesting person's) ``PolicyState`` row with ``select_for_update``, restores the policy
  from it, decides, and saves the new state in the same transaction, so two concurrent turns
  never lose each other's update. The turn's stored decision record names the row it came from
  (``policy_state_ref``) next to the logged action probabilities and context features.
* Learning: ``learn_from_feedback`` (called by ``record_feedback`` inside its transaction)
  turns the first reward-bearing feedback of a person on a target into a reward (``REWARDS``:
  thumbs up 1, thumbs down 0, "this question was unnecessary" 0) and updates the same state
  row under its lock. The reward is stored on the feedback row; a row that has taught the
  policy once never teaches it again, whatever its later changes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from agents.models import Feedback, PolicyState, Turn
from agents.models.records import PolicyRecord
from agents.policies import UnknownPolicyError, get_policy
from agents.policies.bandit import REWARDS
from agents.policies.base import Decision
from agents.policies.registry import LearningPolicy

log = logging.getLogger(__name__)

PolicyDecide = Callable[..., dict[str, Any]]


def is_learning_policy(name: str) -> bool:
    try:
        return isinstance(get_policy(name), LearningPolicy)
    except UnknownPolicyError:
        return False


def lock_policy_state(*, workspace_id: int, user_id: int | None, policy_name: str) -> PolicyState:
    """The state row, locked until the end of the caller's transaction (created when missing)."""
    rows = PolicyState.objects.select_for_update().filter(
        workspace_id=workspace_id, policy_name=policy_name
    )
    rows = rows.filter(user__isnull=True) if user_id is None else rows.filter(user_id=user_id)
    row = rows.first()
    if row is not None:
        return row
    try:
        with transaction.atomic():
            return PolicyState.objects.create(
                workspace_id=workspace_id, user_id=user_id, policy_name=policy_name
            )
    except IntegrityError:  # created by a concurrent turn meanwhile
        return rows.get()


def state_owner(turn: Turn) -> int | None:
    """Whose state a turn decides with: the requesting person's when the agent learns per
    person (and someone asked), else the workspace's (None)."""
    if turn.agent.learn_per_person and turn.requested_by_id is not None:
        return turn.requested_by_id
    return None


def decide_with_state(*, turn: Turn, context: dict[str, Any], decide: PolicyDecide) -> PolicyRecord:
    """The policy's decision record for ``turn``; learning policies decide from (and update)
    their persisted state. ``decide`` is ``agents.engine.decide.policy_decision`` (or
    ``agents.engine.policies_bridge.policy_decision``, for a stored context)."""
    name = turn.agent.policy_name
    if not is_learning_policy(name):
        record = decide(name, context)
        record.pop("policy_state", None)
        return _record(record)
    user_id = state_owner(turn)
    with transaction.atomic():
        row = lock_policy_state(
            workspace_id=turn.task.workspace_id, user_id=user_id, policy_name=name
        )
        record = decide(name, context, policy_state=row.state or None)
        new_state = record.pop("policy_state", None)
        if new_state is not None:
            row.state = new_state
            row.decisions += 1
            row.save(update_fields=["state", "decisions", "updated_at"])
        record["policy_state_ref"] = {"id": row.pk, "user_id": user_id}
    return _record(record)


def _record(stored: dict[str, Any]) -> PolicyRecord:
    record = PolicyRecord.from_stored(stored)
    if record is None:  # a policy always returns a record (agents.policies.adapter)
        raise TypeError(f"Not a decision record: {stored!r}")
    return record


def reward_for(feedback: Feedback) -> float | None:
    """The reward a feedback row carries, or None (a comment alone, or a cleared rating)."""
    if feedback.unnecessary_question:
        return REWARDS["unnecessary_question"]
    if feedback.rating:
        return REWARDS[feedback.rating]
    return None


def learn_from_feedback(feedback: Feedback) -> float | None:
    """Teach the policy that made the target's turn, once per feedback row. Call inside the
    transaction that holds the feedback row's lock; returns the reward learned, if any."""
    if feedback.learned_at is not None or feedback.turn_id is None:
        return None
    reward = reward_for(feedback)
    if reward is None:
        return None
    stored = Turn.objects.filter(pk=feedback.turn_id).values_list("policy_decision", flat=True)
    record = PolicyRecord.from_stored(stored.first())
    if record is None or record.state_ref is None or not record.detail.get("features"):
        return None
    row = PolicyState.objects.select_for_update().filter(pk=record.state_ref.id).first()
    if row is None:
        return None
    try:
        policy = get_policy(row.policy_name, state=row.state or None)
        if not isinstance(policy, LearningPolicy):
            return None
        policy.learn(Decision.from_dict(dict(record.detail)), reward)
    except (UnknownPolicyError, TypeError, ValueError, KeyError) as exc:
        log.warning("feedback %s: cannot teach %s: %s", feedback.pk, row.policy_name, exc)
        return None
    row.state = policy.to_state()
    row.rewards += 1
    row.save(update_fields=["state", "rewards", "updated_at"])
    feedback.learned_reward = reward
    feedback.learned_at = timezone.now()
    feedback.save(update_fields=["learned_reward", "learned_at"])
    return reward
