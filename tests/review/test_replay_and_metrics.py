from __future__ import annotations

import json
import math

import pytest
from django.urls import reverse

from agents.memory.models import MemoryHistory, MemoryItem, Scope
from agents.review.metrics import compute_metrics, initiative_entropy, workspace_metrics
from collab.tasks.models import DocumentVersion, TaskStatus
from collab.tasks.services import post_message, set_task_status
from tests.factories import membership_of
from tests.review.conftest import (
    make_action,
    make_agent,
    make_feedback,
    make_question,
    make_suggestion,
    make_turn,
)

pytestmark = pytest.mark.django_db


def add_version(task, text, authors):
    return DocumentVersion.objects.create(document=task.document, text=text, authors=authors)


def remember(task, owner, text, scope=Scope.PERSONAL):
    item = MemoryItem.objects.create(
        owner=owner,
        scope=scope,
        workspace=task.workspace if scope != Scope.PERSONAL else None,
        text=text,
        source_task_id=task.pk,
    )
    MemoryHistory.objects.create(item=item, action="created", actor=owner, snapshot=item.snapshot())
    return item


def test_initiative_entropy_is_zero_for_one_voice_and_log2_n_for_equal_voices():
    assert initiative_entropy([5]) == 0.0
    assert initiative_entropy([3, 3]) == pytest.approx(1.0)
    assert initiative_entropy([2, 2, 2]) == pytest.approx(math.log2(3))
    assert initiative_entropy([1, 3]) == pytest.approx(
        -(0.25 * math.log2(0.25) + 0.75 * math.log2(0.75))
    )
    assert initiative_entropy([]) == 0.0
    assert initiative_entropy([0, 4]) == 0.0


def test_task_metrics_count_initiative_questions_suggestions_stops_and_time_to_done(
    workspace, task, alice, bob
):
    agent = make_agent(workspace)
    post_message(membership=membership_of(workspace, alice), task=task, body="Plan it")
    post_message(membership=membership_of(workspace, bob), task=task, body="Agree")
    add_version(task, "Day 1", ["bob"])
    noticed = make_turn(agent, task, trigger="message")
    make_action(noticed)
    make_turn(agent, task, trigger="mention")  # answering a mention is not initiative
    make_turn(agent, task, trigger="ask", requested_by=alice)
    make_turn(agent, task, status="cancelled", error="Stopped by bob.")
    make_question(noticed, answered_by=bob)
    make_question(noticed)
    make_suggestion(noticed, status="accepted", decided_by=alice)
    make_suggestion(noticed, status="edited", decided_by=alice)
    make_suggestion(noticed, status="rejected", decided_by=bob)
    set_task_status(membership=membership_of(workspace, alice), task=task, status=TaskStatus.DONE)

    metrics = compute_metrics(workspace.tasks.all())[task.pk]

    shares = {share.label: share.count for share in metrics.shares}
    assert shares == {"alice": 2, "bob": 2, "Scribe": 1}
    assert metrics.entropy == pytest.approx(initiative_entropy([2, 2, 1]))
    assert metrics.normalized_entropy == pytest.approx(metrics.entropy / math.log2(3))
    assert (metrics.questions_asked, metrics.questions_answered) == (2, 1)
    assert (
        metrics.suggestions_accepted,
        metrics.suggestions_edited,
        metrics.suggestions_rejected,
    ) == (1, 1, 1)
    assert metrics.stops == 1
    assert metrics.time_to_done is not None


def test_workspace_metrics_add_tasks_up_in_a_fixed_number_of_queries(
    workspace, alice, django_assert_max_num_queries
):
    from tests.factories import make_task

    owner = membership_of(workspace, alice)
    for n in range(5):
        task = make_task(workspace, title=f"Task {n}")
        post_message(membership=owner, task=task, body="Go")

    with django_assert_max_num_queries(11):  # ten, eleven once a guard has tripped
        summary = workspace_metrics(workspace.tasks.all())

    assert len(summary.tasks) == 5
    assert summary.total.shares[0].count == 5


def test_replay_lists_events_in_order_with_document_diffs(as_user, workspace, task, alice, bob):
    agent = make_agent(workspace)
    post_message(membership=membership_of(workspace, alice), task=task, body="Start **here**")
    add_version(task, "Day 1\n", ["alice"])
    turn = make_turn(agent, task)
    make_question(turn, answered_by=bob)
    make_suggestion(turn, status="accepted", decided_by=alice)
    add_version(task, "Day 1\nDay 2\n", ["bob"])

    response = as_user(alice).get(reverse("review:replay", args=[task.pk]))

    events = response.context["timeline"].events
    kinds = [event.kind for event in events]
    assert kinds[:2] == ["message", "version"]
    assert {"turn", "question", "answer", "suggestion", "decision"} <= set(kinds)
    assert kinds[-1] == "version"
    assert "+Day 2" in events[-1].diff
    assert [event.version_index for event in events][:2] == [-1, 0]
    html = response.content.decode()
    assert 'type="range"' in html
    assert "replay.js" in html
    versions = json.loads(
        html.split('id="replay-versions" type="application/json">')[1].split("</script>")[0]
    )
    assert versions == ["Day 1\n", "Day 1\nDay 2\n"]


def test_replay_hides_other_peoples_personal_memory_but_shows_team_memory(
    as_user, workspace, task, alice, bob, staff
):
    remember(task, bob, "Bob likes haiku")
    remember(task, alice, "Team uses metric units", scope=Scope.TEAM)

    html = as_user(staff).get(reverse("review:replay", args=[task.pk])).content.decode()
    own = as_user(bob).get(reverse("review:replay", args=[task.pk]))

    assert "Bob likes haiku" not in html
    assert "bob&#x27;s personal memory changed (private)" in html
    assert "Team uses metric units" in html
    assert own.status_code == 403  # bob is no owner: the replay is not his to read


def test_workspace_overview_shows_metrics_and_budget(as_user, workspace, task, alice):
    post_message(membership=membership_of(workspace, alice), task=task, body="Hello")

    html = (
        as_user(alice).get(reverse("review:workspace_home", args=[workspace.pk])).content.decode()
    )

    assert "Initiative entropy" in html
    assert task.title in html
    assert "No monthly budget" in html


def test_replay_and_metrics_show_the_feedback_people_gave(
    as_user, workspace, task, alice, bob, carol
):
    turn = make_turn(make_agent(workspace), task)
    question = make_question(turn)
    suggestion = make_suggestion(turn)
    make_feedback(bob, question, unnecessary=True, comment="We said <b>Lisbon</b> already")
    make_feedback(carol, question, rating="down")
    make_feedback(alice, suggestion, rating="up")
    make_feedback(carol, suggestion, rating="")  # clicked away: neither shown nor counted

    response = as_user(alice).get(reverse("review:replay", args=[task.pk]))
    metrics = compute_metrics(task.workspace.tasks.filter(pk=task.pk))[task.pk]
    overview = as_user(alice).get(reverse("review:workspace_home", args=[workspace.pk]))

    feedback = [e for e in response.context["timeline"].events if e.kind == "feedback"]
    assert [(e.actor, e.link_turn) for e in feedback] == [
        ("bob", turn.pk),
        ("carol", turn.pk),
        ("alice", turn.pk),
    ]
    assert "this question was unnecessary" in feedback[0].summary
    html = response.content.decode()
    assert "We said &lt;b&gt;Lisbon&lt;/b&gt; already" in html
    assert (metrics.thumbs_up, metrics.thumbs_down, metrics.unnecessary_questions) == (1, 1, 1)
    assert overview.context["metrics"].total.thumbs_down == 1
    assert "1 / 1 · 1" in overview.content.decode()


def test_time_to_done_runs_from_creation_to_the_latest_change_to_done(workspace, task, alice, bob):
    from datetime import timedelta

    from django.utils import timezone

    from collab.tasks.models import Task, TaskStatusChange

    # given a task created two hours ago, finished an hour ago, and chatted about since
    two_hours_ago = timezone.now() - timedelta(hours=2)
    Task.objects.filter(pk=task.pk).update(created_at=two_hours_ago)
    task.refresh_from_db()
    owner = membership_of(workspace, alice)
    set_task_status(membership=owner, task=task, status=TaskStatus.DONE)
    TaskStatusChange.objects.filter(task=task).update(changed_at=two_hours_ago + timedelta(hours=1))
    post_message(membership=membership_of(workspace, bob), task=task, body="Nice work")

    metrics = compute_metrics(workspace.tasks.all())[task.pk]

    # then later activity does not stretch it
    assert metrics.time_to_done == timedelta(hours=1)


def test_status_changes_are_recorded_once_each_and_replayed(as_user, workspace, task, alice):
    owner = membership_of(workspace, alice)
    set_task_status(membership=owner, task=task, status=TaskStatus.IN_PROGRESS)
    set_task_status(membership=owner, task=task, status=TaskStatus.IN_PROGRESS)  # no change
    set_task_status(membership=owner, task=task, status=TaskStatus.DONE)

    changes = list(task.status_changes.values_list("from_status", "to_status", "changed_by"))
    assert changes == [("open", "in_progress", alice.pk), ("in_progress", "done", alice.pk)]
    response = as_user(alice).get(reverse("review:replay", args=[task.pk]))
    summaries = [e.summary for e in response.context["timeline"].events if e.kind == "status"]
    assert summaries == ["Status: open → in progress", "Status: in progress → done"]


def test_one_stop_that_cancels_a_chain_counts_as_one_intervention(workspace, task, alice, bob):
    from agents.models import Chain

    writer, reviewer = make_agent(workspace, "Writer"), make_agent(workspace, "Reviewer")
    root = make_turn(writer, task, requested_by=alice)
    chain = Chain.objects.create(task=task, root_turn=root, budget=3, status="stopped")
    for agent in (writer, reviewer, reviewer):
        turn = make_turn(agent, task, status="cancelled", error="Stopped by bob.")
        turn.chain = chain
        turn.save(update_fields=["chain"])
    make_turn(writer, task, status="cancelled", error="Stopped by alice.")  # no chain

    metrics = compute_metrics(workspace.tasks.all())[task.pk]

    assert metrics.stops == 2


def test_a_turn_another_agent_started_is_agents_initiative(workspace, task, alice):
    writer, reviewer = make_agent(workspace, "Writer"), make_agent(workspace, "Reviewer")
    asked = make_turn(writer, task, trigger="mention", requested_by=alice)
    make_action(asked)
    handed_over = make_turn(reviewer, task, trigger="agent", requested_by=alice)
    make_action(handed_over)

    metrics = compute_metrics(workspace.tasks.all())[task.pk]

    assert {share.label: share.count for share in metrics.shares} == {"Reviewer": 1}
