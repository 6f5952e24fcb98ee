"""The typed core: a turn run ends in an Outcome, a decision record reads back as a
PolicyRecord and is stored in the same JSON shape."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from agents import jobs
from agents.engine import runner
from agents.engine.outcome import Outcome
from agents.models import Agent, Trigger, Turn, TurnStatus
from agents.models.records import PolicyRecord, PolicyStateRef, TurnContext
from agents.services import turns as turn_services
from collab.tasks.models import Task

pytestmark = pytest.mark.django_db

STORED = {
    "policy": "threshold",
    "decision": "ask",
    "question": "Which city?",
    "assumption": "",
    "reason": "the destination is missing",
    "detail": {"action": "ask", "features": [1.0]},
    "situation": {"request": "Plan our trip"},
    "policy_state_ref": {"id": 3, "user_id": None},
}


def test_a_stored_decision_record_reads_back_typed_and_stores_the_same_json() -> None:
    record = PolicyRecord.from_stored(STORED)

    assert record is not None
    assert record.asks
    assert not record.suggests
    assert record.question == "Which city?"
    assert record.state_ref == PolicyStateRef(id=3, user_id=None)
    assert record.to_stored() == STORED


def test_a_record_that_is_not_one_reads_as_none_and_an_unknown_action_as_act() -> None:
    assert PolicyRecord.from_stored(None) is None
    assert PolicyRecord.from_stored(["ask"]) is None  # type: ignore[arg-type]
    odd = PolicyRecord.from_stored({"decision": "dance", "question": "Why?"})
    assert odd is not None
    assert odd.decision == "act"
    assert not odd.asks


def test_a_turn_run_ends_in_a_typed_outcome_and_a_second_delivery_says_it_already_ended(
    task: Task, make_agent: Callable[..., Agent]
) -> None:
    agent = make_agent("Mira")
    turn = turn_services.start_turn(agent=agent, task=task, trigger=Trigger.ASK)

    first = runner.run_turn(turn_id=turn.pk)
    again = runner.run_turn(turn_id=turn.pk)

    assert first is Outcome.DONE
    assert Turn.objects.get(pk=turn.pk).status == TurnStatus.DONE
    assert again is Outcome.ALREADY_ENDED
    assert runner.run_turn(turn_id=turn.pk + 1000) is Outcome.MISSING
    assert jobs.run_turn_job(turn.pk) == "already ended"  # the job's result is plain JSON


def test_the_stored_turn_context_has_exactly_the_typed_context_keys(
    task: Task, make_agent: Callable[..., Agent]
) -> None:
    agent = make_agent("Mira")
    turn = turn_services.start_turn(agent=agent, task=task, trigger=Trigger.ASK)
    runner.run_turn(turn_id=turn.pk)

    stored = set(Turn.objects.get(pk=turn.pk).context)

    assert TurnContext.__required_keys__ <= stored
    assert stored <= TurnContext.__required_keys__ | TurnContext.__optional_keys__
