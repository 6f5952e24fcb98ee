"""/api/tasks/{id}/questions and /suggestions: the agents pane's cards over the API."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from agents.models import Agent, Question, Suggestion
from collab.tasks import documents
from collab.tasks.models import Task
from tests.api.conftest import ApiClientFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def mira(task: Task) -> Agent:
    agent = Agent.objects.create(workspace=task.workspace, name="Mira")
    agent.tasks.add(task)
    return agent


def _post(client: Client, url: str, body: object = None) -> Any:
    return client.post(url, data={} if body is None else body, content_type="application/json")


def _write(task: Task, text: str) -> None:
    documents.apply_text_edit(task=task, new_text=text, author_label="setup")


def _text(task: Task) -> str:
    return documents.read_document(task=task).text


def test_every_member_lists_the_questions_of_a_task(
    request: pytest.FixtureRequest, task: Task, mira: Agent, api_as: ApiClientFactory
) -> None:
    first = Question.objects.create(task=task, agent=mira, text="Which dates?")
    second = Question.objects.create(task=task, agent=mira, text="Which venue?")
    for name in ("alice", "bob", "carol"):
        response = api_as(request.getfixturevalue(name)).get(f"/api/tasks/{task.pk}/questions")
        assert response.status_code == 200
        body = response.json()
        assert [q["id"] for q in body["questions"]] == [first.pk, second.pk]
        assert body["questions"][0]["agent"] == "Mira"
        assert body["questions"][0]["status"] == "open"
        assert (body["has_more"], body["next_before"]) == (False, None)


def test_question_pages_walk_back_and_filter_by_status(
    alice: User, task: Task, mira: Agent, api_as: ApiClientFactory
) -> None:
    asked = [Question.objects.create(task=task, agent=mira, text=f"q{n}?") for n in range(3)]
    Question.objects.filter(pk=asked[1].pk).update(status=Question.Status.ANSWERED)
    client = api_as(alice)
    url = f"/api/tasks/{task.pk}/questions"

    newest = client.get(url, {"limit": 2}).json()
    older = client.get(url, {"limit": 2, "before": newest["next_before"]}).json()
    answered = client.get(url, {"status": "answered"}).json()

    assert [q["id"] for q in newest["questions"]] == [asked[1].pk, asked[2].pk]
    assert newest["has_more"] is True
    assert [q["id"] for q in older["questions"]] == [asked[0].pk]
    assert older["has_more"] is False
    assert [q["id"] for q in answered["questions"]] == [asked[1].pk]


def test_an_editor_answers_a_question_and_a_second_answer_conflicts(
    bob: User, task: Task, mira: Agent, api_as: ApiClientFactory
) -> None:
    question = Question.objects.create(task=task, agent=mira, text="Which dates?")
    client = api_as(bob)
    url = f"/api/tasks/{task.pk}/questions/{question.pk}/answer"

    first = _post(client, url, {"answer": "  May 12  "})
    again = _post(client, url, {"answer": "May 13"})

    assert first.status_code == 200
    assert first.json() | {"answered_at": None} == first.json() | {
        "status": "answered",
        "answer": "May 12",
        "answered_by": "bob",
        "can_be_answered": False,
        "answered_at": None,
    }
    assert again.status_code == 409
    assert again.json() == {"detail": "This question is no longer open."}
    question.refresh_from_db()
    assert question.answer == "May 12"


def test_a_viewer_cannot_answer_and_an_outsider_sees_nothing(
    carol: User, mallory: User, task: Task, mira: Agent, api_as: ApiClientFactory
) -> None:
    question = Question.objects.create(task=task, agent=mira, text="Which dates?")
    url = f"/api/tasks/{task.pk}/questions/{question.pk}/answer"

    assert _post(api_as(carol), url, {"answer": "May 12"}).status_code == 403
    assert _post(api_as(mallory), url, {"answer": "May 12"}).status_code == 404
    assert api_as(mallory).get(f"/api/tasks/{task.pk}/questions").status_code == 404
    assert api_as(mallory).get(f"/api/tasks/{task.pk}/suggestions").status_code == 404
    question.refresh_from_db()
    assert question.status == Question.Status.OPEN


def test_a_blank_answer_answers_400_with_the_field(
    alice: User, task: Task, mira: Agent, api_as: ApiClientFactory
) -> None:
    question = Question.objects.create(task=task, agent=mira, text="Which dates?")
    url = f"/api/tasks/{task.pk}/questions/{question.pk}/answer"

    blank = _post(api_as(alice), url, {"answer": "   "})
    missing = _post(api_as(alice), url, {})

    assert blank.status_code == 400
    assert blank.json()["errors"] == {"answer": ["Write an answer first."]}
    assert missing.status_code == 400
    assert "answer" in missing.json()["errors"]


def test_a_question_of_another_task_answers_404(
    alice: User, task: Task, mira: Agent, api_as: ApiClientFactory
) -> None:
    other = Task.objects.create(workspace=task.workspace, title="Other")
    question = Question.objects.create(task=other, agent=mira, text="Which dates?")
    url = f"/api/tasks/{task.pk}/questions/{question.pk}/answer"
    assert _post(api_as(alice), url, {"answer": "May 12"}).status_code == 404


def test_an_editor_accepts_a_suggestion_as_proposed(
    bob: User, task: Task, mira: Agent, api_as: ApiClientFactory
) -> None:
    _write(task, "Venue: TBD\n")
    suggestion = Suggestion.objects.create(task=task, agent=mira, find="TBD", replace="boathouse")

    response = _post(api_as(bob), f"/api/tasks/{task.pk}/suggestions/{suggestion.pk}/accept")

    assert response.status_code == 200
    assert response.json()["status"] == "accepted"
    assert response.json()["decided_by"] == "bob"
    assert _text(task) == "Venue: boathouse\n"


def test_an_owner_accepts_a_suggestion_with_an_edited_text(
    alice: User, task: Task, mira: Agent, api_as: ApiClientFactory
) -> None:
    _write(task, "Venue: TBD 🏔️\n")
    suggestion = Suggestion.objects.create(task=task, agent=mira, find="TBD", replace="boathouse")
    url = f"/api/tasks/{task.pk}/suggestions/{suggestion.pk}/accept"

    response = _post(api_as(alice), url, {"text": "the 山 lodge"})

    assert response.status_code == 200
    assert (response.json()["status"], response.json()["final_text"]) == ("edited", "the 山 lodge")
    assert _text(task) == "Venue: the 山 lodge 🏔️\n"


def test_accepting_a_suggestion_whose_text_is_gone_conflicts_and_marks_it_stale(
    alice: User, task: Task, mira: Agent, api_as: ApiClientFactory
) -> None:
    _write(task, "Venue: the barn\n")
    suggestion = Suggestion.objects.create(task=task, agent=mira, find="TBD", replace="boathouse")

    response = _post(api_as(alice), f"/api/tasks/{task.pk}/suggestions/{suggestion.pk}/accept")

    assert response.status_code == 409
    assert "no longer contains" in response.json()["detail"]
    suggestion.refresh_from_db()
    assert suggestion.status == Suggestion.Status.STALE
    assert _text(task) == "Venue: the barn\n"


def test_a_decided_suggestion_cannot_be_accepted_or_rejected_again(
    alice: User, task: Task, mira: Agent, api_as: ApiClientFactory
) -> None:
    suggestion = Suggestion.objects.create(task=task, agent=mira, find="", replace="More.")
    client = api_as(alice)
    base = f"/api/tasks/{task.pk}/suggestions/{suggestion.pk}"

    rejected = _post(client, f"{base}/reject")
    accept_again = _post(client, f"{base}/accept")
    reject_again = _post(client, f"{base}/reject")

    assert rejected.status_code == 200
    assert rejected.json()["status"] == "rejected"
    assert accept_again.status_code == 409
    assert reject_again.status_code == 409
    assert reject_again.json() == {"detail": "This suggestion has already been decided."}
    assert "More." not in _text(task)


def test_a_viewer_cannot_decide_a_suggestion(
    carol: User, mallory: User, task: Task, mira: Agent, api_as: ApiClientFactory
) -> None:
    suggestion = Suggestion.objects.create(task=task, agent=mira, find="", replace="More.")
    base = f"/api/tasks/{task.pk}/suggestions/{suggestion.pk}"

    assert _post(api_as(carol), f"{base}/accept").status_code == 403
    assert _post(api_as(carol), f"{base}/reject").status_code == 403
    assert _post(api_as(mallory), f"{base}/reject").status_code == 404
    suggestion.refresh_from_db()
    assert suggestion.status == Suggestion.Status.PROPOSED


def test_suggestions_are_listed_with_their_status(
    carol: User, task: Task, mira: Agent, api_as: ApiClientFactory
) -> None:
    proposed = Suggestion.objects.create(task=task, agent=mira, find="", replace="A")
    rejected = Suggestion.objects.create(
        task=task, agent=mira, find="", replace="B", status=Suggestion.Status.REJECTED
    )
    url = f"/api/tasks/{task.pk}/suggestions"

    everything = api_as(carol).get(url).json()
    open_only = api_as(carol).get(url, {"status": "proposed"}).json()
    bad = api_as(carol).get(url, {"status": "maybe"})

    assert [(s["id"], s["status"]) for s in everything["suggestions"]] == [
        (proposed.pk, "proposed"),
        (rejected.pk, "rejected"),
    ]
    assert [s["id"] for s in open_only["suggestions"]] == [proposed.pk]
    assert bad.status_code == 400
    assert "status" in bad.json()["errors"]


def test_an_edited_text_that_is_too_long_answers_400(
    alice: User, task: Task, mira: Agent, api_as: ApiClientFactory
) -> None:
    suggestion = Suggestion.objects.create(task=task, agent=mira, find="", replace="A")
    url = f"/api/tasks/{task.pk}/suggestions/{suggestion.pk}/accept"
    response = _post(api_as(alice), url, {"text": "x" * 10_000})
    assert response.status_code == 400
    assert "text" in response.json()["errors"]


def test_an_editor_proposes_a_change_that_others_decide(
    task: Task, bob: User, carol: User, mallory: User, api_as: ApiClientFactory
) -> None:
    _write(task, "Venue: TBD\n")
    url = f"/api/tasks/{task.pk}/suggestions"
    change = {"find": "TBD", "replace": "the boathouse", "rationale": "Booked today"}

    assert _post(api_as(carol), url, change).status_code == 403
    assert _post(api_as(mallory), url, change).status_code == 404
    assert _post(api_as(bob), url, {"find": "TBD"}).status_code == 400
    gone = _post(api_as(bob), url, {**change, "find": "Dates: TBD"})
    assert gone.status_code == 409
    proposed = _post(api_as(bob), url, change)

    assert proposed.status_code == 201, proposed.json()
    assert (proposed.json()["proposed_by"], proposed.json()["status"]) == ("bob", "proposed")
    assert _text(task) == "Venue: TBD\n"  # nothing applied before someone accepts it
    suggestion = Suggestion.objects.get(pk=proposed.json()["id"])
    assert suggestion.proposed_by == bob
