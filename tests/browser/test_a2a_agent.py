"""An A2A agent in the browser (issue 29, docs/adr/0025): alice makes one on the agents page by
giving its agent card's URL, and the agent, built with the official ``a2a-sdk`` server
(tests/outside/a2a_agent.py, a process of its own), does its part through the A2A protocol
alone. Its streamed words appear while its task works; it replies and asks a question alice
answers in the browser, which continues the same A2A task; its artifact is a suggestion she
accepts (the document changes, on a second page too). When she presses Stop, while it works
and while its question waits, its A2A task ends canceled on the agent's side (asked with the
protocol's ``ListTasks``). Console errors and failed requests fail the test."""

from __future__ import annotations

import json
import time
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from playwright.sync_api import BrowserContext, Page, expect

from tests.agents.openai_server import free_port
from tests.browser.flows import (
    Watch,
    add_agent_to_task,
    chat_messages,
    create_task,
    create_workspace,
    expect_chat_live,
    send_chat,
    sign_up,
)
from tests.outside.a2a_agent import CARD_PATH, serving

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

WAIT_SECONDS = 30.0


class Agent:
    """The A2A agent's side, seen through its own protocol (and its test gate)."""

    def __init__(self, card_url: str) -> None:
        self.card_url = card_url
        self.base = card_url.removesuffix(CARD_PATH)

    def _post(self, path: str, body: dict[str, Any] | None) -> Any:
        request = urllib.request.Request(  # noqa: S310 - the test agent on this machine
            f"{self.base}{path}",
            data=json.dumps(body or {}).encode(),
            method="POST",
            headers={"Content-Type": "application/json", "A2A-Version": "1.0"},
        )
        with urllib.request.urlopen(request, timeout=10) as answer:  # noqa: S310
            raw = answer.read()
        return json.loads(raw) if raw else None

    def release(self) -> None:
        """Let the scripted task go on past its stream."""
        self._post("/test/release", None)

    def tasks(self) -> dict[str, str]:
        """Each task's first request and its state ("completed", "canceled", …)."""
        answer = self._post("/", {"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}})
        found = {}
        for task in answer["result"]["tasks"]:
            first = task["history"][0]["parts"][0]["text"] if task.get("history") else ""
            state = task["status"]["state"].removeprefix("TASK_STATE_").lower()
            found[first] = state.replace("_", "-")
        return found

    def state_of(self, request: str, wanted: str) -> str:
        """The state of the task started by ``request``, once it is ``wanted`` (or the time
        to wait is up)."""
        deadline = time.monotonic() + WAIT_SECONDS
        while True:
            state = next((s for first, s in self.tasks().items() if request in first), "")
            if state == wanted or time.monotonic() > deadline:
                return state
            time.sleep(0.2)


@pytest.fixture
def a2a_agent() -> Iterator[Agent]:
    with serving(free_port()) as card_url:
        yield Agent(card_url)


def _stream_of(page: Page, name: str):  # type: ignore[no-untyped-def]
    return page.locator(f"#agent-cards [data-agent={name}]").get_by_test_id("agent-stream")


def test_an_a2a_agent_streams_asks_suggests_and_obeys_stop_in_the_browser(
    new_context: Callable[[], BrowserContext], worker: None, a2a_agent: Agent
) -> None:
    watch = Watch("alice")
    alice = watch.attach(new_context().new_page())
    sign_up(alice, "alice")
    create_workspace(alice, "Acme")
    task_url = create_task(alice, "Plan the offsite")

    # --- alice makes the A2A agent from its card's URL --------------------------------------
    alice.get_by_role("link", name="Manage agents").click()
    form = alice.locator("#outside-agent")
    form.get_by_label("Outside agent's name").fill("Scout")
    form.get_by_label("A2A agent card URL").fill(a2a_agent.card_url)
    form.get_by_role("button", name="Create outside agent").click()
    made = alice.get_by_test_id("outside-made")
    expect(made).to_contain_text("Scout was created")
    expect(made).to_contain_text(a2a_agent.card_url)
    # it decides for itself when to ask (the A2A agent asks; Collab's policy does not)
    alice.get_by_role("link", name="Change Scout").click()
    alice.locator("input[name=policy_name][value=never]").check()
    alice.get_by_role("button", name="Save").click()
    expect(alice.locator("ul.flash")).to_contain_text("Scout was saved")
    add_agent_to_task(alice, task_url, "Scout")
    expect_chat_live(alice)
    second = watch.attach(alice.context.new_page())  # the same task on a second page
    second.goto(task_url)
    expect_chat_live(second)

    # --- a mention: its stream shows while its task works, then it replies and asks ----------
    send_chat(alice, "@Scout how long should the offsite be?")
    expect(_stream_of(alice, "Scout")).to_contain_text("Looking at the dates")
    expect(_stream_of(second, "Scout")).to_contain_text("Looking at the dates")
    a2a_agent.release()
    expect(alice.locator("#messages")).to_contain_text("Two days, I would say.")
    question = alice.locator(".question-card.status-open")
    expect(question).to_contain_text("Which city?")
    assert a2a_agent.state_of("how long", "input-required") == "input-required"
    scout_card = alice.locator("#agent-cards [data-agent=Scout]")
    expect(scout_card.get_by_test_id("answered-by")).to_have_text(
        "answered by A2A agent (127.0.0.1)"
    )
    question.get_by_label("Answer to Scout").fill("Lisbon")
    question.get_by_role("button", name="Answer").click()

    # --- the answer continues the same A2A task; its artifact is a suggestion alice accepts ---
    expect(alice.locator("#messages")).to_contain_text("Noted: Lisbon.")
    card = alice.get_by_test_id("suggestion").first
    expect(card).to_contain_text("Two days in Lisbon")
    card.get_by_test_id("accept-suggestion").click()
    expect(alice.locator(".cm-content")).to_contain_text("- Two days in Lisbon")
    expect(second.locator(".cm-content")).to_contain_text("- Two days in Lisbon")
    expect(alice.get_by_test_id("suggestion").first).to_contain_text("Accepted by alice")
    tasks = a2a_agent.tasks()
    assert len(tasks) == 1, tasks  # the answer went to the task that asked, not a new one
    assert a2a_agent.state_of("how long", "completed") == "completed"

    # --- a long piece of work; alice presses Stop: the A2A task is canceled there ------------
    send_chat(alice, "@Scout slowly work out the rest")
    expect(_stream_of(alice, "Scout")).to_contain_text("Thinking")
    alice.get_by_test_id("stop-Scout").click()
    expect(chat_messages(alice).last).to_contain_text("alice stopped Scout.")
    assert a2a_agent.state_of("slowly", "canceled") == "canceled"
    expect(alice.locator("#messages")).not_to_contain_text("Thinking")

    # --- it asks again; alice presses Stop while the question waits: canceled there too -------
    send_chat(alice, "@Scout ask me which hotel")
    open_question = alice.locator(".question-card.status-open")
    expect(open_question).to_contain_text("Which city?")
    assert a2a_agent.state_of("which hotel", "input-required") == "input-required"
    alice.get_by_test_id("stop-Scout").click()
    expect(chat_messages(alice).last).to_contain_text("alice stopped Scout.")
    expect(open_question).to_have_count(0)  # withdrawn
    assert a2a_agent.state_of("which hotel", "canceled") == "canceled"

    assert watch.problems == [], "\n".join(watch.problems)
