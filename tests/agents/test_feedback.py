"""Feedback on agent work: thumbs, comments, "this question was unnecessary", and how the
bandit learns from it."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import IntegrityError
from django.http import Http404
from django.urls import reverse

from agents import selectors
from agents.engine import runner
from agents.llm import fakes
from agents.models import (
    Action,
    Agent,
    AgentMode,
    Feedback,
    PolicyState,
    Question,
    Suggestion,
    Trigger,
    Turn,
)
from agents.outbox import events
from agents.policies.bandit import ContextualBandit
from agents.services import feedback as feedback_services
from agents.services import turns as turn_services
from collab.realtime import broadcast
from collab.tasks import documents
from collab.tasks.models import Message, Task
from collab.tasks.selectors import get_task_access
from collab.workspaces.models import Workspace
from tests import factories


@pytest.fixture(autouse=True)
def _no_jobs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(turn_services, "enqueue_turn", lambda turn_id: None)


@pytest.fixture
def published(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Agent events sent to the task's pages: the JSON payload and the browsers' HTML."""
    seen: list[dict[str, Any]] = []

    def capture(task_id: int, *, payload: dict[str, Any], html: str, html_readonly: str) -> None:
        seen.append({**payload, "html": html})

    monkeypatch.setattr(broadcast, "agent_event", capture)
    return seen


def _run(agent: Agent, task: Task, requested_by: User | None = None) -> Turn:
    turn = turn_services.start_turn(
        agent=agent, task=task, trigger=Trigger.ASK, requested_by=requested_by
    )
    runner.run_turn(turn_id=turn.pk)
    return Turn.objects.get(pk=turn.pk)


def _target(user: User, task: Task, kind: str, target_id: int) -> selectors.FeedbackTarget:
    return selectors.get_feedback_target(get_task_access(user, task.pk), kind, target_id)


def _rate(user: User, task: Task, kind: str, target_id: int, **arguments: Any) -> Feedback:
    return feedback_services.record_feedback(
        membership=factories.membership_of(task.workspace, user),
        target=_target(user, task, kind, target_id),
        **arguments,
    )


def _agent_message(task: Task) -> Message:
    return Message.objects.filter(task=task, kind=Message.Kind.AGENT).latest("id")


# --- The service ------------------------------------------------------------------------------


def test_thumbs_down_on_an_agent_message_is_stored_with_its_turn(
    bob: User, task: Task, mira: Agent
) -> None:
    turn = _run(mira, task)
    message = _agent_message(task)

    row = _rate(bob, task, "message", message.pk, rating="down", comment="  Too vague  ")

    assert (row.target_kind, row.message_id, row.turn_id) == ("message", message.pk, turn.pk)
    assert (row.rating, row.comment, row.unnecessary_question) == ("down", "Too vague", False)
    assert (row.workspace_id, row.task_id, row.user_id) == (task.workspace_id, task.pk, bob.pk)


def test_rating_again_changes_the_one_row_and_the_same_thumb_clears_it(
    bob: User, task: Task, mira: Agent
) -> None:
    _run(mira, task)
    message = _agent_message(task)

    _rate(bob, task, "message", message.pk, rating="up", toggle=True)
    _rate(bob, task, "message", message.pk, rating="down", toggle=True)
    assert Feedback.objects.get().rating == "down"

    _rate(bob, task, "message", message.pk, comment="Wrong venue")
    cleared = _rate(bob, task, "message", message.pk, rating="down", toggle=True)

    assert Feedback.objects.count() == 1
    assert (cleared.rating, cleared.comment) == ("", "Wrong venue")


def test_without_toggle_the_same_rating_is_kept(bob: User, task: Task, mira: Agent) -> None:
    _run(mira, task)
    message = _agent_message(task)
    _rate(bob, task, "message", message.pk, rating="up")
    assert _rate(bob, task, "message", message.pk, rating="up").rating == "up"


def test_a_question_can_be_marked_unnecessary_with_one_click(
    bob: User, task: Task, make_agent: Callable[..., Agent]
) -> None:
    _run(make_agent("Curious", behaviour="ask"), task)
    question = Question.objects.get()

    row = _rate(bob, task, "question", question.pk, unnecessary=True)

    assert row.unnecessary_question is True
    assert row.rating == ""


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"rating": "meh"}, "rating"),
        ({"comment": "x" * 1001}, "comment"),
        ({"unnecessary": True}, "unnecessary"),
        ({}, "rating"),
    ],
)
def test_bad_feedback_is_refused_with_reasons(
    bob: User, task: Task, mira: Agent, arguments: dict[str, Any], field: str
) -> None:
    _run(mira, task)
    with pytest.raises(ValidationError) as refused:
        _rate(bob, task, "message", _agent_message(task).pk, **arguments)
    assert field in refused.value.message_dict
    assert not Feedback.objects.exists()


def test_a_viewer_may_give_feedback(carol: User, task: Task, mira: Agent) -> None:
    _run(mira, task)
    assert _rate(carol, task, "message", _agent_message(task).pk, rating="up").rating == "up"


def test_an_outsider_cannot_reach_a_target(mallory: User, task: Task, mira: Agent) -> None:
    _run(mira, task)
    with pytest.raises(Http404):
        _target(mallory, task, "message", _agent_message(task).pk)


def test_peoples_own_messages_and_other_tasks_work_are_no_targets(
    workspace: Workspace, alice: User, bob: User, task: Task, mira: Agent
) -> None:
    from collab.tasks.services import post_message

    said = post_message(
        membership=factories.membership_of(workspace, bob), task=task, body="Hello"
    ).message
    other = factories.make_task(workspace, "Other")
    _run(mira, other)
    with pytest.raises(Http404):
        _target(bob, task, "message", said.pk)
    with pytest.raises(Http404):
        _target(bob, task, "message", _agent_message(other).pk)
    with pytest.raises(Http404):
        _target(bob, task, "poll", 1)


def test_the_database_refuses_a_row_with_two_targets(
    bob: User, task: Task, make_agent: Callable[..., Agent]
) -> None:
    _run(make_agent("Curious", behaviour="ask"), task)
    with pytest.raises(IntegrityError):
        Feedback.objects.create(
            user=bob,
            workspace=task.workspace,
            task=task,
            target_kind="question",
            question=Question.objects.get(),
            message=_agent_message(task),
        )


def test_feedback_updates_the_counts_on_every_page_after_commit(
    bob: User,
    carol: User,
    task: Task,
    mira: Agent,
    published: list[dict[str, Any]],
    django_capture_on_commit_callbacks: Any,
) -> None:
    _run(mira, task)
    message = _agent_message(task)
    published.clear()

    with django_capture_on_commit_callbacks(execute=True):
        _rate(bob, task, "message", message.pk, rating="up")
        assert published == []
    with django_capture_on_commit_callbacks(execute=True):
        _rate(carol, task, "message", message.pk, rating="down")

    event = published[-1]
    assert (event["type"], event["target_id"], event["up"], event["down"]) == (
        "agent.feedback",
        message.pk,
        1,
        1,
    )
    assert f'id="feedback-message-{message.pk}-counts" hx-swap-oob="true"' in event["html"]


# --- The task page and the htmx endpoint ------------------------------------------------------


def _feedback_url(task: Task, kind: str, target_id: int) -> str:
    return reverse("agents:feedback", args=[task.pk, kind, target_id])


def test_every_agent_message_question_suggestion_and_edit_has_feedback_buttons(
    as_user: Any, carol: User, task: Task, make_agent: Callable[..., Agent]
) -> None:
    _run(make_agent("Curious", behaviour="ask"), task)
    _run(make_agent("Helper", behaviour="suggest"), task)
    fakes.register_fake_behaviour(
        "fix-venue",
        lambda messages: json.dumps(
            {"actions": [{"kind": "edit", "text": "Venue", "find": "Lyon", "replace": "Kyoto"}]}
        ),
    )
    documents.apply_text_edit(task=task, new_text="Venue: Lyon\n", author_label="bob")
    _run(make_agent("Editor", behaviour="fix-venue", mode=AgentMode.MAY_EDIT), task)
    edit = Action.objects.get(kind="edit")

    page = as_user(carol).get(reverse("tasks:detail", args=[task.pk])).content.decode()

    for message in Message.objects.filter(kind=Message.Kind.AGENT):
        assert f'id="feedback-message-{message.pk}"' in page
    assert f'id="feedback-question-{Question.objects.get().pk}"' in page
    assert f'id="feedback-suggestion-{Suggestion.objects.get().pk}"' in page
    assert f'id="feedback-edit-{edit.pk}"' in page
    assert page.count('data-testid="unnecessary"') == 1  # on the question card only


def test_thumb_click_answers_the_widget_with_the_choice_and_a_comment_field(
    as_user: Any, bob: User, task: Task, mira: Agent
) -> None:
    _run(mira, task)
    message = _agent_message(task)

    response = as_user(bob).post(
        _feedback_url(task, "message", message.pk),
        {"rating": "down", "toggle": "1"},
        headers={"HX-Request": "true"},
    )

    assert response.status_code == 200
    html = response.content.decode()
    assert 'data-rating="down"' in html
    assert 'title="Not helpful" data-testid="thumb-down"' in html
    assert '<span class="label">Not helpful</span>' in html  # words, not an emoji font
    assert 'aria-pressed="true"' in html
    assert 'data-testid="feedback-comment"' in html
    assert Feedback.objects.get().rating == "down"


def test_the_page_shows_each_person_their_own_choice(
    as_user: Any, bob: User, carol: User, task: Task, mira: Agent
) -> None:
    _run(mira, task)
    message = _agent_message(task)
    _rate(bob, task, "message", message.pk, rating="down", comment="<b>no</b>")

    bobs = as_user(bob).get(reverse("tasks:detail", args=[task.pk])).content.decode()
    carols = as_user(carol).get(reverse("tasks:detail", args=[task.pk])).content.decode()

    assert 'data-kind="message" data-rating="down"' in bobs
    assert 'value="&lt;b&gt;no&lt;/b&gt;"' in bobs
    assert 'data-kind="message" data-rating=""' in carols
    assert "1 not helpful" in carols


def test_bad_feedback_posts_answer_400_with_reasons(
    as_user: Any, bob: User, task: Task, mira: Agent
) -> None:
    _run(mira, task)
    url = _feedback_url(task, "message", _agent_message(task).pk)

    bad_rating = as_user(bob).post(url, {"rating": "sideways"})
    unnecessary_message = as_user(bob).post(url, {"unnecessary": "1"})
    nothing = as_user(bob).post(url, {})

    assert bad_rating.status_code == 400
    assert b"Rate with up or down" in bad_rating.content
    assert unnecessary_message.status_code == 400
    assert b"Only a question" in unnecessary_message.content
    assert nothing.status_code == 400
    assert not Feedback.objects.exists()


def test_outsiders_get_404_and_feedback_needs_csrf(
    as_user: Any, bob: User, mallory: User, task: Task, mira: Agent
) -> None:
    from django.test import Client

    _run(mira, task)
    url = _feedback_url(task, "message", _agent_message(task).pk)

    assert as_user(mallory).post(url, {"rating": "up"}).status_code == 404
    assert (
        as_user(bob).post(_feedback_url(task, "message", 999999), {"rating": "up"}).status_code
        == 404
    )
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(bob)
    assert strict.post(url, {"rating": "up"}).status_code == 403
    assert not Feedback.objects.exists()


def test_without_htmx_the_feedback_form_redirects_back_to_the_task(
    as_user: Any, carol: User, task: Task, make_agent: Callable[..., Agent]
) -> None:
    _run(make_agent("Curious", behaviour="ask"), task)
    question = Question.objects.get()

    response = as_user(carol).post(
        _feedback_url(task, "question", question.pk), {"unnecessary": "1"}
    )

    assert response.status_code == 302
    assert Feedback.objects.get().unnecessary_question is True


def test_the_task_page_reads_feedback_in_one_query_however_many_agent_messages(
    as_user: Any,
    bob: User,
    task: Task,
    mira: Agent,
) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    _run(mira, task)
    client = as_user(bob)
    with CaptureQueriesContext(connection) as one:
        client.get(reverse("tasks:detail", args=[task.pk]))
    for _ in range(4):
        _run(mira, task)
    for message in Message.objects.filter(kind=Message.Kind.AGENT):
        _rate(bob, task, "message", message.pk, rating="up")
    with CaptureQueriesContext(connection) as many:
        client.get(reverse("tasks:detail", args=[task.pk]))
    assert len(many) == len(one)


def test_a_new_question_reaches_pages_with_empty_feedback_buttons(
    task: Task, make_agent: Callable[..., Agent], published: list[dict[str, Any]]
) -> None:
    events_seen = published
    question = Question.objects.create(task=task, agent=make_agent("Curious"), text="Which dates?")
    events.question_changed(question.pk, created=True)
    assert f'id="feedback-question-{question.pk}"' in events_seen[-1]["html"]


# --- The bandit learns from feedback ----------------------------------------------------------


@pytest.fixture
def bandit_agent(make_agent: Callable[..., Agent]) -> Agent:
    """An agent on the bandit policy whose model replies (when the bandit does not ask)."""
    return make_agent("Bandy", behaviour="echo", policy_name="bandit")


def _target_of(turn: Turn) -> tuple[str, int]:
    """Something the turn produced that people can rate."""
    question = Question.objects.filter(turn=turn).first()
    if question is not None:
        return "question", question.pk
    action = Action.objects.filter(turn=turn, result__has_key="message_id").first()
    assert action is not None
    return "message", action.result["message_id"]


def test_the_bandits_state_is_persisted_per_workspace_and_its_decision_logged(
    task: Task, bandit_agent: Agent
) -> None:
    first = _run(bandit_agent, task)
    _run(bandit_agent, task)

    state = PolicyState.objects.get()
    assert (state.workspace_id, state.user_id, state.policy_name) == (
        task.workspace_id,
        None,
        "bandit",
    )
    assert state.decisions == 2
    assert state.state["step"] == 2
    record = first.policy_decision
    assert "policy_state" not in record  # the state lives in its own row, not on every turn
    assert record["policy_state_ref"] == {"id": state.pk, "user_id": None}
    assert len(record["detail"]["features"]) == 8
    assert sum(record["detail"]["probabilities"].values()) == pytest.approx(1.0)


def test_a_thumbs_down_teaches_the_bandit_and_shifts_its_next_decision(
    bob: User, task: Task, bandit_agent: Agent
) -> None:
    turn = _run(bandit_agent, task)
    detail = turn.policy_decision["detail"]
    chosen, features = detail["action"], tuple(detail["features"])
    allowed = tuple(a for a, p in detail["probabilities"].items() if p > 0)
    before = PolicyState.objects.get().state
    kind, target_id = _target_of(turn)

    row = _rate(bob, task, kind, target_id, rating="down")

    after = PolicyState.objects.get()
    assert row.learned_reward == 0.0
    assert after.rewards == 1
    assert after.state["arms"][chosen]["pulls"] == before["arms"][chosen]["pulls"] + 1
    old_p, old_ucb = ContextualBandit(state=before).probabilities(features, allowed)
    new_p, new_ucb = ContextualBandit(state=after.state).probabilities(features, allowed)
    assert new_ucb[chosen] < old_ucb[chosen]
    assert old_p[chosen] == max(old_p.values())  # the fresh bandit's favourite (seeded draw)...
    assert new_p[chosen] < old_p[chosen]  # ...lost its place

    following = _run(bandit_agent, task)
    logged = following.policy_decision["detail"]
    assert tuple(logged["features"]) == features  # the same situation, decided afresh
    assert logged["probabilities"] == pytest.approx(new_p)
    assert logged["probabilities"][chosen] < detail["probabilities"][chosen]


def test_changing_a_rating_does_not_teach_the_bandit_twice(
    bob: User, task: Task, bandit_agent: Agent
) -> None:
    turn = _run(bandit_agent, task)
    kind, target_id = _target_of(turn)
    _rate(bob, task, kind, target_id, rating="down")
    learned = PolicyState.objects.get().state

    _rate(bob, task, kind, target_id, rating="up")
    _rate(bob, task, kind, target_id, rating="up", toggle=True)
    _rate(bob, task, kind, target_id, rating="down")

    state = PolicyState.objects.get()
    assert state.rewards == 1
    assert state.state == learned
    assert Feedback.objects.get().learned_reward == 0.0


def test_a_comment_alone_teaches_nothing_until_a_rating_comes(
    bob: User, task: Task, bandit_agent: Agent
) -> None:
    turn = _run(bandit_agent, task)
    kind, target_id = _target_of(turn)

    _rate(bob, task, kind, target_id, comment="Hmm")
    assert PolicyState.objects.get().rewards == 0

    _rate(bob, task, kind, target_id, rating="up")
    assert PolicyState.objects.get().rewards == 1
    assert Feedback.objects.get().learned_reward == 1.0


def test_an_unnecessary_question_is_a_zero_reward_for_asking(
    workspace: Workspace, bob: User, bandit_agent: Agent
) -> None:
    from agents.policies.bandit import REWARDS

    task = factories.make_task(workspace, "Write a blog post")  # a template with open slots
    PolicyState.objects.create(  # explore uniformly, so that asking comes up soon
        workspace=workspace, policy_name="bandit", state=ContextualBandit(epsilon=1.0).to_state()
    )
    turn = _run(bandit_agent, task)
    while not Question.objects.filter(turn=turn).exists():  # the draws are seeded: no flakes
        assert PolicyState.objects.get().decisions < 30, "the bandit never asked"
        turn = _run(bandit_agent, task)
    question = Question.objects.get(turn=turn)
    pulls = PolicyState.objects.get().state["arms"]["ask"]["pulls"]

    row = _rate(bob, task, "question", question.pk, unnecessary=True)

    assert row.learned_reward == REWARDS["unnecessary_question"] == 0.0
    assert PolicyState.objects.get().state["arms"]["ask"]["pulls"] == pulls + 1


def test_feedback_on_a_policy_that_does_not_learn_changes_no_state(
    bob: User, task: Task, mira: Agent
) -> None:
    _run(mira, task)
    row = _rate(bob, task, "message", _agent_message(task).pk, rating="down")
    assert row.learned_reward is None
    assert not PolicyState.objects.exists()


def test_an_agent_that_learns_per_person_keeps_one_state_per_requester(
    alice: User, bob: User, task: Task, bandit_agent: Agent
) -> None:
    bandit_agent.learn_per_person = True
    bandit_agent.save()
    bobs_turn = _run(bandit_agent, task, requested_by=bob)
    _run(bandit_agent, task, requested_by=alice)
    _run(bandit_agent, task)  # an idle-style turn nobody asked for: the workspace's state

    states = {s.user_id: s for s in PolicyState.objects.all()}
    assert set(states) == {alice.pk, bob.pk, None}
    assert bobs_turn.policy_decision["policy_state_ref"]["user_id"] == bob.pk

    kind, target_id = _target_of(bobs_turn)
    _rate(alice, task, kind, target_id, rating="down")

    rewards = {s.user_id: s.rewards for s in PolicyState.objects.all()}
    assert rewards == {bob.pk: 1, alice.pk: 0, None: 0}


@pytest.mark.django_db(transaction=True)
def test_concurrent_turns_queue_on_the_state_row_and_lose_no_update(
    task: Task, bandit_agent: Agent
) -> None:
    import threading
    import time

    from django.db import connection, connections

    from agents.engine.policies_bridge import policy_decision
    from agents.services.learning import decide_with_state

    if connection.vendor != "postgresql":
        pytest.skip("row locks need Postgres (SQLite serialises every writer anyway)")
    first, second = (
        Turn.objects.select_related("agent", "task").get(
            pk=Turn.objects.create(agent=bandit_agent, task=task, trigger=Trigger.ASK).pk
        )
        for _ in range(2)
    )
    decide_with_state(turn=first, context={"request": "warm up"}, decide=policy_decision)
    holding = threading.Event()

    def someone_waits_for_a_lock() -> bool:
        with connections["default"].cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                "AND datname = current_database()"
            )
            return bool(cursor.fetchone()[0])

    def slow_decide(*args: Any, **kwargs: Any) -> dict[str, Any]:
        holding.set()
        for _ in range(200):  # until the other turn is blocked on the row (or 10 s, then go on)
            if someone_waits_for_a_lock():
                break
            time.sleep(0.05)
        return policy_decision(*args, **kwargs)

    def run(turn: Turn, decide: Any) -> None:
        try:
            decide_with_state(turn=turn, context={"request": "plan"}, decide=decide)
        finally:
            connections.close_all()

    a = threading.Thread(target=run, args=(first, slow_decide))
    a.start()
    holding.wait(timeout=30)
    b = threading.Thread(target=run, args=(second, policy_decision))
    b.start()
    a.join(timeout=60)
    b.join(timeout=60)

    state = PolicyState.objects.get()
    assert state.decisions == 3
    assert state.state["step"] == 3


def test_an_owner_makes_a_bandit_agent_learn_per_person_on_its_settings_page(
    as_user: Any, alice: User, workspace: Workspace
) -> None:
    response = as_user(alice).post(
        reverse("agents:manage", args=[workspace.pk]),
        {
            "name": "Bandy",
            "colour": "#112233",
            "policy_name": "bandit",
            "mode": "suggest_only",
            "learn_per_person": "on",
        },
    )
    assert response.status_code == 302
    assert Agent.objects.get().learn_per_person is True


def test_a_direct_edit_reaches_pages_as_a_notice_with_feedback_buttons(
    task: Task,
    make_agent: Callable[..., Agent],
    published: list[dict[str, Any]],
    django_capture_on_commit_callbacks: Any,
) -> None:
    fakes.register_fake_behaviour(
        "fix-venue",
        lambda messages: json.dumps(
            {"actions": [{"kind": "edit", "text": "Venue", "find": "Lyon", "replace": "<Kyoto>"}]}
        ),
    )
    documents.apply_text_edit(task=task, new_text="Venue: Lyon\n", author_label="bob")
    editor = make_agent("Editor", behaviour="fix-venue", mode=AgentMode.MAY_EDIT)
    with django_capture_on_commit_callbacks(execute=True):
        _run(editor, task)
    edit = Action.objects.get(kind="edit")

    event = next(e for e in published if e["type"] == "agent.edit")

    assert event["action_id"] == edit.pk
    assert 'hx-swap-oob="afterbegin:#agent-edits"' in event["html"]
    assert f'id="feedback-edit-{edit.pk}"' in event["html"]
    # the added line as a person reads it (no diff marker), its text escaped
    assert "<del>Lyon</del><ins>&lt;Kyoto&gt;</ins>" in event["html"]
