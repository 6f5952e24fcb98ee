"""The Agents page (#32.7): the new agent's preview does not read as a second "Assistant" while
it has no name, and each agent's card says when it asks (its clarification policy)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from agents.models import Agent
from collab.workspaces.models import Workspace

pytestmark = pytest.mark.django_db


def _section(page: str, start: str, end: str) -> str:
    begin = page.index(start)
    return page[begin : page.index(end, begin)]


def test_the_new_agents_preview_names_no_one_until_it_has_a_name(
    as_user: Any, alice: User, workspace: Workspace
) -> None:
    page = as_user(alice).get(reverse("agents:manage", args=[workspace.pk])).content.decode()

    preview = _section(page, 'data-testid="agent-preview"', "</article>")
    assert "Assistant" not in preview
    assert "Your new agent" in preview


def test_each_agent_card_says_when_it_asks(
    as_user: Any, alice: User, workspace: Workspace, make_agent: Callable[..., Agent]
) -> None:
    make_agent("Sage", policy_name="never")
    make_agent("Quinn", policy_name="ask_when_blocked")

    page = as_user(alice).get(reverse("agents:manage", args=[workspace.pk])).content.decode()

    sage = _section(page, 'data-agent="Sage"', "</li>")
    quinn = _section(page, 'data-agent="Quinn"', "</li>")
    assert "never asks" in sage
    assert "asks when blocked" in quinn
