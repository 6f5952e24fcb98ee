from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from agents.memory import services as memory_services
from agents.memory.models import MemoryItem
from collab.accounts.services import create_api_token

ApiClientFactory = Callable[[User], Client]


def token_for(user: User) -> str:
    return create_api_token(user=user, name="tests").token


def client_with_token(token: str, **kwargs: object) -> Client:
    return Client(headers={"Authorization": f"Bearer {token}"}, **kwargs)


@pytest.fixture
def api_as() -> ApiClientFactory:
    """``api_as(alice)`` gives a client that sends a fresh API token of alice's."""
    return lambda user: client_with_token(token_for(user))


def send_json(client: Client, method: str, url: str, body: object = None) -> Any:
    """``method`` ``url`` with ``body`` (``{}`` when none) as JSON."""
    data = json.dumps({} if body is None else body)
    return client.generic(method, url, data=data, content_type="application/json")


def remember(user: User, text: str, **fields: Any) -> MemoryItem:
    """A memory item of ``user``'s, made through the service."""
    item = memory_services.create_item(user=user, text=text, **fields).item
    assert item is not None
    return item
