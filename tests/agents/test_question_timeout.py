"""When nobody answers an agent's question in time, it goes ahead on its best guess, says what
it assumed in the chat, and people can undo what it did."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.urls import reverse
from django.utils import timezone

from agents import jobs
from agents.engine import runner
from agents.llm import fakes
from agents.models import (
    Action,
    Agent,
    AgentMode,
    Assumption,
    ModelCall,
    Question,
    Trigger,
    Turn,
    TurnStatus,
)
from agents.outbox import enqueue
from agents.services import questions as question_services
from agents.services import turns as turn_services
from collab.tasks import documents
from collab.tasks.models import Message, Task
from collab.workspaces.models import Workspace
from tests import factories

BEFORE = "Venue: tbd\n"
AFTER = "Venue: Lyon\n"


@pytest.fixture
def curious(make_agent: Callable[..., Agent], task: Task) -> Agent:
    """An agent that asks first; once resumed it edits the document (the model changes)."""
    fakes.register_fake_behaviour(
        "pick-lyon",
        lambda messages: json.dumps(
            {
                "actions": [
                    {"kind": "edit", "text": "", "find": "tbd", "replace": "Lyon"},
                    {"kind": "ask", "text": "Lyon or Nantes?"},
                ]
            }
        ),
    )
    agent = make_agent("Curious", behaviour="ask", mode=AgentMode.MAY_EDIT)
    agent.tasks.add(task)
    documents.apply_text_edit(task=task, new_text=BEFORE, author_label="bob")
    return agent


def _ask(agent: Agent, task: Task) -> Question:
    turn = turn_services.start_turn(agent=agent, task=task, trigger=Trigger.ASK)
    assert runner.run_turn(turn_id=turn.pk) == TurnStatus.WAITING
    agent.model_profile.model = "pick-lyon"  # type: ignore[union-attr]
    agent.model_profile.save()  # type: ignore[union-attr]
    return Question.objects.get(turn=turn)


def _age(question: Question, minutes: int) -> None:
    Question.objects.filter(pk=question.pk).update(
        created_at=timezone.now() - timedelta(minutes=minutes)
    )


def _time_out(agent: Agent, task: Task) -> tuple[Question, Turn]:
    question = _ask(agent, task)
    _age(question, 11)
    turn_id = jobs.question_timeout_job(question.pk)
    assert turn_id is not None
    runner.run_turn(turn_id=turn_id)
    return question, Turn.objects.get(pk=turn_id)


@pytest.fixture
def scheduled(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, float | None]]:
    """The timeout checks enqueued, as (args, countdown), instead of sent to the broker."""
    enqueued: list[tuple[Any, float | None]] = []

    def record(name: str, *args: Any, countdown: float | None = None) -> bool:
        if name == enqueue.QUESTION_TIMEOUT:
            enqueued.append((args, countdown))
        return True

    monkeypatch.setattr(enqueue, "send_job", record)
    return enqueued


def test_asking_schedules_the_timeout_on_commit(
    curious: Agent,
    task: Task,
    scheduled: list[tuple[Any, int]],
    django_capture_on_commit_callbacks: Any,
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        question = _ask(curious, task)

    assert scheduled == [((question.pk,), 600)]


def test_an_agent_set_to_wait_forever_schedules_nothing(
    curious: Agent,
    task: Task,
    scheduled: list[tuple[Any, int]],
    django_capture_on_commit_callbacks: Any,
) -> None:
    Agent.objects.filter(pk=curious.pk).update(question_timeout_minutes=0)
    curious.refresh_from_db()
    with django_capture_on_commit_callbacks(execute=True):
        question = _ask(curious, task)

    assert scheduled == []
    _age(question, 60 * 24)
    assert jobs.question_timeout_job(question.pk) is None
    assert Question.objects.get(pk=question.pk).status == Question.Status.OPEN


def test_an_unanswered_question_resumes_the_agent_on_its_best_guess(
    curious: Agent, task: Task
) -> None:
    question, turn = _time_out(curious, task)

    question.refresh_from_db()
    assert question.status == Question.Status.EXPIRED
    assert Turn.objects.get(pk=question.turn_id).status == TurnStatus.DONE
    assert turn.trigger == Trigger.TIMEOUT
    assert turn.inputs["timed_out"] is True
    assert turn.status == TurnStatus.DONE  # done, not waiting: it did not ask again
    assert turn.policy_decision["situation"]["timed_out"] is True
    prompt = ModelCall.objects.get(turn=turn).messages[0]["content"]
    assert "Nobody answered your question within 10 min" in prompt
    ask = Action.objects.get(turn=turn, kind="ask")
    assert ask.status == Action.Status.SKIPPED
    assert documents.read_document(task=task).text == AFTER
    notice = Message.objects.filter(task=task, kind=Message.Kind.AGENT).last()
    assert notice is not None
    assert "assumed" in notice.body
    assert notice.body.endswith("(no answer within 10 min)")
    assumption = Assumption.objects.get(turn=turn)
    assert assumption.message == notice
    assert assumption.version_before is not None
    assert assumption.version_before.text == BEFORE


def test_the_timeout_job_leaves_answered_and_expired_questions_alone(
    workspace: Workspace, bob: User, curious: Agent, task: Task
) -> None:
    question = _ask(curious, task)
    question_services.answer_question(
        membership=factories.membership_of(workspace, bob), question=question, answer="Lyon"
    )
    _age(question, 11)

    assert jobs.question_timeout_job(question.pk) is None
    assert not Turn.objects.filter(trigger=Trigger.TIMEOUT).exists()
    assert Question.objects.get(pk=question.pk).status == Question.Status.ANSWERED


def test_a_duplicate_timeout_job_resumes_the_agent_once(curious: Agent, task: Task) -> None:
    question = _ask(curious, task)
    _age(question, 11)

    first = jobs.question_timeout_job(question.pk)
    second = jobs.question_timeout_job(question.pk)

    assert first is not None
    assert second is None
    assert Turn.objects.filter(trigger=Trigger.TIMEOUT).count() == 1


def test_a_job_that_fires_before_a_raised_timeout_waits_for_it(
    curious: Agent,
    task: Task,
    scheduled: list[tuple[Any, int]],
    django_capture_on_commit_callbacks: Any,
    settings: Any,
) -> None:
    settings.AGENTS_COUNTDOWN_MAX_SECONDS = 3600  # 19 min left: a countdown (else the sweep's)
    question = _ask(curious, task)  # (its own check is enqueued only on a commit: none here)
    Agent.objects.filter(pk=curious.pk).update(question_timeout_minutes=30)
    _age(question, 11)

    with django_capture_on_commit_callbacks(execute=True):
        assert jobs.question_timeout_job(question.pk) is None

    assert Question.objects.get(pk=question.pk).status == Question.Status.OPEN
    [(args, countdown)] = scheduled
    assert args == (question.pk,)
    assert 18 * 60 <= countdown <= 19 * 60


def test_a_late_answer_still_reaches_the_agent(
    workspace: Workspace, bob: User, curious: Agent, task: Task
) -> None:
    question, _turn = _time_out(curious, task)

    question_services.answer_question(
        membership=factories.membership_of(workspace, bob), question=question, answer="Nantes"
    )

    assert Question.objects.get(pk=question.pk).status == Question.Status.ANSWERED
    resumed = Turn.objects.get(trigger=Trigger.ANSWER)
    assert resumed.inputs == {"question_id": question.pk}


def test_undo_restores_the_document_and_reopens_the_question(
    workspace: Workspace, bob: User, curious: Agent, task: Task
) -> None:
    question, turn = _time_out(curious, task)
    assumption = Assumption.objects.get(turn=turn)
    documents.apply_text_edit(
        task=task, new_text=AFTER + "Dates: May\n", author_label="alice"
    )  # people went on writing

    question_services.undo_assumption(
        membership=factories.membership_of(workspace, bob), assumption=assumption
    )

    assert documents.read_document(task=task).text == BEFORE
    assumption.refresh_from_db()
    assert assumption.status == Assumption.Status.UNDONE
    assert assumption.undone_by == bob
    assert Question.objects.get(pk=question.pk).status == Question.Status.OPEN
    restore = task.document.updates.order_by("-id").first()
    assert restore is not None
    assert restore.author == bob  # a new edit, attributed to the person who undid it
    assert "undid Curious's assumption" in Message.objects.filter(task=task).last().body  # type: ignore[union-attr]
    with pytest.raises(ValidationError):
        question_services.undo_assumption(
            membership=factories.membership_of(workspace, bob), assumption=assumption
        )


def test_viewers_cannot_undo(workspace: Workspace, carol: User, curious: Agent, task: Task) -> None:
    _question, turn = _time_out(curious, task)

    with pytest.raises(PermissionDenied):
        question_services.undo_assumption(
            membership=factories.membership_of(workspace, carol),
            assumption=Assumption.objects.get(turn=turn),
        )
    assert documents.read_document(task=task).text == AFTER


def test_undo_over_http_for_the_cast(
    request: pytest.FixtureRequest, as_user: Any, curious: Agent, task: Task
) -> None:
    _question, turn = _time_out(curious, task)
    assumption = Assumption.objects.get(turn=turn)
    url = reverse("agents:undo_assumption", args=[task.pk, assumption.pk])
    page = reverse("tasks:detail", args=[task.pk])

    for name in ("carol", "mallory"):
        client = as_user(request.getfixturevalue(name))
        assert client.post(url).status_code == (403 if name == "carol" else 404)
    assert (
        b'data-testid="undo-assumption"'
        not in as_user(request.getfixturevalue("carol")).get(page).content
    )
    bob_page = as_user(request.getfixturevalue("bob")).get(page).content
    assert b'data-testid="undo-assumption"' in bob_page
    assert documents.read_document(task=task).text == AFTER

    response = as_user(request.getfixturevalue("alice")).post(url)

    assert response.status_code == 302
    assert documents.read_document(task=task).text == BEFORE
    assert as_user(request.getfixturevalue("alice")).post(url).status_code == 400
    assert b"Undone by alice" in as_user(request.getfixturevalue("bob")).get(page).content


def test_the_assumption_message_reaches_pages_with_undo_for_editors_only(
    curious: Agent,
    task: Task,
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Any,
) -> None:
    from collab.realtime import broadcast

    sent: list[dict[str, Any]] = []
    monkeypatch.setattr(broadcast, "group_send", lambda group, event: sent.append(event))
    question = _ask(curious, task)
    _age(question, 11)
    turn_id = jobs.question_timeout_job(question.pk)
    assert turn_id is not None

    with django_capture_on_commit_callbacks(execute=True):
        runner.run_turn(turn_id=turn_id)

    [event] = [e for e in sent if e["type"] == "chat.message" and "assumption" in e["message"]]
    assert event["message"]["body"].endswith("(no answer within 10 min)")
    assert 'data-testid="undo-assumption"' in event["html"]
    assert 'data-testid="undo-assumption"' not in event["html_readonly"]
    assert 'hx-swap-oob="beforeend"' in event["html"]
