"""A suggestion card in the browser's HTML (#19.1, #19.6): its diff keeps one line per line,
"Edit, then accept" starts from the suggestion's exact text, and an edited suggestion shows
what was applied."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

import pytest
from django.contrib.auth.models import User
from langchain_core.messages import BaseMessage

from agents.engine import runner
from agents.llm import fakes
from agents.models import Action, Agent, AgentMode, Suggestion, Trigger
from agents.services import turns as turn_services
from collab.tasks import documents
from collab.tasks.models import Task

pytestmark = pytest.mark.django_db(transaction=True)

APPEND = "\n- [ ] Book a venue in Belém (Ben)"


def _scripted(*actions: dict[str, str]) -> Callable[[list[BaseMessage]], str]:
    return lambda messages: json.dumps({"actions": list(actions)})


@pytest.fixture
def suggestion(task: Task, make_agent: Callable[..., Agent]) -> Suggestion:
    documents.apply_text_edit(
        task=task, new_text="Plan\n- [ ] Agreed next step", author_label="alice"
    )
    fakes.register_fake_behaviour(
        "append-line",
        _scripted({"kind": "suggest", "text": "One more step.", "find": "", "replace": APPEND}),
    )
    agent = make_agent("Mira", behaviour="append-line")
    agent.tasks.add(task)
    turn = turn_services.start_turn(agent=agent, task=task, trigger=Trigger.ASK)
    runner.run_turn(turn_id=turn.pk)
    return Suggestion.objects.get(turn=turn)


def test_a_suggestion_diff_keeps_a_line_without_newline_apart_from_the_next(
    suggestion: Suggestion,
) -> None:
    lines = suggestion.diff.splitlines()

    assert " - [ ] Agreed next step" in lines
    assert "+- [ ] Book a venue in Belém (Ben)" in lines
    assert not any("step+" in line for line in lines)


def test_edit_then_accept_starts_from_the_exact_text_with_its_leading_newline(
    as_user: Callable[[User], object], alice: User, task: Task, suggestion: Suggestion
) -> None:
    page = as_user(alice).get(f"/t/{task.pk}/").content.decode()  # type: ignore[attr-defined]

    textarea = re.search(r'<textarea name="text"[^>]*>(.*?)</textarea>', page, re.S)
    assert textarea is not None
    # HTML drops one newline right after the tag, so the suggestion's own must follow it
    assert textarea.group(1) == "\n" + APPEND


def test_accepting_an_edit_sent_with_crlf_keeps_the_line_break_and_shows_what_was_applied(
    as_user: Callable[[User], object], alice: User, task: Task, suggestion: Suggestion
) -> None:
    client = as_user(alice)
    edited = "\r\n- [ ] Book a venue in Belém (Ben and Ana)"

    response = client.post(  # type: ignore[attr-defined]
        f"/t/{task.pk}/suggestions/{suggestion.pk}/accept/", {"text": edited, "edited": "1"}
    )

    assert response.status_code in (200, 204, 302)
    text = documents.read_document(task=task).text
    assert text == "Plan\n- [ ] Agreed next step\n- [ ] Book a venue in Belém (Ben and Ana)"
    page = client.get(f"/t/{task.pk}/").content.decode()  # type: ignore[attr-defined]
    applied = re.search(r'data-testid="applied-text">(.*?)</pre>', page, re.S)
    assert applied is not None
    assert "Ben and Ana" in applied.group(1)


def test_feedback_buttons_are_words_not_emoji(
    as_user: Callable[[User], object], alice: User, task: Task, suggestion: Suggestion
) -> None:
    page = as_user(alice).get(f"/t/{task.pk}/").content.decode()  # type: ignore[attr-defined]

    assert '<span class="label">Helpful</span>' in page
    assert "👍" not in page
    assert "👎" not in page


@pytest.fixture
def direct_edit(task: Task, make_agent: Callable[..., Agent]) -> Action:
    documents.apply_text_edit(
        task=task, new_text="Plan\n- [ ] Agreed next step", author_label="bob"
    )
    fakes.register_fake_behaviour(
        "append-directly",
        _scripted({"kind": "edit", "text": "One more step.", "find": "", "replace": APPEND}),
    )
    agent = make_agent("Eddie", behaviour="append-directly", mode=AgentMode.MAY_EDIT)
    agent.tasks.add(task)
    turn = turn_services.start_turn(agent=agent, task=task, trigger=Trigger.ASK)
    runner.run_turn(turn_id=turn.pk)
    return Action.objects.get(turn=turn, kind="edit")


def test_an_editor_undoes_an_agents_direct_edit_and_keeps_what_others_typed_since(
    as_user: Callable[[User], object], bob: User, task: Task, direct_edit: Action
) -> None:
    assert documents.read_document(task=task).text.endswith(APPEND)
    text = documents.read_document(task=task).text
    documents.apply_text_edit(task=task, new_text="# " + text, author_label="alice")

    response = as_user(bob).post(f"/t/{task.pk}/edits/{direct_edit.pk}/undo/")  # type: ignore[attr-defined]

    assert response.status_code in (204, 302)
    assert documents.read_document(task=task).text == "# Plan\n- [ ] Agreed next step"
    direct_edit.refresh_from_db()
    assert direct_edit.result["undone_by"] == "bob"
    page = as_user(bob).get(f"/t/{task.pk}/").content.decode()  # type: ignore[attr-defined]
    assert "Undone by bob." in page
    again = as_user(bob).post(f"/t/{task.pk}/edits/{direct_edit.pk}/undo/")  # type: ignore[attr-defined]
    assert again.status_code == 400
    assert "already undid" in again.content.decode()


def test_an_agent_edit_whose_text_changed_since_is_not_undone_blindly(
    as_user: Callable[[User], object], bob: User, task: Task, direct_edit: Action
) -> None:
    documents.apply_text_edit(task=task, new_text="Plan, rewritten by hand", author_label="bob")

    response = as_user(bob).post(f"/t/{task.pk}/edits/{direct_edit.pk}/undo/")  # type: ignore[attr-defined]

    assert response.status_code == 400
    assert "cannot be undone automatically" in response.content.decode()
    assert documents.read_document(task=task).text == "Plan, rewritten by hand"


def test_viewers_cannot_undo_an_agents_edit(
    as_user: Callable[[User], object], carol: User, task: Task, direct_edit: Action
) -> None:
    page = as_user(carol).get(f"/t/{task.pk}/").content.decode()  # type: ignore[attr-defined]
    assert 'data-testid="undo-edit"' not in page

    response = as_user(carol).post(f"/t/{task.pk}/edits/{direct_edit.pk}/undo/")  # type: ignore[attr-defined]

    assert response.status_code == 403
    assert documents.read_document(task=task).text.endswith(APPEND)


def test_a_persons_suggestion_shows_as_theirs_escaped_without_feedback_and_exports_as_theirs(
    as_user: Callable[[User], object], alice: User, bob: User, task: Task
) -> None:
    from django.urls import reverse

    from agents.services.suggestions import propose_suggestion
    from collab.workspaces.selectors import get_membership

    documents.apply_text_edit(task=task, new_text="Venue: TBD\n", author_label="alice")
    suggestion = propose_suggestion(
        membership=get_membership(bob, task.workspace_id),
        task=task,
        find="TBD",
        replace="<b>barn</b>",
        rationale="Cheaper & closer",
    )

    client = as_user(alice)
    page = client.get(f"/t/{task.pk}/").content.decode()  # type: ignore[attr-defined]
    card = re.search(
        rf'<article[^>]*id="suggestion-{suggestion.pk}".*?</article>\s*(.*?)</div>', page, re.S
    )
    assert card is not None
    assert '<strong style="color: inherit">bob</strong> suggests' in card.group(0)
    assert "Cheaper &amp; closer" in card.group(0)
    assert "&lt;b&gt;barn&lt;/b&gt;" in card.group(0)
    assert "<b>barn</b>" not in card.group(0)
    assert "feedback" not in card.group(1)  # feedback is on agent work only
    export = client.get(reverse("review:task_export", args=[task.pk]))  # type: ignore[attr-defined]
    events = [json.loads(line) for line in b"".join(export.streaming_content).splitlines()]
    proposed = [e for e in events if e["event"] == "suggestion.proposed"]
    assert [e["role"] for e in proposed] == ["user_bob"]
