"""API tokens on the settings page in Chromium (issue 29): a person makes a token and sees its
secret once, the token works for the API, the list shows only their own tokens, revoking one
stops it at once, and another person can neither see nor revoke it (404). No console error and
no failed request on any page."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from playwright.sync_api import APIRequestContext, BrowserContext, Page, expect

from tests.browser.flows import Watch, create_workspace, sign_up

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]


def _make_token(page: Page, name: str) -> str:
    page.goto("/accounts/settings/")
    tokens = page.locator("#api-tokens")
    tokens.get_by_label("Name").fill(name)
    tokens.get_by_role("button", name="Create token").click()
    secret = page.get_by_test_id("new-token").inner_text().strip()
    assert secret.startswith("collab_")
    return secret


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _api(context: BrowserContext) -> APIRequestContext:
    return context.request


def test_a_person_makes_uses_and_revokes_their_own_token_and_nobody_else_can(
    new_context: Callable[[], BrowserContext],
) -> None:
    watch = Watch("alice")
    alice = watch.attach(new_context().new_page())
    sign_up(alice, "alice")
    create_workspace(alice, "Acme")

    # made on the page: the secret is shown once, with the way to use it
    secret = _make_token(alice, "laptop script")
    expect(alice.locator("#api-tokens [role=status]")).to_contain_text("Copy it now")
    api = _api(alice.context)
    workspaces = api.get("/api/workspaces", headers=_bearer(secret))
    assert workspaces.status == 200
    assert [w["name"] for w in workspaces.json()] == ["Acme"]

    # on the next visit only its name and first characters are there
    alice.goto("/accounts/settings/")
    row = alice.locator("#api-tokens tbody tr", has_text="laptop script")
    expect(row).to_contain_text(secret[:13])
    expect(alice.get_by_test_id("new-token")).to_have_count(0)
    assert secret not in alice.content()
    expect(row).not_to_contain_text("never")  # the call above was its first use

    # bob, an outsider to alice, sees none of her tokens and cannot revoke hers
    bob_watch = Watch("bob")
    bob = bob_watch.attach(new_context().new_page())
    sign_up(bob, "bob")
    bob.goto("/accounts/settings/")
    expect(bob.locator("#api-tokens tbody")).to_contain_text("No tokens yet.")
    expect(bob.locator("#api-tokens tbody")).not_to_contain_text("laptop script")
    bob_secret = _make_token(bob, "bob's robot")
    mine = api.get("/api/tokens", headers=_bearer(secret)).json()["tokens"]
    assert [t["name"] for t in mine] == ["laptop script"]
    refused = _api(bob.context).post(
        f"/api/tokens/{mine[0]['id']}/revoke", headers=_bearer(bob_secret)
    )
    assert refused.status == 404
    assert api.get("/api/workspaces", headers=_bearer(secret)).status == 200
    theirs = _api(bob.context).get("/api/tokens", headers=_bearer(bob_secret)).json()
    assert [t["name"] for t in theirs["tokens"]] == ["bob's robot"]

    # revoked on the page: it stops working at once, and the row says so
    alice.goto("/accounts/settings/")
    row = alice.locator("#api-tokens tbody tr", has_text="laptop script")
    row.get_by_role("button", name="Revoke").click()
    expect(alice.locator("ul.flash")).to_contain_text("Token revoked.")
    revoked = alice.locator("#api-tokens tbody tr", has_text="laptop script")
    expect(revoked).to_contain_text("revoked")
    expect(revoked.get_by_role("button", name="Revoke")).to_have_count(0)
    assert api.get("/api/workspaces", headers=_bearer(secret)).status == 401
    assert _api(bob.context).get("/api/tokens", headers=_bearer(bob_secret)).status == 200

    assert watch.problems == [], "\n".join(watch.problems)
    assert bob_watch.problems == [], "\n".join(bob_watch.problems)
