"""The embedded model's reply through the turn engine (the model's stream replaced by fixed
text): it opens with what the turn actually knows, never with the small model's pleasantries,
and its memory chips name only what the reply had (issue #18)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth.models import User

from agents.engine import runner
from agents.llm.embedded import EmbeddedChatModel
from agents.memory import selectors as memory_selectors
from agents.memory.models import MemoryItem, Scope
from agents.models import Action, Agent, TurnStatus
from agents.services import agents as agent_services
from agents.services import turns as turn_services
from collab.tasks import services as task_services
from collab.tasks.models import Message, Task
from collab.workspaces.models import Workspace
from tests import factories

PLEASANTRIES = "Hello bob, I'm glad you're excited about the trip. "


@pytest.fixture(autouse=True)
def _no_jobs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(turn_services, "enqueue_turn", lambda turn_id: None)


def _model_writes(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    """The embedded model's stream, without loading the model: ``text`` in small pieces."""

    def completion(self: Any, messages: Any, *, stream: bool) -> Iterator[dict[str, Any]]:
        for start in range(0, len(text), 7):
            yield {"choices": [{"delta": {"content": text[start : start + 7]}}]}

    monkeypatch.setattr(EmbeddedChatModel, "_completion", completion)


def _trip(workspace: Workspace, alice: User) -> tuple[Agent, Task]:
    agent = agent_services.create_agent(
        membership=factories.membership_of(workspace, alice), name="Local"
    )
    agent.policy_name = "never"  # one model call a turn, and it never asks first
    agent.save(update_fields=["policy_name"])
    task = factories.make_task(workspace, title="Team trip", goal="Plan the team trip.")
    Task.objects.filter(pk=task.pk).update(template="travel_plan")
    task.refresh_from_db()
    return agent, task


def _ask(workspace: Workspace, user: User, task: Task, agent: Agent, body: str) -> Action:
    task_services.post_message(
        membership=factories.membership_of(workspace, user), task=task, body=body
    )
    turn = agent.turns.order_by("-id").first()
    assert turn is not None
    assert runner.run_turn(turn_id=turn.pk) in (TurnStatus.DONE, TurnStatus.WAITING)
    return Action.objects.get(turn=turn)


def test_a_request_a_skill_covers_is_answered_by_the_skill_not_the_small_model(
    workspace: Workspace, alice: User, bob: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 27: the skills answer what they cover (a draft here); the small model's
    # pleasantries never reach the chat.
    agent, task = _trip(workspace, alice)
    _model_writes(monkeypatch, PLEASANTRIES)
    post = "@Local plan a trip to Porto for 8 people"
    task_services.post_message(
        membership=factories.membership_of(workspace, bob), task=task, body=post
    )
    turn = agent.turns.order_by("-id").first()
    assert turn is not None

    assert runner.run_turn(turn_id=turn.pk) in (TurnStatus.DONE, TurnStatus.WAITING)

    reply, suggestion = Action.objects.filter(turn=turn).order_by("index")
    body = Message.objects.get(pk=reply.result["message_id"]).body
    assert body.startswith("Here is a suggestion")
    assert "glad" not in body
    assert "Hello" not in body
    assert suggestion.kind == "suggest"
    assert "Destination: Porto" in suggestion.payload["replace"]
    assert "Travelers: 8" in suggestion.payload["replace"]
    assert "Budget: to decide" in suggestion.payload["replace"]


def test_a_usable_reply_follows_the_grounded_sentence_without_its_greeting(
    workspace: Workspace, alice: User, bob: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent, task = _trip(workspace, alice)
    _model_writes(monkeypatch, PLEASANTRIES + "Porto is lovely in spring.")

    action = _ask(workspace, bob, task, agent, "@Local thoughts on a trip to Porto for 8 people?")

    body = Message.objects.get(pk=action.result["message_id"]).body
    assert body.startswith("bob, here is what I have")
    assert "; still open: " in body.split(". Porto is lovely in spring.")[0]  # grounded first
    assert "glad" not in body


def test_embedded_chips_name_only_the_askers_items_the_reply_states(
    workspace: Workspace, alice: User, bob: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent, task = _trip(workspace, alice)
    _model_writes(monkeypatch, "Porto is lovely in spring.")
    budget = MemoryItem.objects.create(
        owner=bob, text="Our trips have a budget of 900 EUR", key="slot:budget", value="900 EUR"
    )
    lists = MemoryItem.objects.create(owner=bob, text="Bob prefers trips with numbered lists")
    alices = MemoryItem.objects.create(
        owner=alice,
        text="Alice says trips have a budget of 2000 EUR",
        key="slot:budget",
        value="2000 EUR",
        scope=Scope.WORKSPACE,
        workspace=workspace,
        shared=True,
    )

    action = _ask(workspace, bob, task, agent, "@Local thoughts on a trip to Porto, budget please")

    turn = action.turn
    turn.refresh_from_db()
    body = Message.objects.get(pk=action.result["message_id"]).body
    assert "budget EUR 900" in body  # bob's own remembered value, stated in the reply
    assert turn.context["memory_item_ids"] == [budget.pk]
    assert lists.pk in turn.context["memory_item_ids_retrieved"]  # retrieved, never shown
    chips = memory_selectors.memory_used_by_owner(turn.context["memory_item_ids"])
    assert chips == {bob.pk: [memory_selectors._chip(budget.pk, budget.text)]}
    assert alice.pk not in chips
    assert alices.pk not in turn.context["memory_item_ids"]


def test_grounding_states_only_sure_readings_and_never_the_agents_own_mention() -> None:
    from agents.engine.policies_bridge import grounding
    from agents.policies.base import Conflict, Situation, SlotSpec, SlotState

    situation = Situation(
        request="book the room",
        slots=(
            SlotState(SlotSpec("day", type="date"), "2026-12-01", "document", 0.81),
            SlotState(SlotSpec("attendees"), "Local", "request", 0.8),
            SlotState(SlotSpec("room"), "Lisbon", "request", 0.7),
            SlotState(SlotSpec("people", type="number"), "8", "document", 0.95),
            SlotState(SlotSpec("start", type="date", label="start date"), "2027-05-12", "chat", 1),
            SlotState(SlotSpec("budget"), "EUR 900", "request", 0.9),
            SlotState(SlotSpec("purpose"), None, None, 0.0),
            SlotState(SlotSpec("tone", required=False), None, None, 0.0),
        ),
        conflicts=(Conflict("budget", (("request", "EUR 900"), ("chat", "EUR 700"))),),
    )

    said = grounding({"agent": "Local"}, {"situation": situation.to_dict()})

    assert said["known"] == [["room", "Lisbon"], ["", "8 people"], ["start date", "12 May 2027"]]
    assert said["still_open"] == ["budget", "purpose"]  # stated twice, differently; never given
    assert said["memory_item_ids"] == []


def test_the_small_models_text_is_shown_only_when_it_names_the_tasks_facts_and_invents_none(
    workspace: Workspace, alice: User, bob: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    # given a task with a goal and no template, and requests no skill covers (issue 27)
    agent, task = _trip(workspace, alice)
    Task.objects.filter(pk=task.pk).update(
        template="", title="Team ideas", goal="Collect ideas for the team."
    )
    task.refresh_from_db()
    _model_writes(monkeypatch, "Porto is lovely in spring.")
    first = _ask(workspace, bob, task, agent, "@Local any idea where to go?")
    _model_writes(monkeypatch, "Write your ideas for the team in the document.")
    second = _ask(workspace, alice, task, agent, "@Local and what should we eat?")

    first_body = Message.objects.get(pk=first.result["message_id"]).body
    second_body = Message.objects.get(pk=second.result["message_id"]).body
    assert "Porto" not in first_body  # a place the task never named: the skill's answer stands
    assert "Draft, Open questions or Checklist" in first_body
    assert "ideas for the team in the document" in second_body  # names the task, invents nothing


def test_the_small_model_may_repeat_a_number_said_in_the_chat_but_not_invent_one(
    workspace: Workspace, alice: User, bob: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent, task = _trip(workspace, alice)
    task_services.post_message(  # a number no slot of the template reads: only the chat has it
        membership=factories.membership_of(workspace, alice),
        task=task,
        body="Last time the bus from the airport took 40 minutes.",
    )
    _model_writes(monkeypatch, "The bus takes 40 minutes. Each room costs 75 EUR a night.")

    action = _ask(workspace, bob, task, agent, "@Local how do we get to the hotel?")

    body = Message.objects.get(pk=action.result["message_id"]).body
    assert "The bus takes 40 minutes." in body  # alice said it in the chat
    assert "75" not in body  # nobody did
