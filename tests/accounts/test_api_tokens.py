from __future__ import annotations

import hashlib
import re
from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.urls import reverse
from django.utils.timezone import localtime

from collab.accounts.models import ApiToken
from collab.accounts.services import authenticate_api_token, create_api_token

pytestmark = pytest.mark.django_db

TOKEN_PATTERN = re.compile(r'data-testid="new-token">(collab_[A-Za-z0-9_-]+)<')


def create_via_page(client: Client, name: str = "laptop script") -> str:
    response = client.post(reverse("accounts:settings"), {"name": name})
    assert response.status_code == 200
    match = TOKEN_PATTERN.search(response.content.decode())
    assert match, "the new token is on the page"
    return match.group(1)


def test_creating_a_token_shows_it_once(as_user, alice: User) -> None:
    client = as_user(alice)

    token = create_via_page(client)

    later = client.get(reverse("accounts:settings")).content.decode()
    assert token not in later
    assert "laptop script" in later
    assert token[:13] in later  # the prefix tells tokens apart


def test_tokens_are_stored_only_as_a_hash(as_user, alice: User) -> None:
    token = create_via_page(as_user(alice))

    stored = ApiToken.objects.get(user=alice)
    assert stored.token_hash == hashlib.sha256(token.encode()).hexdigest()
    assert token not in {stored.name, stored.prefix, stored.token_hash}
    assert token.startswith(stored.prefix)


def test_a_token_from_the_page_authenticates_the_api(as_user, alice: User, workspace) -> None:
    token = create_via_page(as_user(alice))

    response = Client(headers={"Authorization": f"Bearer {token}"}).get("/api/workspaces")

    assert response.status_code == 200
    assert [w["name"] for w in response.json()] == ["Acme"]


def test_the_page_shows_when_a_token_was_last_used(as_user, alice: User) -> None:
    client = as_user(alice)
    token = create_via_page(client)
    assert "never" in client.get(reverse("accounts:settings")).content.decode()

    Client(headers={"Authorization": f"Bearer {token}"}).get("/api/workspaces")

    stored = ApiToken.objects.get(user=alice)
    assert stored.last_used_at is not None
    page = client.get(reverse("accounts:settings")).content.decode()
    assert localtime(stored.last_used_at).strftime("%Y-%m-%d %H:%M") in page


@pytest.mark.parametrize(("name", "reason"), [("", "required"), ("x" * 101, "at most 100")])
def test_a_token_needs_a_sensible_name(as_user, alice: User, name: str, reason: str) -> None:
    response = as_user(alice).post(reverse("accounts:settings"), {"name": name})

    assert response.status_code == 400
    assert reason in " ".join(response.context["form"].errors["name"])
    assert not ApiToken.objects.exists()


def test_a_blank_token_name_is_refused_by_the_service(as_user, alice: User) -> None:
    response = as_user(alice).post(reverse("accounts:settings"), {"name": "   "})

    assert response.status_code == 400
    assert not ApiToken.objects.exists()


def test_the_page_lists_only_my_tokens(as_user, alice: User, bob: User) -> None:
    create_api_token(user=bob, name="bob's robot")

    page = as_user(alice).get(reverse("accounts:settings")).content.decode()

    assert "bob&#x27;s robot" not in page
    assert "No tokens yet." in page


def test_revoking_a_token_on_the_page_stops_it_working(as_user, alice: User) -> None:
    client = as_user(alice)
    token = create_via_page(client)
    stored = ApiToken.objects.get(user=alice)

    response = client.post(reverse("accounts:revoke_token", args=[stored.pk]))

    assert response.status_code == 302
    assert response["Location"] == reverse("accounts:settings")
    stored.refresh_from_db()
    assert stored.revoked_at is not None
    assert authenticate_api_token(token) is None
    assert "revoked" in client.get(reverse("accounts:settings")).content.decode()


def test_revoking_twice_is_harmless(as_user, alice: User) -> None:
    client = as_user(alice)
    stored = create_api_token(user=alice, name="script").api_token
    url = reverse("accounts:revoke_token", args=[stored.pk])
    client.post(url)
    first = ApiToken.objects.get(pk=stored.pk).revoked_at

    assert client.post(url).status_code == 302
    assert ApiToken.objects.get(pk=stored.pk).revoked_at == first


def test_revoking_needs_a_post(as_user, alice: User) -> None:
    stored = create_api_token(user=alice, name="script").api_token

    response = as_user(alice).get(reverse("accounts:revoke_token", args=[stored.pk]))

    assert response.status_code == 405
    stored.refresh_from_db()
    assert stored.is_active


def test_nobody_can_revoke_another_users_token(as_user, alice: User, mallory: User) -> None:
    new = create_api_token(user=alice, name="script")

    response = as_user(mallory).post(reverse("accounts:revoke_token", args=[new.api_token.pk]))

    assert response.status_code == 404
    new.api_token.refresh_from_db()
    assert new.api_token.is_active
    assert authenticate_api_token(new.token) == alice


def test_revoking_an_unknown_token_answers_404(as_user, alice: User) -> None:
    response = as_user(alice).post(reverse("accounts:revoke_token", args=[999999]))

    assert response.status_code == 404


def test_revoking_needs_login(client: Client, alice: User) -> None:
    stored = create_api_token(user=alice, name="script").api_token

    response = client.post(reverse("accounts:revoke_token", args=[stored.pk]))

    assert response.status_code == 302
    stored.refresh_from_db()
    assert stored.is_active


def test_command_prints_just_a_working_token(alice: User) -> None:
    out = StringIO()

    call_command("create_api_token", "alice", stdout=out)

    token = out.getvalue().strip()
    assert out.getvalue() == token + "\n"
    assert authenticate_api_token(token) == alice
    assert ApiToken.objects.get(user=alice).name == "command line"


def test_command_names_the_token(alice: User) -> None:
    call_command("create_api_token", "alice", "--name", "nightly export", stdout=StringIO())

    assert ApiToken.objects.get(user=alice).name == "nightly export"


def test_command_refuses_an_unknown_user_with_a_non_zero_exit() -> None:
    with pytest.raises(CommandError, match="No user named 'nobody'") as refused:
        call_command("create_api_token", "nobody", stdout=StringIO())

    assert refused.value.returncode != 0
    assert not ApiToken.objects.exists()


def test_command_refuses_a_deactivated_user(alice: User) -> None:
    alice.is_active = False
    alice.save()

    with pytest.raises(CommandError, match="deactivated"):
        call_command("create_api_token", "alice", stdout=StringIO())
    assert not ApiToken.objects.exists()


def test_command_refuses_a_blank_name(alice: User) -> None:
    with pytest.raises(CommandError, match="Name the token"):
        call_command("create_api_token", "alice", "--name", " ", stdout=StringIO())


def test_the_page_links_the_api_docs_and_schema(as_user, alice: User) -> None:
    page = as_user(alice).get(reverse("accounts:settings")).content.decode()

    assert 'href="/api/docs"' in page
    assert 'href="/api/openapi.json"' in page
