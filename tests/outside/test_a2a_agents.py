"""A2A agents (issue 29, docs/adr/0025): a Collab agent made with an Agent2Agent card URL
sends its turns, through the official SDK's client, to a real A2A agent built with the SDK's
server (tests/outside/a2a_agent.py, a subprocess on a free port)."""

from __future__ import annotations

import json
import os
import threading
import time
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from celery.exceptions import Retry
from django.contrib.auth.models import User
from django.db import connection
from django.urls import reverse

from agents.engine.outcome import Outcome
from agents.engine.runner import run_turn
from agents.jobs import cancel_a2a_task_job
from agents.models import (
    Action,
    OutsideAgent,
    Question,
    RemoteTask,
    Suggestion,
    Turn,
    TurnStatus,
)
from agents.outbox import enqueue
from agents.services import outside
from agents.services import turns as turn_services
from agents.services.questions import answer_question
from agents.services.suggestions import accept_suggestion
from collab.realtime import broadcast
from collab.tasks import services as task_services
from collab.tasks.models import Message, Task
from collab.workspaces.models import Workspace
from tests import factories
from tests.agents.openai_server import free_port
from tests.api.conftest import client_with_token, token_for
from tests.outside.a2a_agent import CARD_PATH, serving


@pytest.fixture(scope="module")
def a2a_agent() -> Iterator[str]:
    """The card URL of the SDK-built test agent, running in its own process."""
    with serving(free_port()) as url:
        yield url


@pytest.fixture
def scout(a2a_agent: str, workspace: Workspace, alice: User) -> outside.NewOutsideAgent:
    return outside.create_outside_agent(
        membership=factories.membership_of(workspace, alice),
        name="Scout",
        a2a_card_url=a2a_agent,
        policy_name="never",
    )


@pytest.fixture(autouse=True)
def _short_budget(settings: object) -> None:
    settings.AGENTS_TURN_TIME_BUDGET_SECONDS = 20  # type: ignore[attr-defined]


def _mention(workspace: Workspace, user: User, task: Task, body: str) -> Turn:
    member = factories.membership_of(workspace, user)
    task_services.post_message(membership=member, task=task, body=body)
    return Turn.objects.filter(task=task).latest("id")


def _agent_lines(task: Task) -> list[str]:
    lines = Message.objects.filter(task=task, kind=Message.Kind.AGENT).order_by("id")
    return list(lines.values_list("body", flat=True))


def remote_state(card_url: str, task_id: str) -> str:
    """The task's state on the A2A agent's side, asked with the protocol's own ``GetTask``."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": task_id}}
    request = urllib.request.Request(  # noqa: S310 - the test agent on this machine
        card_url.replace(CARD_PATH, "/"),
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "A2A-Version": "1.0"},
    )
    with urllib.request.urlopen(request, timeout=10) as answer:  # noqa: S310
        state = json.loads(answer.read())["result"]["status"]["state"]
    return str(state).removeprefix("TASK_STATE_").lower().replace("_", "-")


def _system_note(task: Task) -> str:
    return Message.objects.filter(task=task, kind=Message.Kind.SYSTEM).latest("id").body


@pytest.mark.django_db
def test_a_mentioned_a2a_agent_answers_in_the_chat(
    scout: outside.NewOutsideAgent, workspace: Workspace, bob: User, task: Task
) -> None:
    turn = _mention(workspace, bob, task, "@Scout hello there")

    outcome = run_turn(turn_id=turn.pk)
    turn.refresh_from_db()
    assert outcome == Outcome.DONE, turn.error

    [line] = _agent_lines(task)
    assert line.startswith("Echo: @Scout hello there")
    turn.refresh_from_db()
    assert turn.model_label == "A2A agent (127.0.0.1)"
    assert RemoteTask.objects.get(turn=turn).state == "completed"


@pytest.mark.django_db
def test_a_turn_does_not_log_the_agent_card(
    scout: outside.NewOutsideAgent,
    workspace: Workspace,
    bob: User,
    task: Task,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The SDK's card resolver logs the whole card at INFO: its logger is at WARNING."""
    turn = _mention(workspace, bob, task, "@Scout hello there")

    assert run_turn(turn_id=turn.pk) == Outcome.DONE

    assert [r.getMessage()[:80] for r in caplog.records if r.name.startswith("a2a")] == []


@pytest.mark.django_db
def test_the_live_card_says_the_a2a_agent_answered_not_the_site_s_model(
    scout: outside.NewOutsideAgent,
    workspace: Workspace,
    bob: User,
    task: Task,
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Any,
) -> None:
    cards: list[str] = []
    monkeypatch.setattr(
        broadcast, "agent_event", lambda task_id, **sent: cards.append(sent["html"])
    )
    turn = _mention(workspace, bob, task, "@Scout ask me where")

    with django_capture_on_commit_callbacks(execute=True):
        assert run_turn(turn_id=turn.pk) == Outcome.WAITING

    waiting = next(html for html in cards if 'data-status="waiting"' in html)
    assert "answered by A2A agent (127.0.0.1)" in waiting
    assert "small model on this server" not in waiting


@pytest.mark.django_db
def test_a_question_is_asked_in_the_chat_and_the_answer_continues_the_a2a_task(
    scout: outside.NewOutsideAgent, workspace: Workspace, bob: User, task: Task
) -> None:
    turn = _mention(workspace, bob, task, "@Scout ask me where")

    assert run_turn(turn_id=turn.pk) == Outcome.WAITING
    question = Question.objects.get(task=task)
    assert question.text == "Which city?"
    first = RemoteTask.objects.get(turn=turn)
    assert first.state == "input-required"

    # when bob answers, the answer goes back to the same A2A task, which completes
    answer_question(
        membership=factories.membership_of(workspace, bob), question=question, answer="Lisbon"
    )
    follow_up = Turn.objects.filter(task=task).latest("id")
    assert run_turn(turn_id=follow_up.pk) == Outcome.DONE

    assert _agent_lines(task)[-1] == "Noted: Lisbon."
    assert RemoteTask.objects.get(turn=follow_up).task_id == first.task_id


@pytest.mark.django_db
def test_an_a2a_suggestion_waits_for_a_person_who_accepts_it(
    scout: outside.NewOutsideAgent, workspace: Workspace, bob: User, task: Task
) -> None:
    turn = _mention(workspace, bob, task, "@Scout draft it")

    assert run_turn(turn_id=turn.pk) == Outcome.DONE

    assert _agent_lines(task) == ["Here is a first draft."]
    suggestion = Suggestion.objects.get(task=task)
    assert (suggestion.replace, suggestion.agent.name) == ("# Plan", "Scout")
    accepted = accept_suggestion(
        membership=factories.membership_of(workspace, bob), suggestion=suggestion
    )
    assert accepted.status == Suggestion.Status.ACCEPTED


@pytest.mark.django_db(transaction=True)
def test_stop_cancels_the_a2a_task(
    scout: outside.NewOutsideAgent, workspace: Workspace, bob: User, task: Task
) -> None:
    turn = _mention(workspace, bob, task, "@Scout slow please")
    member = factories.membership_of(workspace, bob)

    def stop_once_working() -> None:
        try:
            for _ in range(400):
                if RemoteTask.objects.filter(turn=turn, state="working").exists():
                    turn_services.cancel_turn(membership=member, turn=Turn.objects.get(pk=turn.pk))
                    return
                time.sleep(0.05)
        finally:
            connection.close()  # this thread's own (else it outlives the test database)

    stopper = threading.Thread(target=stop_once_working)
    stopper.start()
    outcome = run_turn(turn_id=turn.pk)
    stopper.join()

    assert outcome == Outcome.CANCELLED
    assert RemoteTask.objects.get(turn=turn).state == "canceled"
    assert _agent_lines(task) == []


@pytest.fixture
def sent_jobs(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, tuple[Any, ...]]]:
    """The jobs services send on commit, kept here instead of going to a broker."""
    sent: list[tuple[str, tuple[Any, ...]]] = []
    monkeypatch.setattr(enqueue, "send_job", lambda name, *args, **kw: sent.append((name, args)))
    return sent


@pytest.mark.django_db
def test_stop_while_its_question_waits_for_an_answer_cancels_the_a2a_task(
    scout: outside.NewOutsideAgent,
    a2a_agent: str,
    workspace: Workspace,
    bob: User,
    task: Task,
    sent_jobs: list[tuple[str, tuple[Any, ...]]],
    django_capture_on_commit_callbacks: Any,
) -> None:
    # given Scout asked its question: the turn waits for a person, its A2A task for input
    turn = _mention(workspace, bob, task, "@Scout ask me where")
    assert run_turn(turn_id=turn.pk) == Outcome.WAITING
    remote = RemoteTask.objects.get(turn=turn)
    assert remote_state(a2a_agent, remote.task_id) == "input-required"

    # when bob presses Stop
    with django_capture_on_commit_callbacks(execute=True):
        turn_services.cancel_turn(membership=factories.membership_of(workspace, bob), turn=turn)

    # then the turn ends cancelled, its question is withdrawn, and the job sent on commit
    # cancels the A2A task on the agent's side (a redelivered job does nothing more)
    turn.refresh_from_db()
    assert turn.status == TurnStatus.CANCELLED
    assert Question.objects.get(turn=turn).status == Question.Status.WITHDRAWN
    assert sent_jobs == [(enqueue.CANCEL_A2A_TASK, (turn.pk,))]
    assert remote_state(a2a_agent, remote.task_id) == "input-required"  # not before the job
    assert cancel_a2a_task_job(turn.pk) is True
    assert remote_state(a2a_agent, remote.task_id) == "canceled"
    assert RemoteTask.objects.get(turn=turn).state == "canceled"
    assert cancel_a2a_task_job(turn.pk) is True
    assert _agent_lines(task) == ["Which city?"]


@pytest.mark.django_db
def test_stop_before_an_answer_was_sent_cancels_the_task_it_would_have_continued(
    scout: outside.NewOutsideAgent,
    a2a_agent: str,
    workspace: Workspace,
    bob: User,
    task: Task,
    sent_jobs: list[tuple[str, tuple[Any, ...]]],
    django_capture_on_commit_callbacks: Any,
) -> None:
    turn = _mention(workspace, bob, task, "@Scout ask me where")
    assert run_turn(turn_id=turn.pk) == Outcome.WAITING
    member = factories.membership_of(workspace, bob)
    answer_question(membership=member, question=Question.objects.get(turn=turn), answer="Rome")
    follow_up = Turn.objects.filter(task=task).latest("id")
    assert follow_up.status == TurnStatus.QUEUED

    # when bob stops the turn that would carry his answer, before a worker sent it
    with django_capture_on_commit_callbacks(execute=True):
        turn_services.cancel_turn(membership=member, turn=follow_up)

    assert (enqueue.CANCEL_A2A_TASK, (follow_up.pk,)) in sent_jobs
    assert cancel_a2a_task_job(follow_up.pk) is True
    task_id = RemoteTask.objects.get(turn=turn).task_id
    assert remote_state(a2a_agent, task_id) == "canceled"
    assert run_turn(turn_id=follow_up.pk) == Outcome.ALREADY_ENDED  # a late job sends nothing
    assert not RemoteTask.objects.filter(turn=follow_up).exists()


@pytest.mark.django_db
def test_an_unreachable_agent_s_task_is_cancelled_again_later(
    scout: outside.NewOutsideAgent,
    workspace: Workspace,
    bob: User,
    task: Task,
    sent_jobs: list[tuple[str, tuple[Any, ...]]],
    django_capture_on_commit_callbacks: Any,
) -> None:
    turn = _mention(workspace, bob, task, "@Scout ask me where")
    assert run_turn(turn_id=turn.pk) == Outcome.WAITING
    gone = f"http://127.0.0.1:{free_port()}{CARD_PATH}"
    OutsideAgent.objects.filter(agent=scout.agent).update(a2a_card_url=gone)
    with django_capture_on_commit_callbacks(execute=True):
        turn_services.cancel_turn(membership=factories.membership_of(workspace, bob), turn=turn)

    with pytest.raises(Retry):
        cancel_a2a_task_job(turn.pk)
    assert RemoteTask.objects.get(turn=turn).state == "input-required"


@pytest.mark.django_db
def test_a2a_turns_leave_no_thread_or_socket_behind(
    scout: outside.NewOutsideAgent, workspace: Workspace, bob: User, task: Task
) -> None:
    """Each turn runs the SDK on an event loop in a thread of its own: both end with it."""

    def running() -> tuple[list[str], int]:
        return sorted(t.name for t in threading.enumerate()), len(os.listdir("/proc/self/fd"))

    assert run_turn(turn_id=_mention(workspace, bob, task, "@Scout warm up").pk) == Outcome.DONE
    before = running()
    for request, outcome in [("hello", Outcome.DONE), ("ask", Outcome.WAITING)] * 3 + [
        ("fail", Outcome.FAILED)
    ]:
        assert run_turn(turn_id=_mention(workspace, bob, task, f"@Scout {request}").pk) == outcome
    assert running() == before


@pytest.mark.django_db
def test_a_failed_a2a_task_fails_the_turn_with_its_words(
    scout: outside.NewOutsideAgent, workspace: Workspace, bob: User, task: Task
) -> None:
    turn = _mention(workspace, bob, task, "@Scout fail now")

    assert run_turn(turn_id=turn.pk) == Outcome.FAILED
    assert "Scout (an A2A agent) reported that its task failed: disk full" in _system_note(task)


@pytest.mark.django_db
def test_a_malformed_suggestion_fails_the_turn_and_nothing_is_applied_twice(
    scout: outside.NewOutsideAgent, workspace: Workspace, bob: User, task: Task
) -> None:
    turn = _mention(workspace, bob, task, "@Scout garbage")

    assert run_turn(turn_id=turn.pk) == Outcome.FAILED
    assert "Scout (an A2A agent) its suggestion was refused" in _system_note(task)
    assert not Suggestion.objects.filter(task=task).exists()
    # a redelivered job finds the turn ended: nothing is sent or applied again
    run_turn(turn_id=turn.pk)
    assert RemoteTask.objects.filter(turn=turn).count() == 1
    assert not Action.objects.filter(turn=turn).exists()


@pytest.mark.django_db
def test_an_unreachable_a2a_agent_fails_the_turn_with_a_clear_message(
    scout: outside.NewOutsideAgent, workspace: Workspace, bob: User, task: Task
) -> None:
    gone = f"http://127.0.0.1:{free_port()}{CARD_PATH}"
    OutsideAgent.objects.filter(agent=scout.agent).update(a2a_card_url=gone)
    turn = _mention(workspace, bob, task, "@Scout hello")

    assert run_turn(turn_id=turn.pk) == Outcome.FAILED
    note = _system_note(task)
    assert "Scout (an A2A agent) could not be reached" in note
    assert "No A2A agent card at" in note
    turn.refresh_from_db()  # the failed turn is the A2A agent's, not the site's model's
    assert (turn.provider, turn.model_label) == ("a2a", "A2A agent (127.0.0.1)")


@pytest.mark.django_db
def test_a_bad_card_url_is_refused_with_its_reason(
    a2a_agent: str, workspace: Workspace, alice: User
) -> None:
    client = client_with_token(token_for(alice))
    url = f"/api/workspaces/{workspace.pk}/outside-agents"

    def create(**body: str) -> dict[str, object]:
        answer = client.post(url, data={"name": "Scout", **body}, content_type="application/json")
        assert answer.status_code == 400, answer.content
        return answer.json()

    closed = f"http://127.0.0.1:{free_port()}{CARD_PATH}"
    missing, page, json_only = (
        a2a_agent.replace(CARD_PATH, path) for path in ("/nothing-here", "/test/page", "/test/json")
    )
    for bad, reason in [
        (closed, f"No A2A agent card at {closed}: could not reach it."),
        (missing, f"No A2A agent card at {missing}: not an agent card (status 404)."),
        (page, f"No A2A agent card at {page}: its answer is not JSON."),
        (json_only, f"No A2A agent card at {json_only}: its JSON is not an agent card."),
        ("ftp://example.com/card", ""),
    ]:
        body = create(a2a_card_url=bad)
        assert reason in str(body), body
        assert "a2a_card_url" in str(body)
        assert "Failed to" not in str(body)  # the SDK's own words stay in the log
    both = create(a2a_card_url=a2a_agent, webhook_url="http://127.0.0.1:9/hook")
    assert "not both" in str(both)
    assert not OutsideAgent.objects.exists()


@pytest.mark.django_db
def test_an_a2a_agent_is_made_through_the_api(
    a2a_agent: str, workspace: Workspace, alice: User
) -> None:
    answer = client_with_token(token_for(alice)).post(
        f"/api/workspaces/{workspace.pk}/outside-agents",
        data={"name": "Scout", "a2a_card_url": a2a_agent},
        content_type="application/json",
    )
    assert answer.status_code == 201, answer.content
    assert answer.json()["a2a_card_url"] == a2a_agent


def _create_on_the_page(client: Any, workspace: Workspace, **fields: str) -> Any:
    data = {"outside-name": "Scout", "outside-mode": "suggest_only"}
    data.update({f"outside-{k}": v for k, v in fields.items()})
    return client.post(reverse("agents:create_outside", args=[workspace.pk]), data)


@pytest.mark.django_db
def test_an_owner_makes_an_a2a_agent_on_the_agents_page(
    a2a_agent: str, as_user: Any, alice: User, workspace: Workspace
) -> None:
    response = _create_on_the_page(as_user(alice), workspace, a2a_card_url=a2a_agent)

    assert response.status_code == 200
    row = OutsideAgent.objects.select_related("agent").get()
    assert (row.agent.name, row.a2a_card_url, row.webhook_url) == ("Scout", a2a_agent, "")
    page = response.content.decode()
    assert "Collab sends its turns to the A2A agent whose card is at" in page
    assert 'data-testid="outside-token"' not in page  # nothing to copy: A2A uses neither


@pytest.mark.django_db
def test_a_card_url_with_no_card_is_refused_on_the_page_with_its_reason(
    a2a_agent: str, as_user: Any, alice: User, workspace: Workspace
) -> None:
    not_a_card = a2a_agent.replace(CARD_PATH, "/nothing-here")
    client = as_user(alice)

    response = _create_on_the_page(client, workspace, a2a_card_url=not_a_card)
    both = _create_on_the_page(
        client, workspace, a2a_card_url=a2a_agent, webhook_url="http://127.0.0.1:9/hook"
    )

    assert response.status_code == 400
    assert "No A2A agent card at" in response.content.decode()
    assert both.status_code == 400
    assert "not both" in both.content.decode()
    assert not OutsideAgent.objects.exists()
