"""The settings page in Chromium (#19.16): display name, e-mail, the time zone times are shown
in, what notifications there are, and the way to Memory; it fits a phone and a wide screen, and
the models page's agents table reads whole words at 390 px."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from playwright.sync_api import BrowserContext, expect

from tests.browser.flows import (
    PASSWORD,
    Watch,
    admin_shell,
    create_task,
    create_workspace,
    expect_chat_live,
    fake_model_profile,
    no_overflow,
    send_chat,
    sign_up,
)

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]


def test_a_person_sets_name_email_and_time_zone_and_times_follow(
    new_context: Callable[[], BrowserContext],
) -> None:
    watch = Watch("alice")
    alice = watch.attach(new_context().new_page())
    sign_up(alice, "alice")
    alice.get_by_role("link", name="Settings").click()
    expect(alice.get_by_role("heading", name="Settings")).to_be_visible()
    alice.get_by_label("Display name").fill("Alice Ávila")
    alice.get_by_label("E-mail address").fill("alice@example.org")
    alice.get_by_label("Time zone").select_option(value="Asia/Tokyo")
    alice.get_by_role("button", name="Save profile").click()

    expect(alice.locator("ul.flash")).to_contain_text("Profile saved.")
    expect(alice.get_by_label("Display name")).to_have_value("Alice Ávila")
    expect(alice.get_by_label("E-mail address")).to_have_value("alice@example.org")
    expect(alice.get_by_label("Time zone")).to_have_value("Asia/Tokyo")
    expect(alice.get_by_test_id("time-zone-note")).to_contain_text("Asia/Tokyo")
    expect(alice.locator("#shortcuts")).to_contain_text("Notifications")
    problems = no_overflow(alice, "the settings page")
    assert problems == [], "\n".join(problems)

    # the shortcut to what agents remember
    alice.locator("#shortcuts").get_by_role("link", name="Memory").click()
    expect(alice.get_by_role("heading", name="What agents remember about me")).to_be_visible()

    # chat times in Tokyo time, whatever the browser's zone; her name on the document
    alice.get_by_role("link", name="Workspaces").click()
    create_workspace(alice, "Acme")
    create_task(alice, "Plan the offsite")
    expect_chat_live(alice)
    send_chat(alice, "What time is it?")
    time = alice.locator("#messages li.message time").last
    expect(time).to_have_attribute("data-local", "1")
    assert "GMT+9" in str(time.get_attribute("title")), time.get_attribute("title")
    expect(alice.locator(".presence-item.is-me")).to_contain_text("Alice Ávila")
    assert watch.problems == [], "\n".join(watch.problems)


def test_the_models_page_agents_table_fits_a_phone_without_breaking_words(
    new_context: Callable[[], BrowserContext],
) -> None:
    admin_shell(
        "from django.contrib.auth.models import User\n"
        f"User.objects.create_superuser('root', 'root@example.org', {PASSWORD!r})\n"
    )
    fake_model_profile("Model echo", "echo")
    watch = Watch("root")
    root = watch.attach(new_context().new_page())
    root.goto("/accounts/login/")
    root.get_by_label("Username").fill("root")
    root.get_by_label("Password").fill(PASSWORD)
    root.get_by_role("button", name="Log in").click()
    root.goto("/models/")
    problems = no_overflow(root, "the models page")
    assert problems == [], "\n".join(problems)
    root.set_viewport_size({"width": 390, "height": 900})
    # each header is one line: a word broken in two makes its cell taller than a line
    for header in root.locator("[data-testid=models] thead th").all():
        text = header.inner_text().strip()
        if not text:
            continue
        lines = header.evaluate(
            "th => { const r = document.createRange(); r.selectNodeContents(th);"
            " return new Set([...r.getClientRects()].map(b => Math.round(b.top))).size; }"
        )
        assert lines == 1, f"the header {text!r} wraps over {lines} lines at 390 px"
    assert watch.problems == [], "\n".join(watch.problems)
