"""An owner writes the workspace instructions every agent gets on the settings page; another
member reads them there and cannot change them; an instruction too long is refused with a
reason and the text typed is kept."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from playwright.sync_api import BrowserContext, expect

from collab.workspaces.forms import INSTRUCTIONS_MAX_CHARS
from tests.browser.flows import owner_and_editor

pytestmark = pytest.mark.browser


def test_owner_sets_the_workspace_instructions_and_members_read_them(
    new_context: Callable[[], BrowserContext],
) -> None:
    alice, bob = owner_and_editor(new_context)

    # alice, the owner, saves instructions; they are there after a reload
    alice.get_by_role("main").get_by_role("link", name="Settings").click()
    field = alice.get_by_label("Workspace instructions")
    field.fill("Write in British English. <b>Never</b> promise dates.")
    alice.get_by_role("button", name="Save").click()
    expect(alice.get_by_text("Workspace instructions saved.")).to_be_visible()
    alice.reload()
    expect(alice.get_by_label("Workspace instructions")).to_have_value(
        "Write in British English. <b>Never</b> promise dates."
    )

    # too long: refused with a reason, and what alice typed is still in the field
    too_long = "x" * (INSTRUCTIONS_MAX_CHARS + 1)
    alice.get_by_label("Workspace instructions").evaluate(
        "(field, text) => { field.removeAttribute('maxlength'); field.value = text; }", too_long
    )
    alice.get_by_role("button", name="Save").click()
    expect(alice.get_by_text("Ensure this value has at most")).to_be_visible()
    expect(alice.get_by_label("Workspace instructions")).to_have_value(too_long)

    # bob, a member, reads them (as text, not markup) and gets no form
    bob.get_by_role("main").get_by_role("link", name="Settings").click()
    shown = bob.get_by_test_id("workspace-instructions")
    expect(shown).to_have_text("Write in British English. <b>Never</b> promise dates.")
    expect(bob.get_by_role("button", name="Save")).to_have_count(0)
