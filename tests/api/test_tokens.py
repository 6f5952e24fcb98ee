"""/api/tokens: a person's own API tokens over the API, through the settings page's services.
Everyone (owner, editor, viewer, outsider alike) sees and revokes only their own; another
person's token is a 404. A token may list and revoke tokens but never make one."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from collab.accounts.models import ApiToken
from collab.accounts.services import authenticate_api_token, create_api_token
from collab.audit.models import AuditEvent
from collab.workspaces.models import Workspace
from tests.api.conftest import ApiClientFactory, client_with_token, send_json

pytestmark = pytest.mark.django_db

CAST = ["alice", "bob", "carol", "mallory"]


def _revoke(client: Client, token_id: int) -> Any:
    return send_json(client, "POST", f"/api/tokens/{token_id}/revoke")


@pytest.mark.parametrize("name", CAST)
def test_each_person_lists_only_their_own_tokens(
    request: pytest.FixtureRequest, name: str, workspace: Workspace, mallory: User
) -> None:
    me = request.getfixturevalue(name)
    for someone in User.objects.exclude(pk=me.pk):
        create_api_token(user=someone, name=f"{someone.username}'s robot")
    mine = create_api_token(user=me, name="my script")

    response = client_with_token(mine.token).get("/api/tokens")

    assert response.status_code == 200
    rows = response.json()["tokens"]
    assert [(row["id"], row["name"]) for row in rows] == [(mine.api_token.pk, "my script")]
    assert "token" not in rows[0]
    assert mine.token not in response.content.decode()


@pytest.mark.parametrize("name", CAST)
def test_revoking_someone_elses_token_answers_404_and_it_keeps_working(
    request: pytest.FixtureRequest, name: str, workspace: Workspace, mallory: User
) -> None:
    me = request.getfixturevalue(name)
    other = mallory if me.username != "mallory" else User.objects.get(username="alice")
    theirs = create_api_token(user=other, name="theirs")

    response = _revoke(
        client_with_token(create_api_token(user=me, name="mine").token), theirs.api_token.pk
    )

    assert response.status_code == 404
    assert response.json() == {"detail": "Not found."}
    assert authenticate_api_token(theirs.token) == other
    assert not AuditEvent.objects.filter(action=AuditEvent.Action.API_TOKEN_REVOKED).exists()


def test_revoking_an_unknown_token_answers_404(alice: User, api_as: ApiClientFactory) -> None:
    assert _revoke(api_as(alice), 999_999).status_code == 404


def test_revoking_my_token_stops_it_at_once_and_again_is_harmless(
    alice: User, api_as: ApiClientFactory
) -> None:
    spare = create_api_token(user=alice, name="laptop")
    client = api_as(alice)

    first = _revoke(client, spare.api_token.pk)
    again = _revoke(client, spare.api_token.pk)

    assert first.status_code == again.status_code == 200
    assert first.json()["active"] is False
    assert first.json()["revoked_at"] == again.json()["revoked_at"] is not None
    assert client_with_token(spare.token).get("/api/tokens").status_code == 401
    events = AuditEvent.objects.filter(action=AuditEvent.Action.API_TOKEN_REVOKED)
    assert [(e.actor, e.via) for e in events] == [(alice, "api")]


def test_a_token_may_revoke_itself(alice: User) -> None:
    mine = create_api_token(user=alice, name="one-off job")
    client = client_with_token(mine.token)

    assert _revoke(client, mine.api_token.pk).status_code == 200
    assert client.get("/api/tokens").status_code == 401


def test_a_token_cannot_make_tokens(alice: User, api_as: ApiClientFactory) -> None:
    response = send_json(api_as(alice), "POST", "/api/tokens", {"name": "successor"})

    assert response.status_code == 403
    assert "settings page" in response.json()["detail"]
    assert list(ApiToken.objects.values_list("name", flat=True)) == ["tests"]


def test_a_browser_session_makes_a_token_that_is_shown_only_once(as_user: Any, alice: User) -> None:
    session = as_user(alice)

    made = send_json(session, "POST", "/api/tokens", {"name": "  nightly export "})

    assert made.status_code == 201
    body = made.json()
    assert body["name"] == "nightly export"
    assert body["token"].startswith(body["prefix"])
    assert authenticate_api_token(body["token"]) == alice
    listed = session.get("/api/tokens")
    assert [row["id"] for row in listed.json()["tokens"]] == [body["id"]]
    assert body["token"] not in listed.content.decode()
    event = AuditEvent.objects.get(action=AuditEvent.Action.API_TOKEN_CREATED)
    assert (event.actor, event.via) == (alice, "api")


@pytest.mark.parametrize("name", ["", "   ", "x" * 101, "bad\x00name"])
def test_a_token_needs_a_sensible_name(as_user: Any, alice: User, name: str) -> None:
    response = send_json(as_user(alice), "POST", "/api/tokens", {"name": name})

    assert response.status_code == 400
    assert "name" in response.json()["errors"]
    assert not ApiToken.objects.exists()


def test_the_session_needs_the_csrf_token_to_make_one(alice: User) -> None:
    session = Client(enforce_csrf_checks=True)
    session.force_login(alice)

    response = session.post(
        "/api/tokens", json.dumps({"name": "x"}), content_type="application/json"
    )

    assert response.status_code == 403
    assert not ApiToken.objects.exists()


def test_without_a_token_or_session_the_tokens_are_401(client: Client, alice: User) -> None:
    mine = create_api_token(user=alice, name="script")

    assert client.get("/api/tokens").status_code == 401
    assert _revoke(client, mine.api_token.pk).status_code == 401
    assert send_json(client, "POST", "/api/tokens", {"name": "x"}).status_code == 401
    assert authenticate_api_token(mine.token) == alice


def test_the_list_pages_like_every_list(alice: User, api_as: ApiClientFactory) -> None:
    for n in range(4):
        create_api_token(user=alice, name=f"script {n}")
    client = api_as(alice)

    newest = client.get("/api/tokens?limit=3").json()
    older = client.get(f"/api/tokens?limit=3&before={newest['next_before']}").json()

    assert newest["has_more"] is True
    assert [row["name"] for row in newest["tokens"]] == ["script 2", "script 3", "tests"]
    assert [row["name"] for row in older["tokens"]] == ["script 0", "script 1"]
    assert older["has_more"] is False


def test_listing_tokens_is_a_fixed_number_of_queries(
    alice: User, api_as: ApiClientFactory, django_assert_num_queries: Any
) -> None:
    for n in range(5):
        create_api_token(user=alice, name=f"script {n}")
    client = api_as(alice)
    client.get("/api/tokens")  # first use records last_used_at
    # token (with the address's lockout count), the page of tokens
    with django_assert_num_queries(2):
        assert len(client.get("/api/tokens").json()["tokens"]) == 6
