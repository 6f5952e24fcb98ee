"""The agents page makes outside agents (issue 29): owners only, through the outside-agent
service; the token and signing secret are shown once, escaped."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from agents.models import Agent, OutsideAgent
from collab.workspaces.models import Workspace

pytestmark = pytest.mark.django_db


def _create(client: Any, workspace: Workspace, **fields: str) -> Any:
    data = {"outside-name": "Scout", "outside-webhook_url": "", "outside-mode": "suggest_only"}
    data.update({f"outside-{k}": v for k, v in fields.items()})
    return client.post(reverse("agents:create_outside", args=[workspace.pk]), data)


def test_owner_creates_an_outside_agent_and_sees_its_secrets_once(
    as_user: Any, alice: User, workspace: Workspace
) -> None:
    client = as_user(alice)
    response = _create(client, workspace, webhook_url="http://127.0.0.1:9/hook")
    assert response.status_code == 200
    row = OutsideAgent.objects.select_related("agent").get()
    assert (row.agent.name, row.webhook_url) == ("Scout", "http://127.0.0.1:9/hook")
    page = response.content.decode()
    assert 'data-testid="outside-token"' in page
    secret = row.agent.outside_secrets.get().secret
    assert secret in page
    # shown once: the agents page never shows it again
    assert secret not in client.get(reverse("agents:manage", args=[workspace.pk])).content.decode()


def test_editors_cannot_create_outside_agents_and_outsiders_get_404(
    as_user: Any, bob: User, mallory: User, workspace: Workspace
) -> None:
    assert _create(as_user(bob), workspace).status_code == 403
    assert _create(as_user(mallory), workspace).status_code == 404
    assert not Agent.objects.filter(name="Scout").exists()


def test_a_bad_name_is_a_400_with_the_reason_escaped(
    as_user: Any, alice: User, workspace: Workspace
) -> None:
    response = _create(as_user(alice), workspace, name="<b>x</b>")
    assert response.status_code == 400
    assert b"<b>x</b>" not in response.content
    assert not OutsideAgent.objects.exists()
