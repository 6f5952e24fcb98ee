"""The shared plan and an agent's assumptions over the API (issue 29): read the plan, tick a
step, give a step to someone, list and undo an assumption, through the panel's services."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from agents.models import Agent, Assumption, PlanStep, Question, Turn, TurnStatus
from agents.services import suggestions as suggestion_services
from collab.tasks import documents
from collab.tasks.models import Task
from collab.workspaces.models import Workspace
from tests import factories
from tests.api.conftest import ApiClientFactory

pytestmark = pytest.mark.django_db


def _post(client: Client, url: str, body: object = None) -> Any:
    data = json.dumps({} if body is None else body)
    return client.post(url, data=data, content_type="application/json")


def _plan(workspace: Workspace, task: Task, bob: User) -> list[PlanStep]:
    bobs = factories.membership_of(workspace, bob)
    suggestion = suggestion_services.propose_suggestion(
        membership=bobs,
        task=task,
        find="",
        replace="\n\n## Plan\n- [ ] Book the venue (@bob)\n- [ ] Send the invitations\n",
    )
    suggestion_services.accept_suggestion(membership=bobs, suggestion=suggestion)
    return list(PlanStep.objects.filter(plan__task=task).order_by("index"))


def test_any_member_reads_the_plan_and_outsiders_get_404(
    workspace: Workspace,
    task: Task,
    bob: User,
    carol: User,
    mallory: User,
    api_as: ApiClientFactory,
) -> None:
    url = f"/api/tasks/{task.pk}/plan"
    assert api_as(carol).get(url).status_code == 404  # no plan yet
    _plan(workspace, task, bob)

    read = api_as(carol).get(url)

    assert read.status_code == 200
    plan = read.json()
    assert plan["status"] == "approved"
    assert [(s["text"], s["assignee"], s["status"]) for s in plan["steps"]] == [
        ("Book the venue", "bob", "todo"),
        ("Send the invitations", "", "todo"),
    ]
    assert {"value": f"person:{bob.pk}", "label": "bob"} in plan["choices"]
    assert api_as(mallory).get(url).status_code == 404


def test_an_editor_ticks_a_step_and_the_document_follows(
    workspace: Workspace,
    task: Task,
    bob: User,
    carol: User,
    mallory: User,
    api_as: ApiClientFactory,
) -> None:
    first, _second = _plan(workspace, task, bob)
    url = f"/api/tasks/{task.pk}/plan/steps/{first.pk}/tick"

    assert _post(api_as(carol), url, {"done": True}).status_code == 403
    assert _post(api_as(mallory), url, {"done": True}).status_code == 404
    assert _post(api_as(bob), url, {"done": "maybe"}).status_code == 400
    ticked = _post(api_as(bob), url, {"done": True})

    assert ticked.status_code == 200, ticked.json()
    assert (ticked.json()["status"], ticked.json()["decided_by"]) == ("done", "bob")
    assert "- [x] Book the venue (@bob, done, checked by bob)" in (
        documents.read_document(task=task).text
    )
    untick = _post(api_as(bob), url, {"done": False})
    assert untick.json()["status"] == "todo"


def test_a_step_is_given_to_an_agent_of_the_task_who_starts_on_it(
    workspace: Workspace, task: Task, alice: User, bob: User, carol: User, api_as: ApiClientFactory
) -> None:
    _first, second = _plan(workspace, task, bob)
    writer = Agent.objects.create(workspace=workspace, name="Writer")
    writer.tasks.add(task)
    stranger = Agent.objects.create(workspace=workspace, name="Stranger")  # not on the task
    url = f"/api/tasks/{task.pk}/plan/steps/{second.pk}/assign"

    assert _post(api_as(carol), url, {"assignee": f"agent:{writer.pk}"}).status_code == 403
    wrong = _post(api_as(bob), url, {"assignee": f"agent:{stranger.pk}"})
    assert wrong.status_code == 400
    assert "assignee" in wrong.json()["errors"]
    assert _post(api_as(bob), url, {"assignee": "Writer"}).status_code == 400
    given = _post(api_as(bob), url, {"assignee": f"agent:{writer.pk}"})

    assert given.status_code == 200, given.json()
    step = given.json()
    assert (step["assignee"], step["assignee_choice"], step["status"]) == (
        "Writer",
        f"agent:{writer.pk}",
        "doing",
    )
    assert Turn.objects.get(pk=step["turn_id"]).agent == writer
    nobody = _post(api_as(alice), url, {"assignee": ""})
    assert (nobody.json()["assignee"], nobody.json()["status"]) == ("", "todo")


def _assumption(workspace: Workspace, task: Task) -> Assumption:
    agent = Agent.objects.create(workspace=workspace, name="Curious")
    turn = Turn.objects.create(task=task, agent=agent, status=TurnStatus.DONE)
    question = Question.objects.create(
        task=task, agent=agent, text="Which city?", status=Question.Status.EXPIRED
    )
    return Assumption.objects.create(
        task=task, agent=agent, question=question, turn=turn, text="I assumed Paris.", minutes=10
    )


def test_an_assumption_is_listed_and_undone_once(
    workspace: Workspace,
    task: Task,
    bob: User,
    carol: User,
    mallory: User,
    api_as: ApiClientFactory,
) -> None:
    assumption = _assumption(workspace, task)
    listed = api_as(carol).get(f"/api/tasks/{task.pk}/assumptions")
    assert [a["text"] for a in listed.json()["assumptions"]] == ["I assumed Paris."]
    assert api_as(mallory).get(f"/api/tasks/{task.pk}/assumptions").status_code == 404
    url = f"/api/tasks/{task.pk}/assumptions/{assumption.pk}/undo"

    assert _post(api_as(carol), url).status_code == 403
    assert _post(api_as(mallory), url).status_code == 404
    undone = _post(api_as(bob), url)

    assert undone.status_code == 200, undone.json()
    assert (undone.json()["status"], undone.json()["undone_by"]) == ("undone", "bob")
    assert Question.objects.get(pk=assumption.question_id).status == Question.Status.OPEN
    again = _post(api_as(bob), url)
    assert again.status_code == 409
    assert "already been undone" in again.json()["detail"]
    assert _post(api_as(bob), f"/api/tasks/{task.pk}/assumptions/abc/undo").status_code == 400
