from __future__ import annotations

import csv
import io
import json
from datetime import timedelta

import pytest
from django.http import StreamingHttpResponse
from django.urls import reverse
from django.utils import timezone

from agents.memory.models import MemoryHistory, MemoryItem, MemorySettings, Scope
from agents.models import Chain, Turn
from agents.review.models import ReviewSettings
from agents.review.privacy import MEMORY_WITHHELD
from collab.audit.models import AuditEvent
from collab.tasks.models import DocumentVersion
from collab.tasks.services import post_message
from tests import factories
from tests.factories import membership_of
from tests.review.conftest import (
    make_agent,
    make_call,
    make_feedback,
    make_question,
    make_suggestion,
    make_turn,
)

pytestmark = pytest.mark.django_db
CO_GYM_FIELDS = {"timestamp", "role", "action", "action_type", "action_status"}


def read_jsonl(response):
    assert isinstance(response, StreamingHttpResponse)
    body = b"".join(response.streaming_content).decode()
    return [json.loads(line) for line in body.splitlines()]


def read_csv(response):
    assert isinstance(response, StreamingHttpResponse)
    return list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))


def remember(task, owner, text, scope=Scope.PERSONAL):
    item = MemoryItem.objects.create(
        owner=owner,
        scope=scope,
        workspace=task.workspace if scope != Scope.PERSONAL else None,
        text=text,
        source_task_id=task.pk,
    )
    MemoryHistory.objects.create(item=item, action="created", actor=owner, snapshot=item.snapshot())


@pytest.fixture
def busy_task(workspace, task, alice, bob):
    agent = make_agent(workspace)
    post_message(membership=membership_of(workspace, alice), task=task, body="Plan the offsite")
    DocumentVersion.objects.create(document=task.document, text="Day 1", authors=["alice"])
    turn = make_turn(
        agent,
        task,
        requested_by=alice,
        context={
            "memory": ["(bob's preference) Bob likes haiku", "(team preference) Metric units"]
        },
    )
    make_call(
        turn,
        prompt="Known: (bob's preference) Bob likes haiku\n(team preference) Metric units",
        response="Noted: Bob likes haiku, and Metric units.",  # echoes the prompt
    )
    make_question(turn, answered_by=bob)
    make_suggestion(turn, status="accepted", decided_by=alice)
    return task


def test_a_task_exports_as_jsonl_one_event_per_line_in_time_order(as_user, busy_task, alice):
    response = as_user(alice).get(reverse("review:task_export", args=[busy_task.pk]))

    events = read_jsonl(response)
    assert response["Content-Type"] == "application/x-ndjson"
    assert "attachment" in response["Content-Disposition"]
    assert all(set(event) >= CO_GYM_FIELDS for event in events)
    assert [e["timestamp"] for e in events] == sorted(e["timestamp"] for e in events)
    kinds = {event["event"] for event in events}
    assert {
        "message.posted",
        "document.version",
        "turn",
        "model.call",
        "question.asked",
        "question.answered",
        "suggestion.proposed",
        "suggestion.decided",
    } <= kinds
    message = next(e for e in events if e["event"] == "message.posted")
    assert message["role"] == "user_alice"
    assert message["action"] == "SEND_TEAMMATE_MESSAGE(message=Plan the offsite)"
    assert message["action_type"] == "collaborative"
    assert message["action_status"] == "succeeded"
    version = next(e for e in events if e["event"] == "document.version")
    assert version["action"] == "EDITOR_UPDATE(text=Day 1)"
    assert version["action_type"] == "environment"


def test_every_export_is_audited(as_user, busy_task, alice):
    as_user(alice).get(reverse("review:task_export", args=[busy_task.pk]))
    as_user(alice).get(
        reverse("review:workspace_turns_csv", args=[busy_task.workspace_id]),
        {"since": "2026-01-01"},
    )

    events = AuditEvent.objects.filter(action=AuditEvent.Action.EXPORT).order_by("id")
    assert [(e.actor_label, e.target, e.workspace_id) for e in events] == [
        ("alice", f"task {busy_task.pk} as jsonl", busy_task.workspace_id),
        (
            "alice",
            f"workspace {busy_task.workspace_id} from 2026-01-01 to today as csv",
            busy_task.workspace_id,
        ),
    ]
    assert events[0].data["personal_memory"] is False


def test_personal_memory_is_withheld_from_exports_by_default(as_user, busy_task, alice, bob):
    remember(busy_task, bob, "Bob likes haiku")
    remember(busy_task, alice, "Metric units", scope=Scope.TEAM)
    MemorySettings.objects.create(
        user=bob, admin_access_allowed=True
    )  # the workspace has not allowed it

    body = json.dumps(
        read_jsonl(as_user(alice).get(reverse("review:task_export", args=[busy_task.pk])))
    )

    assert "Bob likes haiku" not in body
    assert MEMORY_WITHHELD in body  # the prompt's personal line is withheld
    assert "Metric units" in body  # team memory is the workspace's


def test_personal_memory_is_exported_when_the_workspace_and_the_person_allow_it(
    as_user, busy_task, alice, bob, carol
):
    ReviewSettings.objects.create(workspace=busy_task.workspace, export_personal_memory=True)
    MemorySettings.objects.create(user=bob, admin_access_allowed=True)
    remember(busy_task, bob, "Bob likes haiku")
    remember(busy_task, carol, "Carol hates mornings")  # carol did not allow it

    events = read_jsonl(as_user(alice).get(reverse("review:task_export", args=[busy_task.pk])))

    memory = [e["data"]["text"] for e in events if e["event"] == "memory.changed"]
    assert memory == ["Bob likes haiku"]
    assert AuditEvent.objects.get(action=AuditEvent.Action.EXPORT).data["personal_memory"] is True


def test_a_date_range_export_keeps_to_its_range_and_workspace(
    as_user, busy_task, alice, other_workspace, mallory
):
    other_task = factories.make_task(other_workspace)
    post_message(membership=membership_of(other_workspace, mallory), task=other_task, body="Secret")
    tomorrow = (timezone.now() + timedelta(days=1)).date()

    inside = read_jsonl(
        as_user(alice).get(reverse("review:workspace_export", args=[busy_task.workspace_id]))
    )
    later = read_jsonl(
        as_user(alice).get(
            reverse("review:workspace_export", args=[busy_task.workspace_id]), {"since": tomorrow}
        )
    )

    assert inside
    assert not later
    assert {e["workspace_id"] for e in inside} == {busy_task.workspace_id}
    assert "Secret" not in json.dumps(inside)


def test_staff_export_everything(as_user, busy_task, staff, other_workspace, mallory):
    other_task = factories.make_task(other_workspace)
    post_message(
        membership=membership_of(other_workspace, mallory), task=other_task, body="Elsewhere"
    )

    events = read_jsonl(as_user(staff).get(reverse("review:site_export")))

    assert {e["workspace_id"] for e in events} == {busy_task.workspace_id, other_workspace.pk}


def test_turns_export_as_csv(as_user, busy_task, alice):
    rows = read_csv(
        as_user(alice).get(reverse("review:workspace_turns_csv", args=[busy_task.workspace_id]))
    )

    assert len(rows) == 1
    row = rows[0]
    assert (row["agent"], row["policy_decision"], row["tokens_in"], row["requested_by"]) == (
        "Scribe",
        "act",
        "100",
        "alice",
    )
    assert row["task"] == busy_task.title


def test_bad_export_ranges_answer_400_and_are_not_audited(as_user, workspace, alice):
    url = reverse("review:workspace_export", args=[workspace.pk])

    response = as_user(alice).get(url, {"since": "2026-05-02", "until": "2026-05-01"})

    assert response.status_code == 400
    assert not AuditEvent.objects.filter(action=AuditEvent.Action.EXPORT).exists()


def test_exports_read_nothing_until_the_response_is_consumed(busy_task, django_assert_num_queries):
    from agents.review.exports import ExportSpec, jsonl_lines

    with django_assert_num_queries(0):
        lines = jsonl_lines(ExportSpec(task_id=busy_task.pk), None)

    first = next(lines)
    assert json.loads(first)["task_id"] == busy_task.pk
    assert sum(1 for _ in lines) >= 7


def test_exports_and_settings_changes_can_be_found_in_the_audit_log(as_user, busy_task, alice):
    client = as_user(alice)
    client.get(reverse("review:task_export", args=[busy_task.pk]))
    client.post(
        reverse("review:workspace_settings", args=[busy_task.workspace_id]),
        {"monthly_budget": "5", "warn_at_percent": "80", "hard_stop": "on"},
    )
    audit = reverse("audit:workspace", args=[busy_task.workspace_id])

    exports = client.get(audit, {"action": "export"}).context["page"]
    changes = client.get(audit, {"action": "settings.changed"}).context["page"]

    assert [event.target for event in exports] == [f"task {busy_task.pk} as jsonl"]
    assert [event.target for event in changes] == ["review settings"]


def test_the_export_carries_feedback_and_the_logged_policy_probabilities(
    as_user, busy_task, alice, bob, carol
):
    from agents.models import Question, Turn

    turn = Turn.objects.get(task=busy_task)
    Turn.objects.filter(pk=turn.pk).update(
        policy_decision={
            "decision": "ask",
            "detail": {"probabilities": {"ask": 0.9, "act": 0.1}, "features": [1.0, 0.5]},
        }
    )
    question = Question.objects.get(task=busy_task)
    make_feedback(carol, question, rating="down", comment="Not needed", unnecessary=True)
    make_feedback(bob, question, rating="")  # clicked away: not exported

    events = read_jsonl(as_user(alice).get(reverse("review:task_export", args=[busy_task.pk])))

    given = [e for e in events if e["event"] == "feedback.given"]
    assert len(given) == 1
    assert given[0]["role"] == "user_carol"
    assert given[0]["action"] == (
        f"FEEDBACK(target=question:{question.pk}, rating=down, unnecessary_question=true)"
    )
    assert given[0]["data"] | {"first_given_at": None} == {
        "feedback_id": given[0]["data"]["feedback_id"],
        "target_kind": "question",
        "target_id": question.pk,
        "turn_id": turn.pk,
        "rating": "down",
        "comment": "Not needed",
        "unnecessary_question": True,
        "learned_reward": None,
        "first_given_at": None,
    }
    logged = next(e for e in events if e["event"] == "turn")["data"]
    assert logged["policy_probabilities"] == {"ask": 0.9, "act": 0.1}
    assert logged["policy_features"] == [1.0, 0.5]


def test_a_turn_another_agent_addressed_exports_its_parent_turn_chain_and_hop_kind(
    as_user, workspace, task, alice
):
    agent = make_agent(workspace)
    asker = make_turn(agent, task)
    chain = Chain.objects.create(task=task, root_turn=asker, budget=3)
    addressed = make_turn(make_agent(workspace, "Critic"), task, trigger="agent")
    Turn.objects.filter(pk=asker.pk).update(chain=chain)
    Turn.objects.filter(pk=addressed.pk).update(parent=asker, chain=chain, hop_kind="review")

    events = read_jsonl(as_user(alice).get(reverse("review:task_export", args=[task.pk])))
    rows = read_csv(
        as_user(alice).get(reverse("review:workspace_turns_csv", args=[task.workspace_id]))
    )

    turns = {e["data"]["turn_id"]: e["data"] for e in events if e["event"] == "turn"}
    assert (turns[addressed.pk]["parent_turn_id"], turns[addressed.pk]["hop_kind"]) == (
        asker.pk,
        "review",
    )
    assert turns[addressed.pk]["chain_id"] == turns[asker.pk]["chain_id"] == chain.pk
    assert (turns[asker.pk]["parent_turn_id"], turns[asker.pk]["hop_kind"]) == (None, None)
    by_id = {row["turn_id"]: row for row in rows}
    assert (by_id[str(addressed.pk)]["parent_turn"], by_id[str(addressed.pk)]["hop_kind"]) == (
        str(asker.pk),
        "review",
    )
    assert by_id[str(asker.pk)]["parent_turn"] == ""
