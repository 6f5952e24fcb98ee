"""The task replay in Chromium: the scrubber shows the document as it stood at each event."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.test import Client
from playwright.sync_api import BrowserContext, Page, expect

from collab.tasks.models import DocumentVersion
from collab.tasks.services import post_message
from tests import factories

pytestmark = pytest.mark.browser


@pytest.fixture
def replay(transactional_db: None) -> tuple[int, str]:
    """alice's task: a message, the first draft, another message, the second draft. Built
    before Chromium starts (browser tests keep ORM calls out of the main thread later)."""
    alice = factories.make_user("alice")
    workspace = factories.make_workspace(alice)
    task = factories.make_task(workspace)
    owner = factories.membership_of(workspace, alice)
    post_message(membership=owner, task=task, body="Let us plan")
    DocumentVersion.objects.create(document=task.document, text="Draft one", authors=["alice"])
    post_message(membership=owner, task=task, body="Add day two")
    DocumentVersion.objects.create(
        document=task.document, text="Draft one\nDay two", authors=["alice"]
    )
    client = Client()
    client.force_login(alice)
    return task.pk, client.cookies["sessionid"].value


def open_replay(new_context: Callable[[], BrowserContext], server_url: str, replay) -> Page:
    task_id, session = replay
    context = new_context()
    context.add_cookies([{"name": "sessionid", "value": session, "url": server_url}])
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(f"/review/tasks/{task_id}/")
    page.errors = errors  # type: ignore[attr-defined]
    return page


def test_the_scrubber_shows_the_document_at_any_point(replay, new_context, server_url):
    page = open_replay(new_context, server_url, replay)
    document = page.locator("#replay-document")
    scrubber = page.locator("#scrubber")

    # at first: the latest point, the latest draft
    expect(document).to_have_text("Draft one\nDay two")

    # the first event (a message, before any draft): an empty document
    scrubber.fill("0")
    expect(document).to_have_text("")
    expect(page.locator("#timeline .event.future")).to_have_count(3)

    # the second message: the first draft
    scrubber.fill("2")
    expect(document).to_have_text("Draft one")

    # clicking an event moves the scrubber there
    page.locator("#timeline .event").nth(3).click()
    expect(scrubber).to_have_value("3")
    expect(document).to_have_text("Draft one\nDay two")
    assert page.errors == []  # type: ignore[attr-defined]
