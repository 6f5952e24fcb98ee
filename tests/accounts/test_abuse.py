"""Guessing is throttled (logins, API tokens, sign-ups), sign-up does not say which usernames
exist, a forgotten password can be reset by e-mail, and every page carries a
Content-Security-Policy (plus HSTS once cookies are secure)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from axes.models import AccessAttempt
from django.conf import settings
from django.contrib.auth.models import User
from django.core import mail
from django.test import Client, RequestFactory, override_settings
from django.urls import reverse

from collab.accounts.services import create_api_token
from collab.accounts.throttle import client_username
from tests.factories import PASSWORD

pytestmark = pytest.mark.django_db

LIMIT = settings.AXES_FAILURE_LIMIT


def log_in(client: Client, username: str, password: str) -> int:
    response = client.post(reverse("accounts:login"), {"username": username, "password": password})
    return response.status_code


def test_after_too_many_wrong_passwords_even_the_right_one_is_refused_for_a_while(
    client: Client, alice: User
) -> None:
    for _ in range(LIMIT - 1):
        assert log_in(client, "alice", "wrong guess") == 400
    assert log_in(client, "alice", "wrong guess") == 429  # the last allowed failure locks

    assert log_in(client, "alice", PASSWORD) == 429
    assert "_auth_user_id" not in client.session


def test_a_locked_account_is_refused_from_another_address_too(alice: User) -> None:
    attacker = Client(REMOTE_ADDR="203.0.113.7")
    for _ in range(LIMIT):
        log_in(attacker, "alice", "wrong guess")

    elsewhere = Client(REMOTE_ADDR="198.51.100.9")
    assert log_in(elsewhere, "alice", PASSWORD) == 429


def test_one_address_guessing_many_accounts_is_locked_out(alice: User, bob: User) -> None:
    attacker = Client(REMOTE_ADDR="203.0.113.7")
    for n in range(LIMIT):
        log_in(attacker, f"user{n}", "wrong guess")

    assert log_in(attacker, "bob", PASSWORD) == 429
    assert log_in(Client(REMOTE_ADDR="198.51.100.9"), "bob", PASSWORD) == 302


def test_a_forwarded_for_header_does_not_escape_the_lockout(alice: User) -> None:
    for n in range(LIMIT):
        Client(REMOTE_ADDR="203.0.113.7", HTTP_X_FORWARDED_FOR=f"10.0.0.{n}").post(
            reverse("accounts:login"), {"username": f"user{n}", "password": "x"}
        )

    fresh = Client(REMOTE_ADDR="203.0.113.7", HTTP_X_FORWARDED_FOR="10.9.9.9")
    assert log_in(fresh, "alice", PASSWORD) == 429


def test_a_successful_login_before_the_limit_resets_the_count(client: Client, alice: User) -> None:
    for _ in range(LIMIT - 1):
        log_in(client, "alice", "wrong guess")
    assert log_in(client, "alice", PASSWORD) == 302
    client.logout()

    for _ in range(LIMIT - 1):
        log_in(client, "alice", "wrong guess")
    assert log_in(client, "alice", PASSWORD) == 302


def test_guessing_api_tokens_is_refused_after_the_limit_even_with_a_real_token(
    alice: User,
) -> None:
    real = create_api_token(user=alice, name="script").token
    for n in range(LIMIT - 1):
        guess = Client(headers={"Authorization": f"Bearer collab_guess{n}"})
        assert guess.get("/api/workspaces").status_code == 401
    last = Client(headers={"Authorization": "Bearer collab_last_guess"})
    assert last.get("/api/workspaces").status_code == 429

    answer = Client(headers={"Authorization": f"Bearer {real}"}).get("/api/workspaces")
    assert answer.status_code == 429
    assert "Too many failed attempts" in answer.json()["detail"]
    # another address is not affected
    other = Client(headers={"Authorization": f"Bearer {real}"}, REMOTE_ADDR="198.51.100.9")
    assert other.get("/api/workspaces").status_code == 200


def test_sign_up_answers_the_same_for_a_taken_username_in_any_case(alice: User) -> None:
    client = Client()
    taken = client.post(
        reverse("accounts:signup"),
        {"username": "ALICE", "password1": PASSWORD, "password2": PASSWORD},
    )

    assert taken.status_code == 400
    assert "This username is not available" in taken.content.decode()
    assert "already exists" not in taken.content.decode()


def test_probing_usernames_at_sign_up_is_throttled(alice: User) -> None:
    client = Client(REMOTE_ADDR="203.0.113.7")
    for _ in range(LIMIT):
        client.post(
            reverse("accounts:signup"),
            {"username": "alice", "password1": PASSWORD, "password2": PASSWORD},
        )

    fresh = client.post(
        reverse("accounts:signup"),
        {"username": "newcomer", "password1": PASSWORD, "password2": PASSWORD},
    )
    assert fresh.status_code == 429
    assert not User.objects.filter(username="newcomer").exists()


def test_a_forgotten_password_is_reset_through_the_mailed_link(client: Client) -> None:
    User.objects.create_user("dora", email="dora@example.org", password=PASSWORD)
    assert "console" in settings.EMAIL_BACKEND or mail.outbox is not None  # console by default

    sent = client.post(reverse("accounts:password_reset"), {"email": "dora@example.org"})
    assert sent.status_code == 302
    assert len(mail.outbox) == 1
    link = re.search(r"https?://[^/]+(/accounts/password/reset/\S+)", mail.outbox[0].body)
    assert link, mail.outbox[0].body

    form = client.get(link.group(1), follow=True)
    assert b"Choose a new password" in form.content
    done = client.post(
        form.redirect_chain[-1][0],
        {"new_password1": "a brand new passphrase 7", "new_password2": "a brand new passphrase 7"},
    )
    assert done.status_code == 302
    assert Client().login(username="dora", password="a brand new passphrase 7")


def test_a_reset_request_for_an_unknown_address_looks_the_same(client: Client) -> None:
    sent = client.post(reverse("accounts:password_reset"), {"email": "nobody@example.org"})

    assert sent.status_code == 302
    assert sent["Location"] == reverse("accounts:password_reset_done")
    assert mail.outbox == []


def test_the_email_backend_is_the_console_unless_smtp_is_configured() -> None:
    from collab import settings as collab_settings

    assert collab_settings.EMAIL_BACKEND == "django.core.mail.backends.console.EmailBackend"


def test_pages_carry_a_content_security_policy_allowing_only_own_scripts(client: Client) -> None:
    policy = client.get(reverse("accounts:login"))["Content-Security-Policy"]

    directives = dict(part.strip().split(" ", 1) for part in policy.split(";") if part.strip())
    assert directives["script-src"] == "'self'"
    assert directives["img-src"] == "'self' data:"
    assert directives["frame-ancestors"] == "'none'"


def test_hsts_is_sent_once_cookies_are_secure(client: Client) -> None:
    from collab import settings as collab_settings

    assert collab_settings.SESSION_COOKIE_SECURE is False
    assert collab_settings.SECURE_HSTS_SECONDS == 0
    assert "Strict-Transport-Security" not in client.get(reverse("accounts:login"))
    with override_settings(SECURE_HSTS_SECONDS=31_536_000):
        secure = Client().get(reverse("accounts:login"), secure=True)
    assert secure["Strict-Transport-Security"].startswith("max-age=31536000")


def test_a_remote_image_in_markdown_is_a_link_that_browsers_do_not_fetch() -> None:
    from collab.lib.markdown import render_markdown

    html = render_markdown("Look: ![the venue](https://tracker.example/pixel.png?who=me) ok")

    assert "<img" not in html
    assert 'href="https://tracker.example/pixel.png?who=me"' in html
    assert "[image: the venue]" in html


def test_an_image_of_this_site_is_still_shown() -> None:
    from collab.lib.markdown import render_markdown

    assert '<img src="/static/collab/favicon.svg" alt="logo"' in render_markdown(
        "![logo](/static/collab/favicon.svg)"
    )


@override_settings(MARKDOWN_REMOTE_IMAGES=True)
def test_an_administrator_may_allow_remote_images() -> None:
    from collab.lib.markdown import render_markdown

    assert '<img src="https://example.org/a.png"' in render_markdown(
        "![a](https://example.org/a.png)"
    )


def test_a_person_sets_a_display_name_and_email_on_the_settings_page(
    as_user: Any, alice: User
) -> None:
    client = as_user(alice)
    page = client.get(reverse("accounts:settings")).content.decode()
    assert "Display name" in page
    assert 'href="/memory/"' in page

    response = client.post(
        reverse("accounts:settings"),
        {"form": "profile", "first_name": "Alice Ávila", "email": "alice@example.org"},
    )

    assert response.status_code == 302
    alice.refresh_from_db()
    assert (alice.first_name, alice.email) == ("Alice Ávila", "alice@example.org")
    bad = client.post(reverse("accounts:settings"), {"form": "profile", "email": "not an address"})
    assert bad.status_code == 400


@override_settings(TRUSTED_PROXIES=["10.0.0.0/8"])
def test_behind_the_trusted_proxy_the_address_it_appended_counts(alice: User) -> None:
    for n in range(LIMIT):
        via_proxy = Client(REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR=f"1.2.3.{n}, 203.0.113.7")
        log_in(via_proxy, f"user{n}", "wrong guess")

    guesser = Client(REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR="203.0.113.7")
    assert log_in(guesser, "alice", PASSWORD) == 429
    someone_else = Client(REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR="198.51.100.9")
    assert log_in(someone_else, "alice", PASSWORD) == 302


def test_a_huge_username_at_login_gets_the_forms_error_not_a_server_error(alice: User) -> None:
    # django-axes' attempt table holds 255 characters; PostgreSQL refused the longer name with a
    # 500, SQLite stored it: either way the form must say what is wrong before anything is kept.
    client = Client(REMOTE_ADDR="203.0.113.7")
    response = client.post(
        reverse("accounts:login"), {"username": "a" * 100_000, "password": "wrong guess"}
    )

    assert response.status_code == 400
    assert "at most 150 characters" in response.content.decode()
    assert not AccessAttempt.objects.filter(username__startswith="aaaa").exists()


def test_a_huge_password_at_login_gets_the_forms_error(alice: User) -> None:
    response = Client().post(
        reverse("accounts:login"), {"username": "alice", "password": "p" * 100_000}
    )

    assert response.status_code == 400
    assert "at most 4096 characters" in response.content.decode()


def test_huge_fields_at_sign_up_get_the_forms_errors(alice: User) -> None:
    response = Client().post(
        reverse("accounts:signup"),
        {
            "username": "a" * 100_000,
            "email": f"{'e' * 250}@example.org",  # valid to the e-mail check, over the column
            "password1": "p" * 100_000,
            "password2": "p" * 100_000,
        },
    )

    errors = response.context["form"].errors
    assert response.status_code == 400
    assert set(errors) >= {"username", "email", "password1"}
    assert not User.objects.filter(username__startswith="aaaa").exists()


def test_the_throttle_never_keeps_more_of_a_username_than_its_column_holds(alice: User) -> None:
    request = RequestFactory().post("/accounts/login/", {"username": "b" * 100_000})

    assert client_username(request, {"username": "a" * 100_000}) == "a" * 255
    assert client_username(request, None) == "b" * 255
    assert client_username(request, {"username": None, "collab_per_address": "signup"}) is None
