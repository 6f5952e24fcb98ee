from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.auth.models import User
from django.test import Client

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
