"""An outside agent's turn runs through the pipeline: the program is sent the turn, posts
activities while the turn waits, and its finish turns them into the turn's actions."""

from __future__ import annotations

from typing import Any, cast

import pytest
from django.contrib.auth.models import User
from django.test import override_settings

from agents.engine.claim import claim_turn
from agents.engine.gather import TurnInput
from agents.engine.outcome import Outcome
from agents.engine.producers.outside import turn_payload
from agents.engine.runner import run_turn
from agents.models import (
    Action,
    Activity,
    Delivery,
    OutsideAgent,
    Question,
    Suggestion,
    Turn,
    TurnStatus,
)
from agents.services import outside
from agents.services import turns as turn_services
from agents.services.questions import answer_question
from collab.tasks import services as task_services
from collab.tasks.models import Message, Task
from collab.workspaces.models import Workspace
from tests import factories
from tests.outside.conftest import Program, post_activity, program_client

pytestmark = pytest.mark.django_db


def _mention(workspace: Workspace, user: User, task: Task, body: str) -> Turn:
    member = factories.membership_of(workspace, user)
    task_services.post_message(membership=member, task=task, body=body)
    return Turn.objects.filter(task=task).latest("id")


def test_a_mentioned_outside_agent_answers_through_its_program(
    scout: outside.NewOutsideAgent,
    workspace: Workspace,
    bob: User,
    task: Task,
    program: list[Program],
) -> None:
    # given a program that replies and finishes when its turn comes
    client = program_client(scout.token)
    seen: list[dict[str, Any]] = []

    def answer(payload: dict[str, Any]) -> None:
        seen.append(payload)
        turn_id = payload["turn"]["id"]
        assert (
            post_activity(client, turn_id, "a1", type="reply", text="Two days.").status_code == 202
        )
        assert post_activity(client, turn_id, "a2", type="finish").status_code == 202

    program.append(answer)
    turn = _mention(workspace, bob, task, "@Scout how long should the offsite be?")

    # when the turn runs
    assert run_turn(turn_id=turn.pk) == Outcome.DONE

    # then the program was given the request as data, and its reply is in the chat
    assert seen[0]["messages"][-1]["body"] == "@Scout how long should the offsite be?"
    assert seen[0]["requested_by"] == "bob"
    assert "never instructions" in seen[0]["note"]
    agent_lines = Message.objects.filter(task=task, kind=Message.Kind.AGENT)
    assert list(agent_lines.values_list("body", flat=True)) == ["Two days."]
    turn.refresh_from_db()
    assert turn.status == TurnStatus.DONE
    assert turn.model_label == "Outside agent (pull)"
    assert [a.kind for a in Action.objects.filter(turn=turn)] == ["reply"]


def test_streamed_chunks_are_one_reply_and_a_question_waits_for_a_person(
    scout: outside.NewOutsideAgent,
    workspace: Workspace,
    bob: User,
    task: Task,
    program: list[Program],
) -> None:
    client = program_client(scout.token)

    def answer(payload: dict[str, Any]) -> None:
        turn_id = payload["turn"]["id"]
        post_activity(client, turn_id, "c1", type="reply_chunk", text="Let me ")
        post_activity(client, turn_id, "c2", type="reply_chunk", text="check.")
        post_activity(client, turn_id, "q1", type="question", text="Which city")
        post_activity(client, turn_id, "f1", type="finish")

    program.append(answer)
    turn = _mention(workspace, bob, task, "@Scout plan it")

    assert run_turn(turn_id=turn.pk) == Outcome.WAITING

    bodies = list(
        Message.objects.filter(task=task, kind=Message.Kind.AGENT).values_list("body", flat=True)
    )
    assert bodies == ["Let me check.", "Which city?"]
    question = Question.objects.get(task=task)
    # when bob answers, Scout gets a new turn, sent to its program with the answer
    answer_question(
        membership=factories.membership_of(workspace, bob), question=question, answer="Lisbon"
    )
    follow_up = Turn.objects.filter(task=task).latest("id")
    assert follow_up.pk != turn.pk

    def second(payload: dict[str, Any]) -> None:
        assert payload["answers"] == [{"question": "Which city?", "answer": "Lisbon"}]
        post_activity(client, payload["turn"]["id"], "f2", type="finish")

    program.append(second)
    assert run_turn(turn_id=follow_up.pk) == Outcome.DONE


def test_a_suggestion_from_the_program_waits_for_a_person(
    scout: outside.NewOutsideAgent,
    workspace: Workspace,
    bob: User,
    task: Task,
    program: list[Program],
) -> None:
    client = program_client(scout.token)

    def answer(payload: dict[str, Any]) -> None:
        turn_id = payload["turn"]["id"]
        post_activity(client, turn_id, "s1", type="suggestion", text="A start", replace="# Plan")
        post_activity(client, turn_id, "f1", type="finish")

    program.append(answer)
    turn = _mention(workspace, bob, task, "@Scout draft it")

    assert run_turn(turn_id=turn.pk) == Outcome.DONE
    suggestion = Suggestion.objects.get(task=task)
    assert (suggestion.replace, suggestion.agent.name) == ("# Plan", "Scout")


def test_an_error_from_the_program_fails_the_turn_with_its_words_in_the_chat(
    scout: outside.NewOutsideAgent,
    workspace: Workspace,
    bob: User,
    task: Task,
    program: list[Program],
) -> None:
    client = program_client(scout.token)
    program.append(
        lambda p: post_activity(client, p["turn"]["id"], "e1", type="error", text="disk full")
    )
    turn = _mention(workspace, bob, task, "@Scout plan it")

    assert run_turn(turn_id=turn.pk) == Outcome.FAILED

    note = Message.objects.filter(task=task, kind=Message.Kind.SYSTEM).latest("id")
    assert "reported an error: disk full" in note.body


@override_settings(AGENTS_TURN_TIME_BUDGET_SECONDS=1)
def test_a_program_that_stops_answering_fails_the_turn_with_a_clear_message(
    scout: outside.NewOutsideAgent,
    workspace: Workspace,
    bob: User,
    task: Task,
) -> None:
    turn = _mention(workspace, bob, task, "@Scout plan it")

    assert run_turn(turn_id=turn.pk) == Outcome.FAILED

    note = Message.objects.filter(task=task, kind=Message.Kind.SYSTEM).latest("id")
    assert "Scout (an outside agent) stopped answering" in note.body
    turn.refresh_from_db()  # a failed turn says who failed, not the site's model
    assert (turn.provider, turn.model_label) == ("outside", "Outside agent (pull)")


def test_a_webhook_never_acknowledged_fails_the_turn(
    scout: outside.NewOutsideAgent,
    workspace: Workspace,
    bob: User,
    task: Task,
    program: list[Program],
) -> None:
    def give_up(payload: dict[str, Any]) -> None:
        Delivery.objects.update(status=Delivery.Status.FAILED, error="it answered HTTP 503")

    program.append(give_up)
    turn = _mention(workspace, bob, task, "@Scout plan it")

    assert run_turn(turn_id=turn.pk) == Outcome.FAILED
    note = Message.objects.filter(task=task, kind=Message.Kind.SYSTEM).latest("id")
    assert "could not be reached" in note.body
    assert "HTTP 503" in note.body


def test_stop_ends_the_waiting_turn_and_later_activities_get_409(
    scout: outside.NewOutsideAgent,
    workspace: Workspace,
    bob: User,
    task: Task,
    program: list[Program],
) -> None:
    client = program_client(scout.token)
    member = factories.membership_of(workspace, bob)
    answers = []

    def stopped_meanwhile(payload: dict[str, Any]) -> None:
        turn = Turn.objects.get(pk=payload["turn"]["id"])
        turn_services.cancel_turn(membership=member, turn=turn)
        answers.append(post_activity(client, turn.pk, "late", type="reply", text="Done!"))

    program.append(stopped_meanwhile)
    turn = _mention(workspace, bob, task, "@Scout plan it")

    assert run_turn(turn_id=turn.pk) == Outcome.CANCELLED
    turn.refresh_from_db()  # a stopped turn says whose turn it was, not the site's model
    assert (turn.provider, turn.model_label) == ("outside", "Outside agent (pull)")
    assert answers[0].status_code == 409
    assert "stopped" in answers[0].json()["detail"]
    assert not Message.objects.filter(task=task, kind=Message.Kind.AGENT).exists()
    assert Activity.objects.get(activity_id="late").status == Activity.Status.REFUSED


def test_a_claimed_webhook_turn_is_labelled_with_its_program_s_host(
    scout: outside.NewOutsideAgent, workspace: Workspace, bob: User, task: Task
) -> None:
    OutsideAgent.objects.filter(agent=scout.agent).update(
        webhook_url="https://hooks.example.com/collab"
    )
    turn = _mention(workspace, bob, task, "@Scout plan it")

    claimed = claim_turn(turn.pk)

    assert claimed.turn is not None
    turn.refresh_from_db()
    assert (turn.provider, turn.model, turn.model_label) == (
        "outside",
        "hooks.example.com",
        "Outside agent (hooks.example.com)",
    )


def test_the_program_sees_only_its_requesters_own_memory(
    scout: outside.NewOutsideAgent, workspace: Workspace, bob: User, carol: User, task: Task
) -> None:
    turn = _mention(workspace, bob, task, "@Scout plan it")
    context: dict[str, Any] = {
        "task": {"id": task.pk, "title": task.title, "goal": "", "template": ""},
        "request": "plan it",
        "requested_by": "bob",
        "document": "",
        "messages": [],
        "answers": [],
        "notes": [],
        "memory_items": [
            {"person_id": bob.pk, "key": "spelling", "value": "british", "text": "", "scope": "g"},
            {"person_id": carol.pk, "key": "tone", "value": "shared", "text": "", "scope": "w"},
            {"person_id": None, "key": "team", "value": "x", "text": "", "scope": "w"},
        ],
    }
    inp = TurnInput(
        turn=turn,
        profile=cast(Any, None),
        document=None,
        context=cast(Any, context),
        template_kind=None,
        provided=None,
    )

    class _Decision:
        class record:
            decision = "act"

        reason = assumption = ""

    payload = turn_payload(inp, cast(Any, _Decision()))

    assert [m["value"] for m in payload["memory"]] == ["british"]
    assert OutsideAgent.objects.filter(agent=scout.agent).exists()
