"""Memory across sessions, through the real turn engine (fake chat model): what a person said
in one task reaches an agent's prompt in a later task, the turn logs which items it used, a
changed preference replaces the old one, and nobody else's memory leaks into the prompt."""

from __future__ import annotations

from datetime import timedelta

from django.urls import reverse
from django.utils import timezone

from agents.engine import runner
from agents.memory.models import MemoryItem, Status
from agents.memory.reflection import reflect_conversation
from agents.models import ModelCall, ModelProfile, Provider, Turn
from agents.services import agents as agent_services
from collab.tasks.services import post_message
from tests.factories import make_task, membership_of


def say(workspace, user, task, body):
    return post_message(membership=membership_of(workspace, user), task=task, body=body).message


def turn_for(workspace, user, task, body):
    """``user`` asks the agent in ``task``; the turn runs; returns (turn, prompt text)."""
    say(workspace, user, task, body)
    turn = Turn.objects.filter(task=task).latest("id")
    runner.run_turn(turn_id=turn.pk)
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
    bullets = MemoryItem.objects.get(owner=alice, key="list_style")
    spelling = MemoryItem.objects.get(owner=alice, key="spelling")

    # Session 2: a new task; alice does not repeat herself.
    second = make_task(workspace, title="Q2 report")
    mira.tasks.add(second)
    turn, prompt = turn_for(workspace, alice, second, "@Mira draft the summary")

    assert set(turn.context["memory_item_ids"]) == {bullets.pk, spelling.pk}
    assert "(alice's preference) I prefer bullet points [list_style=bullets]" in prompt
    assert "[spelling=british]" in prompt
    assert "numbered" not in prompt  # bob's preference: bob is not in this conversation

    # Session 3: alice changes her mind; from then on the new preference replaces the old.
    third = make_task(workspace, title="Q3 report")
    mira.tasks.add(third)
    say(workspace, alice, third, "remember that I prefer prose, no bullet points")
    turn, prompt = turn_for(workspace, alice, third, "@Mira draft the summary")

    bullets.refresh_from_db()
    assert bullets.status == Status.SUPERSEDED
    assert bullets.valid_to is not None
    prose = MemoryItem.objects.get(owner=alice, key="list_style", status=Status.ACTIVE)
    assert prose.value == "prose"
    assert bullets.pk not in turn.context["memory_item_ids"]
    assert prose.pk in turn.context["memory_item_ids"]
    assert "[list_style=prose]" in prompt
    assert "[list_style=bullets]" not in prompt


def test_a_reply_prompt_for_bobs_request_holds_none_of_alices_unshared_memory(
    workspace, alice, bob
):
    # given alice and bob both talk on a shared task, and alice has memory of her own
    profile = ModelProfile.objects.create(name="fake", provider=Provider.FAKE, model="echo")
    agent_services.create_agent(
        membership=membership_of(workspace, alice), name="Mira", model_profile=profile
    )
    task = make_task(workspace, title="Offsite plan")
    secret = MemoryItem.objects.create(
        owner=alice, text="Alice is interviewing at another company", key="plan", value="leave"
    )
    local = MemoryItem.objects.create(
        owner=alice,
        text="Alice's offsite budget worries",
        scope="workspace",
        workspace=workspace,
    )
    shared = MemoryItem.objects.create(
        owner=alice, text="The offsite venue is the boathouse", shared=True
    )
    bobs = MemoryItem.objects.create(
        owner=bob, text="Bob prefers bullet points", key="list_style", value="bullets"
    )
    say(workspace, alice, task, "Morning! Let's plan the offsite budget and venue.")

    # when bob asks the agent on that task
    turn, prompt = turn_for(workspace, bob, task, "@Mira plan the offsite budget and venue")

    # then the prompt (and what the policies read) holds bob's items and what alice shared only
    assert secret.text not in prompt
    assert local.text not in prompt
    assert shared.text in prompt
    assert bobs.text in prompt
    used = set(turn.context["memory_item_ids"])
    assert used == {shared.pk, bobs.pk}
    assert {fact["item_id"] for fact in turn.context["memory_items"]} == used


def test_a_reply_shows_its_owner_the_remembered_items_it_used_and_no_one_else(
    client, workspace, alice, bob
):
    # given bob's own preference and alice's shared item, both used by the reply to bob
    profile = ModelProfile.objects.create(name="fake", provider=Provider.FAKE, model="echo")
    agent_services.create_agent(
        membership=membership_of(workspace, alice), name="Mira", model_profile=profile
    )
    task = make_task(workspace, title="Offsite plan")
    bobs = MemoryItem.objects.create(
        owner=bob, text="Bob prefers bullet points", key="list_style", value="bullets"
    )
    alices = MemoryItem.objects.create(
        owner=alice, text="The offsite venue is the boathouse", shared=True
    )
    say(workspace, alice, task, "Morning! Let's plan the offsite venue.")
    turn, _ = turn_for(workspace, bob, task, "@Mira plan the offsite venue")
    assert set(turn.context["memory_item_ids"]) == {bobs.pk, alices.pk}
    page = reverse("tasks:detail", args=[task.pk])

    # when each of them opens the task page
    client.force_login(bob)
    as_bob = client.get(page).content.decode()
    client.force_login(alice)
    as_alice = client.get(page).content.decode()

    # then each sees only their own items as chips, linking to their Memory page
    assert as_bob.count('data-testid="memory-used"') == 1
    assert f'href="{reverse("memory:item", args=[bobs.pk])}"' in as_bob
    assert "The offsite venue is the boathouse" not in as_bob.split('data-testid="memory-used"')[1]
    assert f'href="{reverse("memory:item", args=[alices.pk])}"' in as_alice
    assert f'href="{reverse("memory:item", args=[bobs.pk])}"' not in as_alice
