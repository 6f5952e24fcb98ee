"""What people do in the browser, step by step, for browser tests to share."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable

from django.conf import settings
from playwright.sync_api import BrowserContext, Page, expect

from tests.processes import live_env

PASSWORD = "a long enough passphrase 42"


def sign_up(page: Page, username: str) -> None:
    page.goto("/accounts/signup/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password", exact=True).fill(PASSWORD)
    page.get_by_label("Password confirmation").fill(PASSWORD)
    page.get_by_role("button", name="Sign up").click()
    expect(page.get_by_role("heading", name="Your workspaces")).to_be_visible()


def create_workspace(page: Page, name: str) -> None:
    """From the workspace list; ends on the new workspace's task list."""
    page.get_by_label("Name").fill(name)
    page.get_by_role("button", name="Create workspace").click()
    expect(page.get_by_role("heading", name=name)).to_be_visible()


def create_invitation_link(page: Page) -> str:
    """From a workspace page, as its owner: the link of a new editor invitation."""
    page.get_by_role("link", name="Members").click()
    page.get_by_role("button", name="Create invitation link").click()
    return page.get_by_test_id("invite-url").input_value()


def join(page: Page, link: str, workspace: str) -> None:
    page.goto(link)
    page.get_by_role("button", name="Join workspace").click()
    expect(page.get_by_role("heading", name=workspace)).to_be_visible()


def owner_and_editor(new_context: Callable[[], BrowserContext]) -> tuple[Page, Page]:
    """alice signs up and creates the workspace "Acme"; bob signs up and joins it through her
    invitation link. Each in a browser context of their own; alice ends on the Members page,
    bob on the workspace's task list."""
    alice = new_context().new_page()
    bob = new_context().new_page()
    sign_up(alice, "alice")
    create_workspace(alice, "Acme")
    link = create_invitation_link(alice)
    sign_up(bob, "bob")
    join(bob, link, "Acme")
    return alice, bob


def create_task(page: Page, title: str) -> str:
    """From a workspace page: creates the task and returns its page's URL."""
    page.get_by_role("link", name="Tasks").click()
    page.get_by_label("Title").fill(title)
    page.get_by_role("button", name="Create task").click()
    expect(page.get_by_role("heading", name=title)).to_be_visible()
    return page.url


def task_id_of(url: str) -> int:
    match = re.search(r"/t/(\d+)/", url)
    assert match, url
    return int(match.group(1))


def expect_chat_live(page: Page, timeout: float | None = None) -> None:
    expect(page.locator("#chat-connection")).to_have_text("live", timeout=timeout)


def send_chat(page: Page, text: str) -> None:
    page.get_by_placeholder(re.compile("Write a message")).fill(text)
    page.get_by_role("button", name="Send").click()


def chat_messages(page: Page):  # type: ignore[no-untyped-def]
    return page.locator("#messages > li.message")


def admin_shell(code: str) -> None:
    """Admin-side set-up (or a worker's step) in another process, with ``manage.py shell`` on
    the test database: browser tests keep the ORM out of their own process (Playwright's sync
    API and Django's async-safety checks do not mix)."""
    subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", code],
        cwd=settings.BASE_DIR,
        env=live_env(),
        check=True,
        capture_output=True,
        timeout=120,
    )


def post_from_outside(task_id: int, username: str, body: str) -> None:
    """Post a chat message from another process (like a worker would), not from a browser."""
    admin_shell(
        "from collab.tasks.models import Task\n"
        "from collab.tasks.services import post_message\n"
        "from collab.workspaces.models import Membership\n"
        f"task = Task.objects.get(pk={task_id})\n"
        "member = Membership.objects.select_related('workspace', 'user').get(\n"
        f"    workspace=task.workspace, user__username={username!r})\n"
        f"post_message(membership=member, task=task, body={body!r})\n"
    )


def fake_model_profile(name: str, behaviour: str) -> None:
    """An admin configures a fake model profile (``agents.llm``'s fake behaviours)."""
    admin_shell(
        "from agents.models import ModelProfile\n"
        f"ModelProfile.objects.create(name={name!r}, provider='fake', model={behaviour!r})\n"
    )


def create_agent(page: Page, name: str, profile: str, *, policy: str | None = None) -> None:
    """On the workspace's agents page: an agent answering with the fake model profile
    ``profile`` (and the clarification policy ``policy``, a value of its select)."""
    page.get_by_label("Name:", exact=True).fill(name)
    page.get_by_label("Model profile").select_option(
        label=f"{profile} (Fake model (tests and benchmarks))"
    )
    if policy is not None:
        page.get_by_label("Clarification policy").select_option(value=policy)
    page.get_by_role("button", name="Create agent").click()
    expect(page.get_by_role("cell", name=name, exact=False)).to_be_visible()


def add_agent_to_task(page: Page, task_url: str, name: str) -> None:
    """From the task page; returns once the agent's card is on it (added, live)."""
    page.goto(task_url)
    page.get_by_label("Agent to add").select_option(label=name)
    page.get_by_role("button", name="Add to task").click()
    expect(page.locator(f"#agent-cards [data-agent={name}]")).to_be_visible()
