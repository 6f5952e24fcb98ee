from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from langchain_core.messages import BaseMessage

from agents.engine import runner
from agents.llm import fakes
from agents.models import Action, Agent, AgentMode, Suggestion, Trigger
from agents.services import suggestions as suggestion_services
from agents.services import turns as turn_services
from collab.tasks.models import Document, Task
from collab.workspaces.models import Workspace
from tests import factories


def _scripted(*actions: dict[str, str]) -> Callable[[list[BaseMessage]], str]:
    return lambda messages: json.dumps({"actions": list(actions)})


def _set_document(task: Task, text: str) -> None:
    Document.objects.filter(task=task).update(text=text)


def _document(task: Task) -> str:
    return Document.objects.get(task=task).text


@pytest.fixture
def editor_agent(task: Task, make_agent: Callable[..., Agent]) -> Agent:
    fakes.register_fake_behaviour(
        "fix-date",
        _scripted(
            {"kind": "suggest", "text": "The date moved.", "find": "May 3", "replace": "May 10"}
        ),
    )
    agent = make_agent("Editor", behaviour="fix-date")
    agent.tasks.add(task)
    return agent


def _suggest(task: Task, agent: Agent) -> Suggestion:
    turn = turn_services.start_turn(agent=agent, task=task, trigger=Trigger.ASK)
    runner.run_turn(turn_id=turn.pk)
    return Suggestion.objects.get(turn=turn)


def test_suggestion_shows_a_diff_and_leaves_the_document_alone(
    task: Task, editor_agent: Agent
) -> None:
    _set_document(task, "Offsite on May 3 in Lyon.\n")

    suggestion = _suggest(task, editor_agent)

    assert suggestion.status == Suggestion.Status.PROPOSED
    assert "-Offsite on May 3 in Lyon." in suggestion.diff
    assert "+Offsite on May 10 in Lyon." in suggestion.diff
    assert _document(task) == "Offsite on May 3 in Lyon.\n"


def test_accepting_a_suggestion_changes_the_document(
    workspace: Workspace, bob: User, task: Task, editor_agent: Agent
) -> None:
    _set_document(task, "Offsite on May 3 in Lyon.\n")
    suggestion = _suggest(task, editor_agent)

    suggestion_services.accept_suggestion(
        membership=factories.membership_of(workspace, bob), suggestion=suggestion
    )

    suggestion.refresh_from_db()
    assert _document(task) == "Offsite on May 10 in Lyon.\n"
    assert suggestion.status == Suggestion.Status.ACCEPTED
    assert suggestion.decided_by == bob


def test_an_edited_suggestion_applies_the_persons_text(
    workspace: Workspace, bob: User, task: Task, editor_agent: Agent
) -> None:
    _set_document(task, "Offsite on May 3 in Lyon.\n")
    suggestion = _suggest(task, editor_agent)

    suggestion_services.accept_suggestion(
        membership=factories.membership_of(workspace, bob), suggestion=suggestion, text="May 17"
    )

    suggestion.refresh_from_db()
    assert _document(task) == "Offsite on May 17 in Lyon.\n"
    assert suggestion.status == Suggestion.Status.EDITED
    assert suggestion.final_text == "May 17"


def test_rejecting_a_suggestion_records_the_outcome(
    workspace: Workspace, bob: User, task: Task, editor_agent: Agent
) -> None:
    _set_document(task, "Offsite on May 3 in Lyon.\n")
    suggestion = _suggest(task, editor_agent)

    suggestion_services.reject_suggestion(
        membership=factories.membership_of(workspace, bob), suggestion=suggestion
    )

    assert Suggestion.objects.get().status == Suggestion.Status.REJECTED
    assert _document(task) == "Offsite on May 3 in Lyon.\n"


def test_a_suggestion_is_decided_only_once(
    workspace: Workspace, bob: User, task: Task, editor_agent: Agent
) -> None:
    _set_document(task, "Offsite on May 3 in Lyon.\n")
    suggestion = _suggest(task, editor_agent)
    member = factories.membership_of(workspace, bob)
    suggestion_services.reject_suggestion(membership=member, suggestion=suggestion)

    with pytest.raises(ValidationError):
        suggestion_services.accept_suggestion(membership=member, suggestion=suggestion)


def test_suggestion_whose_text_is_gone_is_marked_stale(
    workspace: Workspace, bob: User, task: Task, editor_agent: Agent
) -> None:
    _set_document(task, "Offsite on May 3 in Lyon.\n")
    suggestion = _suggest(task, editor_agent)
    _set_document(task, "Offsite cancelled.\n")

    with pytest.raises(ValidationError):
        suggestion_services.accept_suggestion(
            membership=factories.membership_of(workspace, bob), suggestion=suggestion
        )
    assert Suggestion.objects.get().status == Suggestion.Status.STALE
    assert _document(task) == "Offsite cancelled.\n"


def test_viewer_cannot_accept_a_suggestion(
    workspace: Workspace, carol: User, task: Task, editor_agent: Agent
) -> None:
    _set_document(task, "Offsite on May 3 in Lyon.\n")
    suggestion = _suggest(task, editor_agent)

    with pytest.raises(PermissionDenied):
        suggestion_services.accept_suggestion(
            membership=factories.membership_of(workspace, carol), suggestion=suggestion
        )


def test_change_to_text_not_in_the_document_is_refused(task: Task, editor_agent: Agent) -> None:
    _set_document(task, "Nothing about dates.\n")
    turn = turn_services.start_turn(agent=editor_agent, task=task, trigger=Trigger.ASK)

    runner.run_turn(turn_id=turn.pk)

    action = Action.objects.get(turn=turn)
    assert action.status == Action.Status.SKIPPED
    assert action.detail == "the text to replace is not in the document"
    assert not Suggestion.objects.exists()


def test_suggest_only_agent_proposes_its_edits(
    task: Task, make_agent: Callable[..., Agent]
) -> None:
    fakes.register_fake_behaviour(
        "append", _scripted({"kind": "edit", "text": "", "find": "", "replace": "\nNew line"})
    )
    agent = make_agent("Careful", behaviour="append", mode=AgentMode.SUGGEST_ONLY)
    _set_document(task, "Start")
    turn = turn_services.start_turn(agent=agent, task=task, trigger=Trigger.ASK)

    runner.run_turn(turn_id=turn.pk)

    assert _document(task) == "Start"
    assert Action.objects.get(turn=turn).result["as_suggestion"] is True
    assert Suggestion.objects.get().replace == "\nNew line"
