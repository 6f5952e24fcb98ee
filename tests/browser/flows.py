"""What people do in the browser, step by step, for browser tests to share."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from django.conf import settings
from playwright.sync_api import BrowserContext, ConsoleMessage, Page, Request, expect

from tests.processes import live_env

PASSWORD = "a long enough passphrase 42"
WAIT_MS = 15_000  # as tests/browser/conftest.py


def poll_until(page: Page, expression: str, timeout: float | None = None) -> None:
    """Wait until the JS ``expression`` is truthy in ``page``, evaluating it from the test
    (``page.wait_for_function`` polls with eval inside the page, which the site's
    Content-Security-Policy refuses)."""
    deadline = time.monotonic() + (timeout if timeout is not None else WAIT_MS) / 1000
    while not page.evaluate(expression):
        if time.monotonic() > deadline:
            raise AssertionError(f"still false after {timeout or WAIT_MS} ms: {expression}")
        page.wait_for_timeout(100)


def sign_up(page: Page, username: str) -> None:
    page.goto("/accounts/signup/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password", exact=True).fill(PASSWORD)
    page.get_by_label("Password confirmation").fill(PASSWORD)
    page.get_by_role("button", name="Sign up").click()
    expect(page.get_by_role("heading", name="Your workspaces")).to_be_visible()


def create_workspace(page: Page, name: str) -> None:
    """From the workspace list; ends on the new workspace's task list."""
    page.get_by_label("Name", exact=True).fill(name)
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
    ``profile`` (and the clarification policy ``policy``, the value of its radio button)."""
    page.get_by_label("Name", exact=True).fill(name)
    page.get_by_label("Model", exact=True).select_option(label=f"{profile} (test model)")
    if policy is not None:
        page.locator(f"input[name=policy_name][value={policy}]").check()
    page.get_by_role("button", name="Create agent").click()
    # Back on the task it came from (a task page's "Manage agents"), else on the agents page.
    expect(page.locator("ul.flash")).to_contain_text(f"{name} was created")


def add_agent_to_task(page: Page, task_url: str, name: str) -> None:
    """From the task page; returns once the agent's card is on it (added, live)."""
    page.goto(task_url)
    page.get_by_label("Agent to add").select_option(label=name)
    page.get_by_role("button", name="Add to task").click()
    expect(page.locator(f"#agent-cards [data-agent={name}]")).to_be_visible()


WIDTHS = (1400, 390)

# Elements wider than their container (or the page scrolling sideways), ignoring what sits in a
# scroll container of its own (CodeMirror's scroller, a table that scrolls inside its card) and
# absolutely placed decorations (remote cursors' name tags).
OVERFLOW_JS = """
() => {
  const problems = [];
  const root = document.documentElement;
  if (root.scrollWidth > root.clientWidth + 1) {
    problems.push(`the page scrolls sideways: ${root.scrollWidth} > ${root.clientWidth}`);
  }
  const clipped = (el) => {
    for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
      const o = getComputedStyle(a).overflowX;
      if (o !== 'visible') return true;
    }
    return false;
  };
  const describe = (el) => {
    const classes = typeof el.className === 'string' ? el.className.trim() : '';
    return el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') +
      (classes ? '.' + classes.split(/\\s+/).join('.') : '');
  };
  for (const el of document.body.querySelectorAll('*')) {
    const style = getComputedStyle(el);
    if (style.display === 'none') continue;
    if (style.position === 'absolute' || style.position === 'fixed') continue;
    const parent = el.parentElement;
    if (!parent || clipped(el)) continue;
    const box = el.getBoundingClientRect();
    if (!box.width) continue;
    const outer = parent.getBoundingClientRect();
    if (box.right > outer.right + 1) {
      const where = `${Math.round(box.right)} > ${Math.round(outer.right)}`;
      problems.push(`${describe(el)} sticks out of ${describe(parent)} (${where})`);
      if (problems.length > 12) break;
    }
  }
  return problems;
}
"""


class Watch:
    """Console errors, page errors and failed requests of one person's pages."""

    def __init__(self, who: str) -> None:
        self.who = who
        self.problems: list[str] = []
        self.expected: list[str] = []  # substrings of problems a step declared

    def attach(self, page: Page) -> Page:
        page.on("console", self._console)
        page.on("pageerror", lambda error: self._add(f"page error: {error}"))
        page.on("requestfailed", self._failed)
        page.on("response", lambda r: r.status >= 400 and self._add(f"HTTP {r.status} {r.url}"))
        return page

    def _console(self, message: ConsoleMessage) -> None:
        if message.type == "error":
            self._add(f"console error: {message.text}")

    def _failed(self, request: Request) -> None:
        # ERR_ABORTED: the test navigated away while it loaded (a favicon, a poll), not a fault
        if request.failure and "ERR_ABORTED" in request.failure:
            return
        self._add(f"failed request: {request.method} {request.url} ({request.failure})")

    def _add(self, problem: str) -> None:
        if any(part in problem for part in self.expected):
            return
        self.problems.append(problem)

    @contextmanager
    def allowing(self, *parts: str) -> Iterator[None]:
        """A step whose point is a refusal: its answer is not a problem."""
        self.expected.extend(parts)
        try:
            yield
        finally:
            del self.expected[-len(parts) :]


# Words broken across two lines inside a table cell ("Assista / nt", "0.000 / 000"): each run of
# Latin letters and digits (with the dots, commas, colons and apostrophes inside a number or a
# word) must sit on one line. A line may still break at a space, a hyphen or a slash.
BROKEN_WORDS_JS = """
() => {
  const problems = [];
  const word = /[A-Za-z0-9\u00c0-\u024f]+(?:[.,:'\u2019_][A-Za-z0-9\u00c0-\u024f]+)*/g;
  for (const cell of document.querySelectorAll('td, th')) {
    if (!cell.getClientRects().length) continue;
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const match of node.data.matchAll(word)) {
        if (match[0].length < 2) continue;
        const range = document.createRange();
        range.setStart(node, match.index);
        range.setEnd(node, match.index + match[0].length);
        const tops = new Set([...range.getClientRects()].filter((r) => r.width > 0)
          .map((r) => Math.round(r.top)));
        if (tops.size > 1) {
          const where = cell.closest('table');
          const id = where && where.id ? '#' + where.id : 'a table';
          problems.push(`"${match[0]}" is broken over ${tops.size} lines in ${id}`);
          if (problems.length > 12) return problems;
        }
      }
    }
  }
  return problems;
}
"""


def no_overflow(page: Page, name: str) -> list[str]:
    """What sticks out at each of WIDTHS: the page scrolling sideways, an element wider than
    its container, a word broken inside a table cell."""
    found = []
    original = page.viewport_size
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.wait_for_timeout(150)
        found += [f"{name} at {width} px: {problem}" for problem in page.evaluate(OVERFLOW_JS)]
        found += [f"{name} at {width} px: {problem}" for problem in page.evaluate(BROKEN_WORDS_JS)]
    if original:
        page.set_viewport_size(original)
    return found


def task_with_agents(alice: Page, bob: Page, names: tuple[str, ...]) -> str:
    """From the front page, as Acme's owner: a new task with the workspace's default agent
    and default agents called ``names`` on it, open and live on both pages; its URL."""
    alice.goto("/")
    alice.get_by_role("link", name="Acme").click()
    task_url = create_task(alice, "Plan the offsite")
    admin_shell(
        "from agents.defaults import create_default_agent\n"
        "from collab.tasks.models import Task\n"
        f"task = Task.objects.get(pk={task_id_of(task_url)})\n"
        f"for name in {names!r}:\n"
        "    create_default_agent(workspace=task.workspace, owner=None, name=name)\n"
    )
    bob.goto(task_url)
    alice.goto(task_url)
    expect_chat_live(alice)
    expect_chat_live(bob)
    return task_url
