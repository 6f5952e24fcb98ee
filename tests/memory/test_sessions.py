"""Memory across sessions, through the real turn engine (fake chat model): what a person said
in one task reaches an agent's prompt in a later task, the turn logs which items it used, a
changed preference replaces the old one, and nobody else's memory leaks into the prompt."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from agents import services as agent_services
from agents import turns
from agents.memory.models import MemoryItem, Status
from agents.memory.reflection import reflect_conversation
from agents.models import ModelCall, ModelProfile, Provider, Turn
from collab.tasks.services import post_message
from tests.factories import make_task, membership_of


def say(workspace, user, task, body):
    return post_message(membership=membership_of(workspace, user), task=task, body=body)


def turn_for(workspace, user, task, body):
    """``user`` asks the agent in ``task``; the turn runs; returns (turn, prompt text)."""
    say(workspace, user, task, body)
    turn = Turn.objects.filter(task=task).latest("id")
    turns.run_turn(turn_id=turn.pk)
    turn.refresh_from_db()
    prompt = ModelCall.objects.filter(turn=turn).latest("id").messages[-1]["content"]
    return turn, prompt


def test_preferences_said_in_one_session_shape_later_sessions(workspace, alice, bob):
    profile = ModelProfile.objects.create(name="fake", provider=Provider.FAKE, model="echo")
    mira = agent_services.create_agent(
        membership=membership_of(workspace, alice), name="Mira", model_profile=profile
    )
    # Session 1: one explicit command, one plain statement picked up by reflection.
    first = make_task(workspace, title="Q1 report")
    mira.tasks.add(first)
    say(workspace, alice, first, "Remember that I prefer bullet points")
    say(workspace, alice, first, "Also, I'd like British spelling from now on.")
    say(workspace, bob, first, "remember that I prefer numbered lists")
    assert (
        reflect_conversation(task_id=first.pk, now=timezone.now() + timedelta(hours=1)).outcome
        == "reflected"
    )
    bullets = MemoryItem.objects.get(owner=alice, key="lists")
    spelling = MemoryItem.objects.get(owner=alice, key="spelling")

    # Session 2: a new task; alice does not repeat herself.
    second = make_task(workspace, title="Q2 report")
    mira.tasks.add(second)
    turn, prompt = turn_for(workspace, alice, second, "@Mira draft the summary")

    assert set(turn.context["memory_item_ids"]) == {bullets.pk, spelling.pk}
    assert "(alice's preference) I prefer bullet points [lists=bullets]" in prompt
    assert "[spelling=en-GB]" in prompt
    assert "numbered" not in prompt  # bob's preference: bob is not in this conversation

    # Session 3: alice changes her mind; from then on the new preference replaces the old.
    third = make_task(workspace, title="Q3 report")
    mira.tasks.add(third)
    say(workspace, alice, third, "remember that I prefer prose, no bullet points")
    turn, prompt = turn_for(workspace, alice, third, "@Mira draft the summary")

    bullets.refresh_from_db()
    assert bullets.status == Status.SUPERSEDED
    assert bullets.valid_to is not None
    prose = MemoryItem.objects.get(owner=alice, key="lists", status=Status.ACTIVE)
    assert prose.value == "prose"
    assert bullets.pk not in turn.context["memory_item_ids"]
    assert prose.pk in turn.context["memory_item_ids"]
    assert "[lists=prose]" in prompt
    assert "[lists=bullets]" not in prompt
