"""POST /api/tasks/{id}/feedback: the same operation as the thumbs under agent work."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from agents.models import Agent, Feedback, Question
from collab.tasks.models import Message, Task
from tests.api.conftest import ApiClientFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def agent_message(task: Task) -> Message:
    return Message.objects.create(
        task=task, kind=Message.Kind.AGENT, author_name="Mira", body="Here is the plan."
    )


@pytest.fixture
def question(task: Task) -> Question:
    agent = Agent.objects.create(workspace=task.workspace, name="Mira")
    return Question.objects.create(task=task, agent=agent, text="Which dates?")


def _post(client, task: Task, body: object):  # type: ignore[no-untyped-def]
    return client.post(f"/api/tasks/{task.pk}/feedback", data=body, content_type="application/json")


def test_a_member_rates_an_agent_message_and_can_change_it(
    carol: User, task: Task, agent_message: Message, api_as: ApiClientFactory
) -> None:
    client = api_as(carol)
    target = {"target_kind": "message", "target_id": agent_message.pk}

    first = _post(client, task, {**target, "rating": "down", "comment": "Too long"})
    second = _post(client, task, {**target, "rating": "up"})

    assert first.status_code == 200
    assert first.json()["rating"] == "down"
    body = second.json()
    assert (body["rating"], body["comment"], body["target_id"]) == (
        "up",
        "Too long",
        agent_message.pk,
    )
    assert Feedback.objects.count() == 1


def test_null_rating_clears_it_and_a_question_can_be_unnecessary(
    bob: User, task: Task, question: Question, api_as: ApiClientFactory
) -> None:
    client = api_as(bob)
    target = {"target_kind": "question", "target_id": question.pk}
    _post(client, task, {**target, "rating": "up"})

    body = _post(client, task, {**target, "rating": None, "unnecessary": True}).json()

    assert (body["rating"], body["unnecessary"]) == (None, True)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"target_kind": "message", "rating": "meh"}, "rating"),
        ({"target_kind": "poll", "rating": "up"}, "target_kind"),
        ({"target_kind": "message", "comment": "x" * 1001}, "comment"),
        ({"target_kind": "message", "unnecessary": True}, "unnecessary"),
        ({"target_kind": "message"}, "rating"),
        ({"target_kind": "message", "rating": "up", "extra": 1}, "extra"),
    ],
)
def test_bad_feedback_answers_400_with_field_errors(
    bob: User,
    task: Task,
    agent_message: Message,
    api_as: ApiClientFactory,
    body: dict[str, object],
    field: str,
) -> None:
    response = _post(api_as(bob), task, {"target_id": agent_message.pk, **body})
    assert response.status_code == 400
    assert field in response.json()["errors"]
    assert not Feedback.objects.exists()


def test_outsiders_and_unknown_targets_get_404(
    mallory: User, bob: User, task: Task, agent_message: Message, api_as: ApiClientFactory
) -> None:
    target = {"target_kind": "message", "target_id": agent_message.pk, "rating": "up"}
    assert _post(api_as(mallory), task, target).status_code == 404
    missing = {**target, "target_id": agent_message.pk + 1000}
    assert _post(api_as(bob), task, missing).status_code == 404
