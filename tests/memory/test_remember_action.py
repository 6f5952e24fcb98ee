"""An agent's ``remember`` action, through the real turn engine with a fake chat model: it goes
through the memory service, so each person's settings decide, and it is only ever about
someone present in the task."""

from __future__ import annotations

import json

from agents.engine import runner
from agents.llm import fakes
from agents.memory import services as memory
from agents.memory.models import MemoryCandidate, MemoryItem, Scope, Source
from agents.models import Action, ActionKind, ModelProfile, Provider, Trigger, Turn
from agents.services import actions as action_services
from agents.services import agents as agent_services
from agents.services import turns as turn_services
from collab.tasks.services import post_message
from tests.factories import membership_of


def _remember(person: str, text: str, key: str = "", value: str = "") -> str:
    return json.dumps(
        {
            "actions": [
                {"kind": "reply", "text": "Noted."},
                {"kind": "remember", "person": person, "text": text, "key": key, "value": value},
            ]
        }
    )


for _name, _answer in {
    "remember-bob": _remember("bob", "Prefers bullet points", "list_style", "bullets"),
    "remember-bob-unkeyed": _remember("@Bob", "Likes a short summary first"),
    "remember-carol": _remember("carol", "Prefers prose"),
    "remember-mallory": _remember("mallory", "Prefers prose"),
    "remember-nobody": _remember("", "Prefers prose"),
    "remember-bad-key": _remember("bob", "Odd", "Lists!", "x"),
    # A hijacked turn: bob's request, the model writes something about alice.
    "remember-alice-hijacked": _remember("alice", "Alice wants her account deleted"),
}.items():
    fakes.register_fake_behaviour(_name, lambda messages, answer=_answer: answer)


def run_turn(workspace, task, behaviour, *, said_by, body="I prefer bullet points"):
    """``said_by`` writes in the chat and asks the agent; the turn runs. Returns the
    ``remember`` action."""
    profile = ModelProfile.objects.create(
        name=f"fake {behaviour}", provider=Provider.FAKE, model=behaviour
    )
    owner = membership_of(workspace, workspace.memberships.get(role="owner").user)
    agent = agent_services.create_agent(
        membership=owner, name="Mira", model_profile=profile, on_mention=False
    )
    post_message(membership=membership_of(workspace, said_by), task=task, body=body)
    turn = turn_services.start_turn(
        agent=agent, task=task, trigger=Trigger.ASK, requested_by=said_by
    )
    runner.run_turn(turn_id=turn.pk)
    return Action.objects.get(turn=turn, kind=ActionKind.REMEMBER)


def test_an_agent_remembers_a_preference_of_someone_in_the_chat(workspace, task, bob):
    action = run_turn(workspace, task, "remember-bob", said_by=bob)

    item = MemoryItem.objects.get(owner=bob)
    assert action.status == Action.Status.APPLIED
    assert action.result == {"memory": "added", "person_id": bob.pk, "memory_item_id": item.pk}
    assert (item.key, item.value, item.text) == ("list_style", "bullets", "Prefers bullet points")
    assert item.source_kind == Source.AGENT
    assert (item.source_task_id, item.source_turn_id) == (task.pk, action.turn_id)
    assert item.confidence == memory.AGENT_CONFIDENCE
    # Only into the current workspace, whatever the model asked for.
    assert (item.scope, item.workspace_id) == (Scope.WORKSPACE, workspace.pk)


def test_a_hijacked_turn_creates_nothing_active_about_someone_else(workspace, task, alice, bob):
    # given alice is in the chat and accepts what agents notice automatically (the default)
    post_message(membership=membership_of(workspace, alice), task=task, body="Morning all")

    # when bob's turn's model proposes to remember something about alice
    action = run_turn(workspace, task, "remember-alice-hijacked", said_by=bob)

    # then nothing is active for her: it waits in her review inbox, in this workspace only
    assert not MemoryItem.objects.filter(owner=alice).exists()
    candidate = MemoryCandidate.objects.get(owner=alice)
    assert action.result["memory"] == "proposed"
    assert candidate.decision == MemoryCandidate.Decision.PENDING
    assert (candidate.scope, candidate.workspace_id) == (Scope.WORKSPACE, workspace.pk)
    assert candidate.text == "Alice wants her account deleted"


def test_the_person_can_be_named_with_an_at_sign_and_any_case(workspace, task, bob):
    run_turn(workspace, task, "remember-bob-unkeyed", said_by=bob)

    assert MemoryItem.objects.get(owner=bob).text == "Likes a short summary first"


def test_review_first_puts_the_agents_proposal_in_the_persons_inbox(workspace, task, bob):
    memory.update_settings(user=bob, enabled=True, review_mode="review", admin_access_allowed=False)

    action = run_turn(workspace, task, "remember-bob", said_by=bob)

    candidate = MemoryCandidate.objects.get(owner=bob)
    assert action.result["memory"] == "proposed"
    assert action.result["memory_candidate_id"] == candidate.pk
    assert candidate.decision == MemoryCandidate.Decision.PENDING
    assert not MemoryItem.objects.filter(owner=bob).exists()


def test_memory_off_means_the_agent_remembers_nothing(workspace, task, bob):
    memory.update_settings(user=bob, enabled=False, review_mode="auto", admin_access_allowed=False)

    action = run_turn(workspace, task, "remember-bob", said_by=bob)

    assert action.result["memory"] == "ignored"
    assert not MemoryItem.objects.filter(owner=bob).exists()
    assert not MemoryCandidate.objects.filter(owner=bob).exists()


def test_an_outsider_is_never_remembered(workspace, task, bob, mallory):
    action = run_turn(workspace, task, "remember-mallory", said_by=bob)

    assert action.status == Action.Status.SKIPPED
    assert action.detail == "the person is not someone present in this task"
    assert not MemoryItem.objects.filter(owner=mallory).exists()


def test_a_member_who_is_not_in_this_conversation_is_not_remembered(workspace, task, bob, carol):
    action = run_turn(workspace, task, "remember-carol", said_by=bob)

    assert action.status == Action.Status.SKIPPED
    assert not MemoryItem.objects.filter(owner=carol).exists()


def test_a_remember_that_names_nobody_is_refused(workspace, task, bob):
    action = run_turn(workspace, task, "remember-nobody", said_by=bob)

    assert action.status == Action.Status.SKIPPED
    assert not MemoryItem.objects.exists()


def test_a_remember_with_a_malformed_key_is_refused_with_the_reason(workspace, task, bob):
    action = run_turn(workspace, task, "remember-bad-key", said_by=bob)

    assert action.status == Action.Status.SKIPPED
    assert action.detail == (
        "A key is a short lower-case word (letters, digits, underscores), or slot:<name>."
    )
    assert not MemoryItem.objects.exists()


def test_a_redelivered_remember_is_applied_once(workspace, task, bob):
    action = run_turn(workspace, task, "remember-bob", said_by=bob)
    Turn.objects.filter(pk=action.turn_id).update(status="running")

    action_services.apply_action(idempotency_key=action.idempotency_key)

    assert MemoryItem.objects.filter(owner=bob).count() == 1
    assert MemoryItem.objects.get(owner=bob).times_confirmed == 1


def test_the_prompt_offers_remember_to_full_models_only():
    from agents.engine.context import _FULL_GUIDE, _SMALL_GUIDE
    from agents.schemas import SmallDecisionOut

    assert "- remember:" in _FULL_GUIDE
    assert "remember" not in _SMALL_GUIDE
    assert "remember" not in str(SmallDecisionOut.model_json_schema())
