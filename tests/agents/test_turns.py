from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from agents import jobs, llm
from agents.engine import decide, runner
from agents.llm import fakes
from agents.models import (
    Action,
    Agent,
    AgentNote,
    ModelCall,
    ModelProfile,
    Question,
    Suggestion,
    Trigger,
    Turn,
    TurnStatus,
)
from agents.outbox import enqueue
from agents.services import actions as action_services
from agents.services import agents as agent_services
from agents.services import questions as question_services
from agents.services import turns as turn_services
from collab.realtime import broadcast
from collab.tasks import services as task_services
from collab.tasks.models import Message, Task
from collab.workspaces.models import Workspace
from tests import factories


def _post(workspace: Workspace, user: User, task: Task, body: str) -> Message:
    member = factories.membership_of(workspace, user)
    return task_services.post_message(membership=member, task=task, body=body).message


def _agent_messages(task: Task) -> list[str]:
    return list(task.messages.filter(kind=Message.Kind.AGENT).values_list("body", flat=True))


@pytest.fixture
def events(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Agent events published to the channel layer, in order."""
    seen: list[dict[str, Any]] = []

    def capture(task_id: int, *, payload: dict[str, Any], html: str, html_readonly: str) -> None:
        seen.append(payload)

    monkeypatch.setattr(broadcast, "agent_event", capture)
    return seen


def test_mentioning_an_agent_enqueues_its_turn_on_commit(
    workspace: Workspace,
    bob: User,
    task: Task,
    make_agent: Callable[..., Agent],
    django_capture_on_commit_callbacks: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    make_agent("Mira")
    enqueued: list[int] = []
    monkeypatch.setattr(turn_services, "enqueue_turn", enqueued.append)

    with django_capture_on_commit_callbacks(execute=True):
        message = _post(workspace, bob, task, "@mira can you draft the agenda?")

    turn = Turn.objects.get()
    assert enqueued == [turn.pk]
    assert turn.trigger == Trigger.MENTION
    assert turn.inputs == {"message_ids": [message.pk]}
    assert turn.agent.tasks.filter(pk=task.pk).exists()


def test_a_message_enqueues_its_turns_first_and_in_few_statements(
    workspace: Workspace,
    bob: User,
    task: Task,
    make_agent: Callable[..., Agent],
    django_capture_on_commit_callbacks: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """On commit, the turn is enqueued before the message is rendered and published (a worker
    can start meanwhile). An agent already on the task is not added again, and the nested
    ``start_turn`` opens no savepoint: message, task, agents, queued turn, new turn."""
    mira = make_agent("Mira")
    make_agent("Scribe", on_every_message=True).tasks.add(task)
    mira.tasks.add(task)
    hooks: list[str] = []
    monkeypatch.setattr(turn_services, "enqueue_turn", lambda turn_id: hooks.append("enqueue"))
    monkeypatch.setattr(broadcast, "chat_message", lambda *a, **k: hooks.append("message"))
    member = factories.membership_of(workspace, bob)

    with (
        django_capture_on_commit_callbacks(execute=True),
        CaptureQueriesContext(connection) as captured,
    ):
        task_services.post_message(membership=member, task=task, body="@Mira agenda?")

    # post_message's own atomic block is a savepoint inside the test's transaction
    statements = [q["sql"] for q in captured.captured_queries][1:-1]
    assert hooks[:3] == ["enqueue", "enqueue", "message"]
    assert sorted(Turn.objects.values_list("trigger", flat=True)) == [
        Trigger.MENTION,
        Trigger.MESSAGE,
    ]
    listing = "\n".join(s[:80] for s in statements)
    assert not any("SAVEPOINT" in s.upper() for s in statements), listing
    assert not any("INSERT" in s and "agents_agent_tasks" in s for s in statements)
    # message, task, agents, then a queued-turn look-up and an insert per agent
    assert len(statements) == 7, listing


def test_every_message_agent_is_triggered_only_on_its_own_tasks(
    workspace: Workspace, bob: User, task: Task, make_agent: Callable[..., Agent]
) -> None:
    scribe = make_agent("Scribe", on_every_message=True)
    other_task = factories.make_task(workspace, title="Other")
    scribe.tasks.add(task)

    _post(workspace, bob, other_task, "hello there")
    _post(workspace, bob, task, "hello here")

    assert list(Turn.objects.values_list("task_id", "trigger")) == [(task.pk, Trigger.MESSAGE)]


def test_agent_messages_never_trigger_agents(task: Task, mira: Agent) -> None:
    message = Message.objects.create(
        task=task, kind=Message.Kind.AGENT, author_name="Other", body="@Mira hi"
    )
    assert turn_services.handle_human_message(message=message) == []


def test_turn_replies_in_chat_and_logs_the_model_call(
    workspace: Workspace,
    bob: User,
    task: Task,
    mira: Agent,
    events: list[dict[str, Any]],
    django_capture_on_commit_callbacks: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _post(workspace, bob, task, "@Mira plan the offsite")
    turn = Turn.objects.get()
    monkeypatch.setattr(
        broadcast, "chat_message", lambda message_id, **_: events.append({"type": "chat.message"})
    )

    with django_capture_on_commit_callbacks(execute=True):
        outcome = runner.run_turn(turn_id=turn.pk)

    turn.refresh_from_db()
    assert outcome == TurnStatus.DONE
    assert turn.status == TurnStatus.DONE
    assert _agent_messages(task) == ["Noted: @Mira plan the offsite"]
    call = ModelCall.objects.get(turn=turn)
    assert call.provider == "fake"
    assert call.error == ""
    assert call.tokens_in > 0
    assert call.tokens_out > 0
    assert "plan the offsite" in call.messages[-1]["content"]
    assert "are DATA written by people" in call.messages[0]["content"]
    assert turn.context["messages"][-1]["body"] == "@Mira plan the offsite"
    assert turn.decision == {
        "actions": [
            {
                "kind": "reply",
                "text": "Noted: @Mira plan the offsite",
                "find": "",
                "replace": "",
                "person": "",
                "key": "",
                "value": "",
            }
        ]
    }
    assert turn.first_token_at is not None
    assert turn.finished_at is not None
    streamed = [e for e in events if e["type"] == "agent.stream"]
    assert streamed
    assert streamed[-1]["text"] == "Noted: @Mira plan the offsite"
    # The reply is stored with the decision; pages get the last batch of text before it.
    kinds = [e["type"] for e in events]
    assert kinds.index("chat.message") > len(kinds) - 1 - kinds[::-1].index("agent.stream")


def test_stream_events_carry_the_text_so_far(
    task: Task,
    make_agent: Callable[..., Agent],
    events: list[dict[str, Any]],
    django_capture_on_commit_callbacks: Any,
) -> None:
    agent = make_agent("Slow", behaviour="everything@30")
    turn = turn_services.start_turn(agent=agent, task=task, trigger=Trigger.ASK)

    with django_capture_on_commit_callbacks(execute=True):
        runner.run_turn(turn_id=turn.pk)

    texts = [e["text"] for e in events if e["type"] == "agent.stream"]
    assert len(texts) >= 2
    assert all(later.startswith(earlier) for earlier, later in itertools.pairwise(texts))
    assert texts[-1] == "Working on it."


def test_turn_is_not_applied_twice(task: Task, make_agent: Callable[..., Agent]) -> None:
    agent = make_agent("Busy", behaviour="everything")
    turn = turn_services.start_turn(agent=agent, task=task, trigger=Trigger.ASK)
    runner.run_turn(turn_id=turn.pk)

    # A redelivered job, as after a worker was killed just before acknowledging.
    Turn.objects.filter(pk=turn.pk).update(status=TurnStatus.RUNNING, lease_expires_at=None)
    runner.run_turn(turn_id=turn.pk)
    jobs.run_turn_job(turn.pk)

    assert _agent_messages(task) == ["Working on it."]
    assert AgentNote.objects.filter(task=task).count() == 1
    assert Suggestion.objects.filter(task=task).count() == 1
    assert ModelCall.objects.filter(turn=turn).count() == 1


def test_redelivery_after_a_partial_apply_applies_only_the_rest(
    task: Task, make_agent: Callable[..., Agent], monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = make_agent("Busy", behaviour="everything")  # reply, note, suggestion
    turn = turn_services.start_turn(agent=agent, task=task, trigger=Trigger.ASK)
    real_apply = action_services.apply_action

    def killed(*, idempotency_key: str) -> None:
        raise SystemExit("worker killed")

    # The reply and the note are stored applied with the decision; the worker dies before the
    # suggestion, the one action applied on its own after that.
    monkeypatch.setattr(action_services, "apply_action", killed)
    with pytest.raises(SystemExit):
        runner.run_turn(turn_id=turn.pk)
    assert list(
        Action.objects.filter(turn=turn).order_by("index").values_list("status", flat=True)
    ) == ["applied", "applied", "pending"]
    monkeypatch.setattr(action_services, "apply_action", real_apply)
    Turn.objects.filter(pk=turn.pk).update(lease_expires_at=timezone.now() - timedelta(seconds=1))

    runner.run_turn(turn_id=turn.pk)

    assert _agent_messages(task) == ["Working on it."]
    assert AgentNote.objects.filter(task=task).count() == 1
    assert Suggestion.objects.filter(task=task).count() == 1
    assert (
        list(Action.objects.filter(turn=turn).values_list("status", flat=True)) == ["applied"] * 3
    )
    assert ModelCall.objects.filter(turn=turn).count() == 1
    assert Turn.objects.get(pk=turn.pk).attempts == 2


def test_a_turn_with_a_live_lease_is_left_to_its_worker(task: Task, mira: Agent) -> None:
    turn = turn_services.start_turn(agent=mira, task=task, trigger=Trigger.ASK)
    Turn.objects.filter(pk=turn.pk).update(
        status=TurnStatus.RUNNING, lease_expires_at=timezone.now() + timedelta(seconds=30)
    )
    assert runner.run_turn(turn_id=turn.pk) == "running elsewhere"
    assert _agent_messages(task) == []


def test_second_turn_waits_for_the_running_one_and_is_woken_after_it(
    task: Task,
    mira: Agent,
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Any,
) -> None:
    enqueued: list[int] = []
    monkeypatch.setattr(turn_services, "enqueue_turn", enqueued.append)
    first = turn_services.start_turn(agent=mira, task=task, trigger=Trigger.ASK)
    Turn.objects.filter(pk=first.pk).update(
        status=TurnStatus.RUNNING, lease_expires_at=timezone.now() + timedelta(seconds=30)
    )
    second = turn_services.start_turn(agent=mira, task=task, trigger=Trigger.ASK)

    assert runner.run_turn(turn_id=second.pk) == "blocked"

    Turn.objects.filter(pk=first.pk).update(lease_expires_at=None)
    with django_capture_on_commit_callbacks(execute=True):
        runner.run_turn(turn_id=first.pk)
    assert enqueued[-1] == second.pk
    assert runner.run_turn(turn_id=second.pk) == TurnStatus.DONE


def test_message_during_a_running_turn_joins_the_next_queued_turn(
    workspace: Workspace, bob: User, task: Task, mira: Agent
) -> None:
    first = _post(workspace, bob, task, "@Mira one")
    running = Turn.objects.get()
    Turn.objects.filter(pk=running.pk).update(status=TurnStatus.RUNNING)
    second = _post(workspace, bob, task, "@Mira two")
    third = _post(workspace, bob, task, "@Mira three")

    queued = Turn.objects.get(status=TurnStatus.QUEUED)
    assert running.inputs == {"message_ids": [first.pk]}
    assert queued.inputs == {"message_ids": [second.pk, third.pk]}


def test_stop_cancels_a_streaming_turn_and_nothing_is_applied(
    transactional_db: None,
    workspace: Workspace,
    bob: User,
    task: Task,
    make_agent: Callable[..., Agent],
    events: list[dict[str, Any]],
) -> None:
    agent = make_agent("Slow", behaviour="everything@200")
    turn = turn_services.start_turn(agent=agent, task=task, trigger=Trigger.ASK)
    member = factories.membership_of(workspace, bob)

    def stop_after_first_words() -> None:
        try:
            while not Turn.objects.filter(pk=turn.pk).exclude(stream_text="").exists():
                time.sleep(0.02)
            turn_services.cancel_turn(membership=member, turn=turn)
        finally:
            connection.close()  # this thread's own connection

    stopper = threading.Thread(target=stop_after_first_words)
    stopper.start()
    outcome = runner.run_turn(turn_id=turn.pk)
    stopper.join()

    turn.refresh_from_db()
    assert outcome == "cancelled"
    assert turn.status == TurnStatus.CANCELLED
    assert turn.error == "Stopped by bob."
    assert _agent_messages(task) == []
    assert not Action.objects.filter(turn=turn).exists()
    assert ModelCall.objects.get(turn=turn).error.startswith("TurnCancelled")


def test_viewer_cannot_stop_a_turn(
    workspace: Workspace, carol: User, task: Task, mira: Agent
) -> None:
    turn = turn_services.start_turn(agent=mira, task=task, trigger=Trigger.ASK)
    with pytest.raises(PermissionDenied):
        turn_services.cancel_turn(membership=factories.membership_of(workspace, carol), turn=turn)


def test_model_error_puts_the_turn_back_for_a_retry(
    task: Task, make_agent: Callable[..., Agent]
) -> None:
    agent = make_agent("Broken", behaviour="fail")
    turn = turn_services.start_turn(agent=agent, task=task, trigger=Trigger.ASK)

    with pytest.raises(llm.ModelError):
        jobs.run_turn_job(turn.pk)  # called directly, a retry re-raises

    turn.refresh_from_db()
    assert turn.status == TurnStatus.QUEUED
    assert "told to fail" in turn.error
    assert ModelCall.objects.get(turn=turn).error


def test_model_error_after_the_last_retry_fails_the_turn_with_a_chat_message(
    task: Task, make_agent: Callable[..., Agent]
) -> None:
    agent = make_agent("Broken", behaviour="invalid")
    turn = turn_services.start_turn(agent=agent, task=task, trigger=Trigger.ASK)

    jobs.run_turn_job.push_request(retries=jobs.MAX_MODEL_RETRIES)
    try:
        assert jobs.run_turn_job(turn.pk) == "failed"
    finally:
        jobs.run_turn_job.pop_request()

    turn.refresh_from_db()
    assert turn.status == TurnStatus.FAILED
    notice = task.messages.get(kind=Message.Kind.SYSTEM)
    assert notice.body.startswith("Broken could not finish this turn")


def test_backoff_is_bounded() -> None:
    assert [jobs.backoff_seconds(n) for n in (0, 1, 2, 10)] == [1, 2, 4, jobs.BACKOFF_CAP_SECONDS]


def test_missing_provider_package_fails_the_turn_at_once(
    task: Task, make_agent: Callable[..., Agent]
) -> None:
    agent = make_agent("Nowhere", behaviour="nonsense")
    turn = turn_services.start_turn(agent=agent, task=task, trigger=Trigger.ASK)

    assert runner.run_turn(turn_id=turn.pk) == "failed"
    assert "Unknown fake behaviour" in Turn.objects.get(pk=turn.pk).error


def test_question_waits_for_an_answer_that_resumes_the_agent(
    workspace: Workspace,
    bob: User,
    task: Task,
    make_agent: Callable[..., Agent],
) -> None:
    agent = make_agent("Curious", behaviour="ask")
    turn = turn_services.start_turn(agent=agent, task=task, trigger=Trigger.ASK)
    assert runner.run_turn(turn_id=turn.pk) == TurnStatus.WAITING
    question = Question.objects.get()
    assert question.text.endswith("?")

    question_services.answer_question(
        membership=factories.membership_of(workspace, bob), question=question, answer="The venue"
    )

    assert Turn.objects.get(pk=turn.pk).status == TurnStatus.DONE
    resumed = Turn.objects.get(trigger=Trigger.ANSWER)
    assert resumed.inputs == {"question_id": question.pk}
    agent.model_profile.model = "echo"  # type: ignore[union-attr]
    agent.model_profile.save()  # type: ignore[union-attr]
    runner.run_turn(turn_id=resumed.pk)
    prompt = ModelCall.objects.get(turn=resumed).messages[-1]["content"]
    assert "Q: Which part should I start with? A: The venue" in prompt


def test_the_context_has_the_agents_latest_notes_and_answers_on_this_task_oldest_first(
    task: Task, mira: Agent, make_agent: Callable[..., Agent]
) -> None:
    from agents.engine.context import SMALL_LIMITS, build_context
    from agents.models import Provider

    other_task = factories.make_task(task.workspace, title="Other")
    other_agent = make_agent("Other")
    for n in range(5):
        AgentNote.objects.create(task=task, agent=mira, text=f"note {n}")
    AgentNote.objects.create(task=other_task, agent=mira, text="elsewhere")
    AgentNote.objects.create(task=task, agent=other_agent, text="not mine")
    for n in range(5):
        Question.objects.create(
            task=task, agent=mira, text=f"q{n}?", status=Question.Status.ANSWERED, answer=f"a{n}"
        )
    Question.objects.create(task=task, agent=mira, text="open?")
    Question.objects.create(
        task=task, agent=other_agent, text="x?", status=Question.Status.ANSWERED, answer="y"
    )
    turn = turn_services.start_turn(agent=mira, task=task, trigger=Trigger.ASK)

    context = build_context(turn, ModelProfile(provider=Provider.EMBEDDED), document=None)

    assert SMALL_LIMITS["notes"] == 3
    assert context["notes"] == ["note 2", "note 3", "note 4"]
    assert context["answers"] == [
        {"question": "q2?", "answer": "a2"},
        {"question": "q3?", "answer": "a3"},
        {"question": "q4?", "answer": "a4"},
    ]
    assert context["document"] == ""


def test_turn_prompt_includes_what_is_remembered_about_the_people_involved(
    workspace: Workspace, bob: User, task: Task, mira: Agent
) -> None:
    from agents.memory.models import MemoryItem

    item = MemoryItem.objects.create(owner=bob, text="Bob prefers numbered lists")
    _post(workspace, bob, task, "@Mira make a list of venues")
    turn = Turn.objects.get()

    runner.run_turn(turn_id=turn.pk)

    turn.refresh_from_db()
    assert turn.context["memory_item_ids"] == [item.pk]
    assert "Bob prefers numbered lists" in ModelCall.objects.get(turn=turn).messages[-1]["content"]


def test_document_edits_schedule_an_idle_check_for_watching_agents_only(
    task: Task,
    make_agent: Callable[..., Agent],
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Any,
) -> None:
    scheduled: list[tuple[Any, ...]] = []
    monkeypatch.setattr(
        enqueue,
        "send_job",
        lambda name, *args, countdown=None: (
            name == enqueue.DOCUMENT_IDLE and scheduled.append(args)
        ),
    )
    with django_capture_on_commit_callbacks(execute=True):
        turn_services.documents_edited(latest_updates={task.pk: 7})
    assert scheduled == []

    make_agent("Tidy", on_idle_document=True).tasks.add(task)
    with django_capture_on_commit_callbacks(execute=True):
        turn_services.documents_edited(latest_updates={task.pk: 8})
    assert scheduled == [(task.pk, 8)]


def test_a_flush_of_many_documents_checks_for_watching_agents_in_one_query(
    task: Task,
    workspace: Workspace,
    make_agent: Callable[..., Agent],
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Any,
    django_assert_num_queries: Any,
) -> None:
    # given a watched task among three edited ones
    quiet = [factories.make_task(workspace, title=f"Quiet {n}") for n in range(2)]
    make_agent("Tidy", on_idle_document=True).tasks.add(task)
    scheduled: list[tuple[Any, ...]] = []
    monkeypatch.setattr(
        enqueue,
        "send_job",
        lambda name, *args, countdown=None: (
            name == enqueue.DOCUMENT_IDLE and scheduled.append(args)
        ),
    )
    # when one flush reports all three
    latest = {task.pk: 11, quiet[0].pk: 12, quiet[1].pk: 13}
    with django_capture_on_commit_callbacks(execute=True), django_assert_num_queries(1):
        turn_services.documents_edited(latest_updates=latest)
    # then only the watched task gets a check, for its own newest update
    assert scheduled == [(task.pk, 11)]


def test_idle_check_starts_turns_only_after_the_last_edit_and_only_once(
    bob: User, task: Task, make_agent: Callable[..., Agent]
) -> None:
    from collab.tasks.models import DocumentUpdate

    tidy = make_agent("Tidy", on_idle_document=True)
    tidy.tasks.add(task)
    older = DocumentUpdate.objects.create(document=task.document, data=b"", author=bob)
    newest = DocumentUpdate.objects.create(document=task.document, data=b"", author=bob)

    assert turn_services.start_idle_turns(task_id=task.pk, update_id=older.pk) == []
    started = turn_services.start_idle_turns(task_id=task.pk, update_id=newest.pk)
    again = turn_services.start_idle_turns(task_id=task.pk, update_id=newest.pk)

    assert [(t.agent, t.trigger) for t in started] == [(tidy, Trigger.IDLE)]
    assert again == []


def test_agent_that_may_edit_changes_the_document_as_an_attributed_minimal_diff(
    task: Task, make_agent: Callable[..., Agent]
) -> None:
    import json

    from agents.models import AgentMode
    from collab.tasks import documents
    from collab.tasks.models import Document, DocumentUpdate

    fakes.register_fake_behaviour(
        "fix-venue",
        lambda messages: json.dumps(
            {"actions": [{"kind": "edit", "text": "", "find": "Lyon 🌧", "replace": "京都 ☀️"}]}
        ),
    )
    agent = make_agent("Editor", behaviour="fix-venue", mode=AgentMode.MAY_EDIT)
    documents.apply_text_edit(task=task, new_text="Venue: Lyon 🌧, May 3.\n", author_label="bob")
    turn = turn_services.start_turn(agent=agent, task=task, trigger=Trigger.ASK)

    runner.run_turn(turn_id=turn.pk)

    assert documents.read_document(task=task).text == "Venue: 京都 ☀️, May 3.\n"
    assert Document.objects.get(task=task).text == "Venue: 京都 ☀️, May 3.\n"
    action = Action.objects.get(turn=turn)
    assert action.result["edited_directly"] is True
    assert not Suggestion.objects.exists()
    update = DocumentUpdate.objects.get(pk=action.result["update_id"])
    assert update.author_label == f"Editor (agent, turn {turn.pk})"


def test_policy_that_asks_sends_its_question_without_calling_the_model(
    task: Task, mira: Agent, monkeypatch: pytest.MonkeyPatch
) -> None:
    def asks(policy_name: str, context: dict[str, Any], **options: Any) -> dict[str, Any]:
        return {"policy": policy_name, "decision": "ask", "question": "Which dates work?"}

    monkeypatch.setattr(decide, "policy_decision", asks)
    turn = turn_services.start_turn(agent=mira, task=task, trigger=Trigger.ASK)

    assert runner.run_turn(turn_id=turn.pk) == TurnStatus.WAITING

    assert Question.objects.get().text == "Which dates work?"
    assert not ModelCall.objects.filter(turn=turn).exists()
    assert Turn.objects.get(pk=turn.pk).policy_decision["decision"] == "ask"


def test_answer_over_the_token_budget_fails_the_turn(
    task: Task, make_agent: Callable[..., Agent]
) -> None:
    fakes.register_fake_behaviour("ramble", lambda messages: "word " * 2000)
    agent = make_agent("Rambler", behaviour="ramble")
    ModelProfile.objects.filter(agents=agent).update(max_tokens=16)
    turn = turn_services.start_turn(agent=agent, task=task, trigger=Trigger.ASK)

    assert runner.run_turn(turn_id=turn.pk) == "failed"
    assert "token budget" in Turn.objects.get(pk=turn.pk).error


def test_workspace_instructions_reach_the_prompt_as_configuration_not_data(
    workspace: Workspace, alice: User, bob: User, task: Task, mira: Agent
) -> None:
    from collab.workspaces.services import update_workspace_instructions

    update_workspace_instructions(
        actor=factories.membership_of(workspace, alice),
        instructions="Write British English. Never promise dates.",
    )
    _post(workspace, bob, task, "@Mira plan the offsite")
    turn = Turn.objects.get()

    runner.run_turn(turn_id=turn.pk)

    system, data = ModelCall.objects.get(turn=turn).messages
    assert "Workspace instructions" in system["content"]
    assert "Write British English. Never promise dates." in system["content"]
    assert "Never promise dates" not in data["content"]
    assert Turn.objects.get(pk=turn.pk).context["workspace_instructions"] == (
        "Write British English. Never promise dates."
    )


def test_a_workspace_without_instructions_adds_nothing_to_the_prompt(
    workspace: Workspace, bob: User, task: Task, mira: Agent
) -> None:
    _post(workspace, bob, task, "@Mira plan the offsite")
    turn = Turn.objects.get()

    runner.run_turn(turn_id=turn.pk)

    assert "Workspace instructions" not in ModelCall.objects.get(turn=turn).messages[0]["content"]


def test_the_small_embedded_model_gets_the_workspace_instructions_clipped(
    workspace: Workspace, task: Task, mira: Agent
) -> None:
    from agents.engine.context import build_context
    from agents.models import Provider

    Workspace.objects.filter(pk=workspace.pk).update(instructions="Be careful. " * 300)
    queued = turn_services.start_turn(agent=mira, task=task, trigger=Trigger.ASK)
    turn = Turn.objects.select_related("task__workspace", "agent").get(pk=queued.pk)

    small = build_context(turn, ModelProfile(provider=Provider.EMBEDDED), document=task.document)
    full = build_context(turn, ModelProfile(provider=Provider.FAKE), document=task.document)

    assert len(small["workspace_instructions"]) == 600
    assert small["workspace_instructions"].endswith("…")
    assert full["workspace_instructions"] == "Be careful. " * 300


def test_an_echo_turn_takes_few_database_statements(
    workspace: Workspace, bob: User, task: Task, mira: Agent, events: list[dict[str, Any]]
) -> None:
    """The engine's round trips are its cost (bench/turns.py): a reply-only turn reads the
    turn and the context, streams, stores the decision with the reply applied, and finishes in
    17 statements (there were 31, then 19); savepoints, which only exist inside a test's
    transaction, aside."""
    _post(workspace, bob, task, "@Mira plan the offsite")
    turn = Turn.objects.get()

    with CaptureQueriesContext(connection) as captured:
        outcome = runner.run_turn(turn_id=turn.pk)

    statements = [
        q["sql"] for q in captured.captured_queries if "SAVEPOINT" not in q["sql"].upper()
    ]
    assert outcome == TurnStatus.DONE
    assert len(statements) <= 17, "\n".join(s[:120] for s in statements)


def test_the_site_default_profile_is_looked_up_once_a_turn(
    workspace: Workspace,
    alice: User,
    task: Task,
    make_profile: Callable[..., ModelProfile],
    settings: Any,
) -> None:
    """An agent with no profile of its own answers with ``AGENTS_DEFAULT_PROFILE``: the claim
    resolves it and the rest of the turn uses that one (it is not read again)."""
    default = make_profile("echo")
    settings.AGENTS_DEFAULT_PROFILE = default.name
    agent = agent_services.create_agent(
        membership=factories.membership_of(workspace, alice), name="Ada"
    )
    turn = turn_services.start_turn(agent=agent, task=task, trigger=Trigger.ASK)

    with CaptureQueriesContext(connection) as captured:
        outcome = runner.run_turn(turn_id=turn.pk)

    by_name = 'WHERE "agents_modelprofile"."name"'
    lookups = [q["sql"] for q in captured.captured_queries if by_name in q["sql"]]
    assert outcome == TurnStatus.DONE
    assert Turn.objects.get(pk=turn.pk).model == default.model
    assert len(lookups) == 1, lookups
