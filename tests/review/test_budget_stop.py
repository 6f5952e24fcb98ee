"""The turn engine respects the workspace's monthly hard stop."""

from __future__ import annotations

from decimal import Decimal

import pytest

from agents.engine import runner
from agents.models import ModelCall, ModelProfile, Provider, Turn, TurnStatus
from agents.review.models import ReviewSettings
from agents.services import agents as agent_services
from agents.services import turns as turn_services
from collab.tasks.models import Message
from tests.factories import membership_of
from tests.review.conftest import make_call, make_turn

pytestmark = pytest.mark.django_db


@pytest.fixture
def mira(workspace, alice, task):
    profile = ModelProfile.objects.create(name="fake", provider=Provider.FAKE, model="echo")
    agent = agent_services.create_agent(
        membership=membership_of(workspace, alice), name="Mira", model_profile=profile
    )
    agent.tasks.add(task)
    return agent


def ask(workspace, bob, mira, task):
    return turn_services.ask_agent(membership=membership_of(workspace, bob), agent=mira, task=task)


def test_an_agent_does_not_run_once_the_monthly_budget_is_spent(workspace, bob, mira, task):
    ReviewSettings.objects.create(workspace=workspace, monthly_budget=Decimal("0.50"))
    make_call(make_turn(mira, task), cost="0.50")
    turn = ask(workspace, bob, mira, task)
    calls_before = ModelCall.objects.count()

    outcome = runner.run_turn(turn_id=turn.pk)

    turn.refresh_from_db()
    assert outcome == "over budget"
    assert turn.status == TurnStatus.FAILED
    assert "monthly model budget" in turn.error
    assert ModelCall.objects.count() == calls_before
    note = Message.objects.filter(task=task, kind=Message.Kind.SYSTEM).last()
    assert note is not None
    assert "monthly model budget" in note.body


def test_an_agent_runs_while_under_budget_or_without_a_hard_stop(workspace, bob, mira, task):
    ReviewSettings.objects.create(
        workspace=workspace, monthly_budget=Decimal("0.50"), hard_stop=False
    )
    make_call(make_turn(mira, task), cost="0.90")
    turn = ask(workspace, bob, mira, task)

    outcome = runner.run_turn(turn_id=turn.pk)

    assert outcome == TurnStatus.DONE
    assert Turn.objects.get(pk=turn.pk).status == TurnStatus.DONE
