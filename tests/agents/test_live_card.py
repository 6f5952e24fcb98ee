"""The agent's live card while a reply streams: rendered as the final chat message will be
(markdown, sanitised), and the reply's memory chips reach their owners' open pages live."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User

from agents.models import Agent, Trigger
from agents.outbox import events
from agents.services import turns as turn_services
from collab.lib.markdown import render_markdown
from collab.realtime import broadcast
from collab.tasks.models import Task


@pytest.fixture
def fragments(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The HTML fragments of agent events, in order."""
    seen: list[str] = []

    def capture(task_id: int, *, payload: dict[str, Any], html: str, html_readonly: str) -> None:
        seen.append(html)

    monkeypatch.setattr(broadcast, "agent_event", capture)
    return seen


def test_the_streaming_card_renders_markdown_as_the_final_message_will(
    task: Task, make_agent: Callable[..., Agent], fragments: list[str]
) -> None:
    agent = make_agent("Mira")
    turn = turn_services.start_turn(agent=agent, task=task, trigger=Trigger.ASK)
    text = "Two ideas:\n\n- **Alfama** for views\n- Baixa for `trams`"

    events.stream(turn, text, text)

    (html,) = fragments
    assert render_markdown(text) in html
    assert "<strong>Alfama</strong>" in html
    assert "<li>" in html
    assert "**" not in html


def test_the_streaming_card_never_lets_markup_through(
    task: Task, make_agent: Callable[..., Agent], fragments: list[str]
) -> None:
    agent = make_agent("Mira")
    turn = turn_services.start_turn(agent=agent, task=task, trigger=Trigger.ASK)
    text = 'Hi <script>alert(1)</script> <img src=x onerror="alert(2)"> [x](javascript:alert(3))'

    events.stream(turn, text, text)

    (html,) = fragments
    assert "<script" not in html
    assert "<img" not in html
    assert 'href="javascript' not in html
    assert "&lt;script&gt;" in html  # shown as text, as in the chat


def test_an_empty_stream_leaves_the_card_empty(
    task: Task, make_agent: Callable[..., Agent], fragments: list[str], alice: User
) -> None:
    agent = make_agent("Mira")
    turn = turn_services.start_turn(agent=agent, task=task, trigger=Trigger.ASK)

    events.stream(turn, "", "")

    (html,) = fragments
    assert 'data-testid="agent-stream"></div>' in html  # :empty, so no dashed box
