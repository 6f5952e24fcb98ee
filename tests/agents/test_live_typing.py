"""A direct edit by an agent reaches editors as live typing: several small CRDT updates, each
persisted and published, ending exactly where the one-step edit ends."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from agents.engine import runner
from agents.llm import fakes
from agents.models import Action, Agent, AgentMode, Trigger, Turn, TurnStatus
from agents.services import live_typing
from agents.services import turns as turn_services
from collab.lib import ytext
from collab.realtime import relay
from collab.tasks import documents
from collab.tasks.models import DocumentUpdate, DocumentVersion, Message, Task
from collab.workspaces.models import Workspace
from tests import factories

BEFORE = "# Offsite\n\nVenue: Lyon 🌧, May 3.\nBudget: tbd\n"
FIND = "Venue: Lyon 🌧, May 3."
REPLACE = "Venue: 京都 ☀️ near the old town, with a garden 🌸 and room for twelve, May 3."
AFTER = BEFORE.replace(FIND, REPLACE)


@pytest.fixture
def typist(make_agent: Callable[..., Agent]) -> Agent:
    fakes.register_fake_behaviour(
        "retype-venue",
        lambda messages: json.dumps(
            {"actions": [{"kind": "edit", "text": "", "find": FIND, "replace": REPLACE}]}
        ),
    )
    return make_agent("Typist", behaviour="retype-venue", mode=AgentMode.MAY_EDIT)


@pytest.fixture
def published(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    seen: list[bytes] = []
    monkeypatch.setattr(relay, "publish_update", lambda document_id, update: seen.append(update))
    return seen


def _agent_rows(task: Task) -> int:
    return DocumentUpdate.objects.filter(
        document__task=task, author_label__startswith="Typist"
    ).count()


def _run(agent: Agent, task: Task) -> Turn:
    documents.apply_text_edit(task=task, new_text=BEFORE, author_label="bob")
    turn = turn_services.start_turn(agent=agent, task=task, trigger=Trigger.ASK)
    runner.run_turn(turn_id=turn.pk)
    return turn


def test_a_typed_edit_ends_exactly_like_the_one_step_edit(
    workspace: Workspace,
    typist: Agent,
    settings: Any,
    published: list[bytes],
    django_capture_on_commit_callbacks: Any,
) -> None:
    one_step_task = factories.make_task(workspace, title="One step")
    typed_task = factories.make_task(workspace, title="Typed")

    settings.AGENTS_TYPING_SECONDS = 0
    with django_capture_on_commit_callbacks(execute=True):
        _run(typist, one_step_task)
    one_step_updates = len(published)
    settings.AGENTS_TYPING_SECONDS = 0.05
    with django_capture_on_commit_callbacks(execute=True):
        turn = _run(typist, typed_task)

    assert documents.read_document(task=one_step_task).text == AFTER
    assert documents.read_document(task=typed_task).text == AFTER
    assert typed_task.document.__class__.objects.get(task=typed_task).text == AFTER
    assert _agent_rows(one_step_task) == 1
    assert _agent_rows(typed_task) >= 4  # a few words per step
    assert one_step_updates == 2  # bob's text, then the agent's edit
    assert len(published) - one_step_updates - 1 == _agent_rows(typed_task)  # 1: bob's text
    # every published update, applied in order, ends at the same text
    assert ytext.text_of(*published[one_step_updates:]) == AFTER
    action = Action.objects.get(turn=turn)
    assert action.status == Action.Status.APPLIED
    assert action.result["edited_directly"] is True
    assert action.result["steps"] == _agent_rows(typed_task)
    # one version for the whole edit, not one per step
    agent_versions = DocumentVersion.objects.filter(
        document__task=typed_task, kind=DocumentVersion.Kind.SERVICE, text=AFTER
    )
    assert agent_versions.count() == 1
    partial_versions = [
        v
        for v in DocumentVersion.objects.filter(document__task=typed_task)
        if any(a.startswith("Typist") for a in v.authors) and v.text != AFTER
    ]
    assert partial_versions == []


def test_a_person_typing_while_the_agent_types_keeps_their_words(
    task: Task, typist: Agent, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.AGENTS_TYPING_SECONDS = 0.05
    real_step = live_typing.type_step
    steps = 0

    def step_then_bob_types(typing: Any) -> bool:
        nonlocal steps
        steps += 1
        done = real_step(typing)
        if steps == 2:  # bob adds a line at the end from his editor, between two steps
            latest = documents.read_document(task=task).text
            documents.apply_text_edit(
                task=task, new_text=latest + "Bring umbrellas!\n", author_label="bob"
            )
        return done

    monkeypatch.setattr(live_typing, "type_step", step_then_bob_types)

    _run(typist, task)

    assert steps > 2
    assert documents.read_document(task=task).text == AFTER + "Bring umbrellas!\n"


class WorkerKilled(Exception):
    pass


def _kill_after(monkeypatch: pytest.MonkeyPatch, steps: int) -> None:
    real_step = live_typing.type_step
    calls = 0

    def step(typing: Any) -> bool:
        nonlocal calls
        calls += 1
        if calls > steps:
            raise WorkerKilled
        return real_step(typing)

    monkeypatch.setattr(live_typing, "type_step", step)


def _redeliver(turn: Turn) -> str:
    Turn.objects.filter(pk=turn.pk).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
    return runner.run_turn(turn_id=turn.pk)


def test_redelivery_after_a_crash_mid_typing_types_only_the_rest(
    task: Task, typist: Agent, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.AGENTS_TYPING_SECONDS = 0.05
    documents.apply_text_edit(task=task, new_text=BEFORE, author_label="bob")
    turn = turn_services.start_turn(agent=typist, task=task, trigger=Trigger.ASK)
    _kill_after(monkeypatch, 2)
    with pytest.raises(WorkerKilled):
        runner.run_turn(turn_id=turn.pk)
    partial = documents.read_document(task=task).text
    assert partial not in (BEFORE, AFTER)
    monkeypatch.undo()
    settings.AGENTS_TYPING_SECONDS = 0.05

    assert _redeliver(turn) == TurnStatus.DONE

    action = Action.objects.get(turn=turn)
    assert documents.read_document(task=task).text == AFTER
    assert action.status == Action.Status.APPLIED
    assert _agent_rows(task) == action.result["steps"]  # no step was applied twice
    _redeliver(turn)
    assert _agent_rows(task) == action.result["steps"]


def test_a_crash_mid_typing_after_someone_else_wrote_is_reported_not_repeated(
    task: Task, typist: Agent, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.AGENTS_TYPING_SECONDS = 0.05
    documents.apply_text_edit(task=task, new_text=BEFORE, author_label="bob")
    turn = turn_services.start_turn(agent=typist, task=task, trigger=Trigger.ASK)
    _kill_after(monkeypatch, 2)
    with pytest.raises(WorkerKilled):
        runner.run_turn(turn_id=turn.pk)
    monkeypatch.undo()
    settings.AGENTS_TYPING_SECONDS = 0.05
    latest = documents.read_document(task=task).text
    documents.apply_text_edit(task=task, new_text="Draft. " + latest, author_label="bob")

    _redeliver(turn)

    action = Action.objects.get(turn=turn)
    assert action.status == Action.Status.APPLIED
    assert action.result["interrupted"] is True
    assert action.result["typed_steps"] == 2
    assert _agent_rows(task) == 2
    assert documents.read_document(task=task).text == "Draft. " + latest
    notice = Message.objects.filter(task=task, kind=Message.Kind.SYSTEM).last()
    assert notice is not None
    assert "interrupted after 2 of" in notice.body


def test_the_agent_is_present_while_its_turn_runs_with_a_cursor_where_it_types(
    task: Task, typist: Agent, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agents.outbox.presence import agent_client_id
    from collab.realtime import yprotocol

    sent: list[bytes] = []
    monkeypatch.setattr(relay, "publish_awareness", lambda document_id, update: sent.append(update))
    settings.AGENTS_TYPING_SECONDS = 0.05

    _run(typist, task)

    entries = [yprotocol.parse_awareness_update(update)[0] for update in sent]
    assert {entry.client_id for entry in entries} == {agent_client_id(typist.pk)}
    states = [json.loads(entry.state_json) for entry in entries[:-1]]
    assert states[0]["user"]["name"] == "Typist"
    assert states[0]["user"]["kind"] == "agent"
    assert "cursor" not in states[0]
    assert sum("cursor" in state for state in states) == _agent_rows(task)
    assert entries[-1].removed  # gone when the turn ends
