"""Review over the API (/api/workspaces/{id}/review/..., /api/tasks/{id}/turns/{id}/trace,
/api/tasks/{id}/review/export, /api/review/... for staff): the review pages' filters, trace and
exports through the same code, for owners and staff only (other members 403, outsiders 404)."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from agents.models import Agent, Turn
from agents.review.privacy import MEMORY_WITHHELD
from collab.audit.models import AuditEvent
from collab.tasks.models import Task
from collab.tasks.services import post_message
from tests import factories
from tests.api.conftest import ApiClientFactory
from tests.factories import membership_of
from tests.review.conftest import make_action, make_agent, make_call, make_suggestion, make_turn
from tests.review.test_trace_privacy import SECRET, remember, turn_with_memory

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(db: None) -> User:
    user = factories.make_user("sam")
    user.is_staff = True
    user.save(update_fields=["is_staff"])
    return user


@pytest.fixture
def agent(task: Task) -> Agent:
    return make_agent(task.workspace)


@pytest.fixture
def turns(agent: Agent, task: Task, alice: User) -> list[Turn]:
    post_message(membership=membership_of(task.workspace, alice), task=task, body="Plan it")
    done = make_turn(agent, task, requested_by=alice)
    make_call(done, prompt="Plan the offsite in Lisbon")
    make_action(done)
    make_suggestion(done, status="accepted", decided_by=alice)
    failed = make_turn(agent, task, status="failed", error="The model timed out")
    make_call(failed, prompt="Plan the offsite again", error="timeout")
    return [done, failed]


def _traces(client: Client, task: Task, **filters: Any) -> Any:
    return client.get(f"/api/workspaces/{task.workspace_id}/review/traces", filters)


def test_an_owner_lists_model_calls_and_turns_with_the_review_filters(
    api_as: ApiClientFactory, alice: User, task: Task, turns: list[Turn]
) -> None:
    client = api_as(alice)

    calls = _traces(client, task)
    failed = _traces(client, task, view="turns", status="failed")
    searched = _traces(client, task, q="Lisbon")

    assert calls.status_code == 200
    assert calls.json()["view"] == "calls"
    assert {row["turn_id"] for row in calls.json()["rows"]} == {t.pk for t in turns}
    assert [row["id"] for row in failed.json()["rows"]] == [turns[1].pk]
    assert failed.json()["rows"][0]["status"] == "failed"
    assert [row["turn_id"] for row in searched.json()["rows"]] == [turns[0].pk]


def test_a_filter_the_review_page_refuses_answers_400_with_the_field(
    api_as: ApiClientFactory, alice: User, mallory: User, task: Task, turns: list[Turn]
) -> None:
    elsewhere = make_agent(factories.make_workspace(mallory, name="Elsewhere"), name="Spy")

    response = _traces(api_as(alice), task, agent=elsewhere.pk)
    bad_page = _traces(api_as(alice), task, before="not-a-cursor")

    assert response.status_code == 400
    assert "agent" in response.json()["errors"]
    assert bad_page.status_code == 400
    assert bad_page.json()["errors"]["before"] == ["Not a page of this list."]


def test_review_is_for_owners_other_members_get_403_and_outsiders_404(
    api_as: ApiClientFactory, bob: User, carol: User, mallory: User, task: Task, turns: list[Turn]
) -> None:
    urls = [
        f"/api/workspaces/{task.workspace_id}/review/traces",
        f"/api/workspaces/{task.workspace_id}/review/export",
        f"/api/workspaces/{task.workspace_id}/review/turns.csv",
        f"/api/tasks/{task.pk}/turns/{turns[0].pk}/trace",
        f"/api/tasks/{task.pk}/review/export",
    ]
    for url in urls:
        for member in (bob, carol):
            assert api_as(member).get(url).status_code == 403, url
        refused = api_as(mallory).get(url)
        assert refused.status_code == 404, url
        assert refused.json() == {"detail": "Not found."}
    assert not AuditEvent.objects.filter(action=AuditEvent.Action.EXPORT).exists()


def test_a_turns_trace_has_its_calls_actions_and_cards_and_withholds_unshared_memory(
    api_as: ApiClientFactory, alice: User, bob: User, agent: Agent, task: Task
) -> None:
    remember(bob, task, SECRET)
    turn = turn_with_memory(agent, task, bob)
    make_action(turn)
    make_suggestion(turn)

    response = api_as(alice).get(f"/api/tasks/{task.pk}/turns/{turn.pk}/trace")

    assert response.status_code == 200
    trace = response.json()
    assert trace["id"] == turn.pk
    assert trace["requested_by"] == "bob"
    assert trace["policy_decision"]["decision"] == "act"
    assert [c["model"] for c in trace["calls"]] == ["echo"]
    assert [a["kind"] for a in trace["actions"]] == ["reply"]
    assert [s["replace"] for s in trace["suggestions"]] == ["Day 1: arrive"]
    assert SECRET not in response.content.decode()
    assert MEMORY_WITHHELD in response.content.decode()


def test_a_turn_of_another_task_is_not_found(
    api_as: ApiClientFactory, alice: User, task: Task, turns: list[Turn]
) -> None:
    other = factories.make_task(task.workspace, title="Another")

    response = api_as(alice).get(f"/api/tasks/{other.pk}/turns/{turns[0].pk}/trace")

    assert response.status_code == 404


def _body(response: Any) -> bytes:
    return b"".join(response.streaming_content)


def test_exports_are_the_review_pages_exports_and_are_audited(
    api_as: ApiClientFactory,
    as_user: Any,
    alice: User,
    task: Task,
    turns: list[Turn],
) -> None:
    api, page = api_as(alice), as_user(alice)
    pairs = [
        (f"/api/tasks/{task.pk}/review/export", reverse("review:task_export", args=[task.pk])),
        (
            f"/api/workspaces/{task.workspace_id}/review/export",
            reverse("review:workspace_export", args=[task.workspace_id]),
        ),
        (
            f"/api/workspaces/{task.workspace_id}/review/turns.csv",
            reverse("review:workspace_turns_csv", args=[task.workspace_id]),
        ),
    ]
    for api_url, page_url in pairs:
        from_api, from_page = api.get(api_url), page.get(page_url)
        assert from_api.status_code == 200
        assert from_api["Content-Type"] == from_page["Content-Type"]
        body = _body(from_api)
        assert body
        assert body == _body(from_page)
    exports = AuditEvent.objects.filter(action=AuditEvent.Action.EXPORT, actor=alice)
    assert exports.count() == 6


def test_an_export_range_that_ends_before_it_starts_answers_400(
    api_as: ApiClientFactory, alice: User, task: Task
) -> None:
    response = api_as(alice).get(
        f"/api/workspaces/{task.workspace_id}/review/export",
        {"since": "2026-12-05", "until": "2026-12-01"},
    )

    assert response.status_code == 400
    assert response.json()["detail"] == "The start is after the end."
    assert not AuditEvent.objects.filter(action=AuditEvent.Action.EXPORT).exists()


def test_staff_review_every_workspace_and_nobody_else_finds_those_operations(
    api_as: ApiClientFactory, staff: User, alice: User, task: Task, turns: list[Turn]
) -> None:
    traces = api_as(staff).get("/api/review/traces", {"workspace": task.workspace_id})
    export = api_as(staff).get("/api/review/export")
    trace = api_as(staff).get(f"/api/tasks/{task.pk}/turns/{turns[0].pk}/trace")

    assert traces.status_code == 200
    assert {row["turn_id"] for row in traces.json()["rows"]} == {t.pk for t in turns}
    assert export.status_code == 200
    assert f'"task_id": {task.pk}'.encode() in _body(export)
    assert trace.status_code == 200
    for url in ("/api/review/traces", "/api/review/export", "/api/review/turns.csv"):
        assert api_as(alice).get(url).status_code == 404, url
