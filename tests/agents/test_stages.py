"""A turn is a pipeline of stages (agents/engine/): each delivery records every stage it ran
with its time and what it gave, the turn's review page shows them, and the work itself comes
from the producer registered for the kind of agent (issue #24)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from agents.engine import producers, runner
from agents.engine.decide import Decision
from agents.engine.gather import TurnInput
from agents.engine.producers import Produced
from agents.models import Agent, ModelCall, Trigger, Turn, TurnStatus
from agents.policies.understand import Understanding
from agents.schemas import DecisionOut
from agents.services import turns as turn_services
from collab.tasks.models import Message, Task

pytestmark = pytest.mark.django_db

STAGES = ["claim", "gather", "understand", "decide", "produce", "store", "apply", "finish"]


def _stage_names(turn: Turn) -> list[str]:
    turn.refresh_from_db()
    return [stage["stage"] for stage in turn.stages]


def test_a_turn_records_each_stage_it_ran_in_order(task: Task, mira: Agent) -> None:
    turn = turn_services.start_turn(agent=mira, task=task, trigger=Trigger.ASK)

    assert runner.run_turn(turn_id=turn.pk) == TurnStatus.DONE

    assert _stage_names(turn) == STAGES
    assert all(stage["ms"] >= 0 and stage["attempt"] == 1 for stage in turn.stages)


def test_each_stage_says_what_it_gave(task: Task, mira: Agent) -> None:
    turn = turn_services.start_turn(agent=mira, task=task, trigger=Trigger.ASK)

    runner.run_turn(turn_id=turn.pk)

    turn.refresh_from_db()
    said = {stage["stage"]: stage["summary"] for stage in turn.stages}
    assert said["claim"].startswith("attempt 1")
    assert said["decide"].startswith(f"{mira.policy_name}: act")
    assert said["produce"].startswith("model: reply")
    assert said["store"] == "0 actions left to apply"  # a reply is applied with its decision
    assert said["apply"] == "0 actions applied"


def test_a_redelivery_of_a_decided_turn_adds_its_stages_after_the_first(
    task: Task, mira: Agent
) -> None:
    turn = turn_services.start_turn(agent=mira, task=task, trigger=Trigger.ASK)
    runner.run_turn(turn_id=turn.pk)
    # the worker died after deciding: the turn is running again with its decision stored
    Turn.objects.filter(pk=turn.pk).update(
        status=TurnStatus.RUNNING, lease_expires_at=None, finished_at=None
    )

    runner.run_turn(turn_id=turn.pk)

    assert _stage_names(turn) == [*STAGES, "claim", "apply", "finish"]
    assert [stage["attempt"] for stage in turn.stages][-3:] == [2, 2, 2]


def test_the_turn_review_page_shows_its_stages(
    task: Task, mira: Agent, alice: User, as_user: Callable[[User], Any]
) -> None:
    turn = turn_services.start_turn(agent=mira, task=task, trigger=Trigger.ASK)
    runner.run_turn(turn_id=turn.pk)

    html = as_user(alice).get(reverse("review:turn", args=[turn.pk])).content.decode()

    assert 'id="turn-stages"' in html
    turn.refresh_from_db()
    for stage in turn.stages:
        assert f"<td>{stage['stage']}</td><td>{stage['ms']}</td>" in html


class Scripted:
    """A producer for agents named "Scripted": one fixed reply, no model."""

    name = "scripted"

    def accepts(self, inp: TurnInput) -> bool:
        return inp.turn.agent.name == "Scripted"

    def produce(self, inp: TurnInput, understanding: Understanding, decision: Decision) -> Produced:
        reply = {"kind": "reply", "text": f"Scripted, on a {understanding.parsed.template}."}
        return Produced(
            actions=DecisionOut.model_validate({"actions": [reply]}),
            context=dict(inp.context),
            producer=self.name,
        )


@pytest.fixture
def scripted() -> Iterator[Scripted]:
    producer = Scripted()
    producers.register_producer(producer)
    yield producer
    producers._producers.remove(producer)


def test_a_registered_producer_does_the_work_of_the_agents_it_accepts(
    task: Task, make_agent: Callable[..., Agent], scripted: Scripted
) -> None:
    agent = make_agent("Scripted")
    turn = turn_services.start_turn(agent=agent, task=task, trigger=Trigger.ASK)

    assert runner.run_turn(turn_id=turn.pk) == TurnStatus.DONE

    assert Message.objects.filter(task=task, kind="agent").get().body == "Scripted, on a None."
    assert not ModelCall.objects.filter(turn=turn).exists()
    turn.refresh_from_db()
    assert {s["stage"]: s["summary"] for s in turn.stages}["produce"] == "scripted: reply"


def test_the_model_producer_takes_every_turn_no_other_producer_accepts(
    task: Task, mira: Agent, scripted: Scripted
) -> None:
    turn = turn_services.start_turn(agent=mira, task=task, trigger=Trigger.ASK)

    runner.run_turn(turn_id=turn.pk)

    # the installed producers (skills first) and the test's, with the model producer last
    assert producers.registered()[-2:] == ("scripted", "model")
    assert ModelCall.objects.filter(turn=turn, purpose="decide").exists()
