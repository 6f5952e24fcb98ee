from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from tests.factories import PASSWORD

pytestmark = pytest.mark.django_db

NEW_PASSWORD = "a different long passphrase"


def signed_in_user(client: Client) -> str | None:
    user_id = client.session.get("_auth_user_id")
    return get_user_model().objects.get(pk=user_id).get_username() if user_id else None


def test_sign_up_creates_the_account_and_logs_in(client: Client) -> None:
    response = client.post(
        reverse("accounts:signup"),
        {"username": "dora", "password1": PASSWORD, "password2": PASSWORD},
    )

    assert response.status_code == 302
    assert response["Location"] == reverse("workspaces:list")
    assert get_user_model().objects.filter(username="dora").exists()
    assert signed_in_user(client) == "dora"


def test_sign_up_follows_a_safe_next_link(client: Client) -> None:
    response = client.post(
        reverse("accounts:signup") + "?next=/invite/abc/",
        {"username": "dora", "password1": PASSWORD, "password2": PASSWORD},
    )

    assert response["Location"] == "/invite/abc/"


def test_sign_up_ignores_a_next_link_to_another_site(client: Client) -> None:
    response = client.post(
        reverse("accounts:signup") + "?next=https://evil.example/",
        {"username": "dora", "password1": PASSWORD, "password2": PASSWORD},
    )

    assert response["Location"] == reverse("workspaces:list")


@pytest.mark.parametrize(
    ("form", "field", "reason"),
    [
        ({"username": "dora", "password1": PASSWORD, "password2": "typo"}, "password2", "didn"),
        ({"username": "", "password1": PASSWORD, "password2": PASSWORD}, "username", "required"),
        ({"username": "dora", "password1": "123", "password2": "123"}, "password2", "too short"),
        ({"username": "bad name!", "password1": PASSWORD, "password2": PASSWORD}, "username", ""),
    ],
)
def test_invalid_sign_up_answers_400_with_field_errors(
    client: Client, form: dict[str, str], field: str, reason: str
) -> None:
    response = client.post(reverse("accounts:signup"), form)

    assert response.status_code == 400
    errors = response.context["form"].errors
    assert field in errors
    assert reason in " ".join(errors[field])
    assert not get_user_model().objects.filter(username=form["username"]).exists()


def test_sign_up_with_a_taken_username_answers_400(client: Client, alice: User) -> None:
    response = client.post(
        reverse("accounts:signup"),
        {"username": "alice", "password1": PASSWORD, "password2": PASSWORD},
    )

    assert response.status_code == 400
    assert "username" in response.context["form"].errors
    assert get_user_model().objects.filter(username="alice").count() == 1


def test_signed_in_people_visiting_sign_up_go_to_their_workspaces(as_user, alice: User) -> None:
    response = as_user(alice).get(reverse("accounts:signup"))

    assert response.status_code == 302
    assert response["Location"] == reverse("workspaces:list")


def test_log_in_with_the_right_password(client: Client, alice: User) -> None:
    response = client.post(reverse("accounts:login"), {"username": "alice", "password": PASSWORD})

    assert response.status_code == 302
    assert signed_in_user(client) == "alice"


def test_log_in_with_a_wrong_password_answers_400(client: Client, alice: User) -> None:
    response = client.post(reverse("accounts:login"), {"username": "alice", "password": "nope"})

    assert response.status_code == 400
    assert response.context["form"].non_field_errors()
    assert signed_in_user(client) is None


def test_log_out_ends_the_session(as_user, alice: User) -> None:
    client = as_user(alice)

    response = client.post(reverse("accounts:logout"))

    assert response.status_code == 302
    assert response["Location"] == reverse("accounts:login")
    assert signed_in_user(client) is None


def test_log_out_needs_a_post(as_user, alice: User) -> None:
    client = as_user(alice)

    assert client.get(reverse("accounts:logout")).status_code == 405
    assert signed_in_user(client) == "alice"


def test_password_change_needs_login(client: Client) -> None:
    response = client.get(reverse("accounts:password_change"))

    assert response.status_code == 302
    assert reverse("accounts:login") in response["Location"]


def test_password_change_keeps_the_session_and_takes_the_new_password(as_user, alice: User) -> None:
    client = as_user(alice)

    response = client.post(
        reverse("accounts:password_change"),
        {"old_password": PASSWORD, "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
    )

    assert response.status_code == 302
    assert response["Location"] == reverse("accounts:password_done")
    assert signed_in_user(client) == "alice"
    alice.refresh_from_db()
    assert alice.check_password(NEW_PASSWORD)


def test_password_change_with_a_wrong_old_password_answers_400(as_user, alice: User) -> None:
    response = as_user(alice).post(
        reverse("accounts:password_change"),
        {"old_password": "wrong", "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
    )

    assert response.status_code == 400
    assert "old_password" in response.context["form"].errors
    alice.refresh_from_db()
    assert alice.check_password(PASSWORD)


def test_settings_page_needs_login(client: Client) -> None:
    response = client.get(reverse("accounts:settings"))

    assert response.status_code == 302
    assert reverse("accounts:login") in response["Location"]


def test_settings_page_shows_the_account(as_user, alice: User) -> None:
    response = as_user(alice).get(reverse("accounts:settings"))

    assert response.status_code == 200
    assert b"Signed in as <strong>alice</strong>" in response.content
    assert reverse("accounts:password_change").encode() in response.content


def test_pages_name_an_icon_that_is_served(client):
    """Browsers ask every site for an icon; without one each page logs a 404."""
    page = client.get("/accounts/login/").content.decode()
    match = re.search(r'<link rel="icon" href="([^"]+)" type="image/svg\+xml">', page)

    assert match, "no icon link"
    icon = client.get(match.group(1))
    assert icon.status_code == 200
    assert b"<svg" in b"".join(icon.streaming_content)


def test_settings_saves_a_time_zone_that_later_pages_and_logins_use(
    as_user, client: Client, alice: User
) -> None:
    from collab.accounts.models import Preferences

    signed_in = as_user(alice)
    form = {"form": "profile", "first_name": "Alice", "email": "", "time_zone": "Asia/Tokyo"}
    assert signed_in.post(reverse("accounts:settings"), form).status_code == 302

    assert Preferences.objects.get(user=alice).time_zone == "Asia/Tokyo"
    page = signed_in.get(reverse("accounts:settings")).content.decode()
    assert 'data-time-zone="Asia/Tokyo"' in page
    assert '<option value="Asia/Tokyo" selected>' in page
    # a later login brings it back in the session
    assert client.login(username="alice", password=PASSWORD)
    later = client.get(reverse("accounts:settings")).content.decode()
    assert 'data-time-zone="Asia/Tokyo"' in later


def test_settings_refuses_an_unknown_time_zone_with_400(as_user, alice: User) -> None:
    form = {"form": "profile", "first_name": "", "email": "", "time_zone": "Mars/Olympus"}
    response = as_user(alice).post(reverse("accounts:settings"), form)

    assert response.status_code == 400
    assert "Mars/Olympus is not one of the available choices" in response.content.decode()
    assert 'data-time-zone="' not in response.content.decode()
