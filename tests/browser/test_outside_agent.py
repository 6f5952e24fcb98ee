"""An outside agent in the browser (issue 29): alice makes one on the agents page (its token
and signing secret shown once), and a program of her own, a webhook receiver this test runs,
verifies every webhook's Standard Webhooks signature and answers through the API. It answers a
mention, asks a question alice answers in the browser, proposes a suggestion she accepts
there, and when she presses Stop it is sent a signed stop notice and its next activity is
refused with 409. Console errors fail the test."""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import pytest
from playwright.sync_api import BrowserContext, expect

from agents.services import webhooks
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

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

WAIT_SECONDS = 30.0


class Program:
    """Alice's outside program: it keeps what it was sent (after checking the signature) and
    answers each turn from another thread, as a real program acknowledges first."""

    def __init__(self, server_url: str) -> None:
        self.server_url = server_url
        self.token = ""
        self.secret = ""
        self.received: list[dict[str, Any]] = []
        self.refusals: list[str] = []  # signatures that did not verify
        self.late_answer: tuple[int, dict[str, Any]] | None = None
        self.answers: list[tuple[Any, ...]] = []  # what the server said to each activity
        self._lock = threading.Lock()

    def handle(self, headers: dict[str, str], body: bytes) -> None:
        try:
            webhooks.verify([self.secret], headers=headers, body=body)
        except webhooks.SignatureRefused as exc:
            self.refusals.append(str(exc))
            return
        payload = json.loads(body)
        with self._lock:
            self.received.append(payload)
        threading.Thread(target=self.answer, args=(payload,), daemon=True).start()

    def activity(self, turn_id: int, activity_id: str, **body: Any) -> tuple[int, dict[str, Any]]:
        request = urllib.request.Request(  # noqa: S310 - the server under test
            f"{self.server_url}/api/outside/turns/{turn_id}/activities",
            data=json.dumps(body).encode(),
            method="POST",
            headers={
                "Authorization": f"Bearer {self.token}",
                "Content-Type": "application/json",
                "webhook-id": activity_id,
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:  # noqa: S310
                said = answer.status, json.loads(answer.read())
        except urllib.error.HTTPError as error:
            said = error.code, json.loads(error.read())
        self.answers.append((activity_id, *said))
        return said

    def answer(self, payload: dict[str, Any]) -> None:
        if payload["type"] == "turn.cancelled":
            turn_id = payload["turn"]["id"]
            self.late_answer = self.activity(turn_id, f"late-{turn_id}", type="finish")
            return
        turn_id = payload["turn"]["id"]
        request = payload["messages"][-1]["body"] if payload["messages"] else ""
        if payload["answers"]:  # resumed with alice's answer: a suggestion
            city = payload["answers"][-1]["answer"]
            self.activity(
                turn_id,
                f"s-{turn_id}",
                type="suggestion",
                text="A first line for the plan",
                find="",
                replace=f"- Two days in {city}",
            )
            self.activity(turn_id, f"f-{turn_id}", type="finish")
        elif "how long" in request:
            self.activity(turn_id, f"r-{turn_id}", type="reply", text="Two days, I would say.")
            self.activity(turn_id, f"q-{turn_id}", type="question", text="Which city?")
            self.activity(turn_id, f"f-{turn_id}", type="finish")
        else:  # a long piece of work: it streams and waits for more, until stopped
            self.activity(turn_id, f"c-{turn_id}", type="reply_chunk", text="Working on it")

    def wait_for(self, what: str, found: Callable[[], Any]) -> Any:
        deadline = time.monotonic() + WAIT_SECONDS
        while not (result := found()):
            if time.monotonic() > deadline:
                raise AssertionError(f"never {what}: {self.received} {self.answers}")
            time.sleep(0.1)
        return result


@pytest.fixture
def program(server_url: str) -> Iterator[tuple[Program, str]]:
    """The program and its webhook URL (a receiver on a free port of this machine)."""
    program = Program(server_url)

    class Receiver(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["content-length"]))
            self.send_response(204)  # acknowledged at once; the work is done afterwards
            self.end_headers()
            program.handle(dict(self.headers), body)

        def log_message(self, *args: Any) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Receiver)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield program, f"http://127.0.0.1:{server.server_port}/collab"
    finally:
        server.shutdown()
        server.server_close()


def test_an_outside_agent_answers_asks_suggests_and_obeys_stop_in_the_browser(
    new_context: Callable[[], BrowserContext], worker: None, program: tuple[Program, str]
) -> None:
    hook, hook_url = program
    watch = Watch("alice")
    alice = watch.attach(new_context().new_page())
    sign_up(alice, "alice")
    create_workspace(alice, "Acme")
    task_url = create_task(alice, "Plan the offsite")

    # --- alice makes the outside agent; its token and secret are shown once ------------------
    alice.get_by_role("link", name="Manage agents").click()
    agents_page = alice.url
    form = alice.locator("#outside-agent")
    form.get_by_label("Outside agent's name").fill("Scout")
    form.get_by_label("Webhook URL").fill(hook_url)
    form.get_by_role("button", name="Create outside agent").click()
    expect(alice.get_by_test_id("outside-made")).to_contain_text("Scout was created")
    hook.token = alice.get_by_test_id("outside-token").input_value()
    hook.secret = alice.get_by_test_id("outside-secret").input_value()
    assert hook.token.startswith("cagt_")
    assert hook.secret.startswith("whsec_")
    # it decides for itself when to ask (its program asks; Collab's policy does not)
    alice.goto(agents_page)
    expect(alice.get_by_test_id("outside-made")).to_have_count(0)  # shown once
    alice.get_by_role("link", name="Change Scout").click()
    alice.locator("input[name=policy_name][value=never]").check()
    alice.get_by_role("button", name="Save").click()
    expect(alice.locator("ul.flash")).to_contain_text("Scout was saved")
    add_agent_to_task(alice, task_url, "Scout")
    expect_chat_live(alice)

    # --- a mention: it replies and asks; alice answers in the browser -------------------------
    send_chat(alice, "@Scout how long should the offsite be?")
    hook.wait_for("its first turn answered", lambda: len(hook.answers) >= 3)
    expect(alice.locator("#messages")).to_contain_text("Two days, I would say.")
    question = alice.get_by_test_id("question").first
    expect(question).to_contain_text("Which city?")
    question.get_by_label("Answer to Scout").fill("Lisbon")
    question.get_by_role("button", name="Answer").click()

    # --- resumed with the answer, it proposes a suggestion; alice accepts it -------------------
    card = alice.get_by_test_id("suggestion").first
    expect(card).to_contain_text("Two days in Lisbon")
    card.get_by_test_id("accept-suggestion").click()
    expect(alice.locator(".cm-content")).to_contain_text("- Two days in Lisbon")
    expect(alice.get_by_test_id("suggestion").first).to_contain_text("Accepted by alice")

    # --- a long piece of work; alice presses Stop: the program is told and refused after -----
    send_chat(alice, "@Scout now plan the rest")
    expect(alice.get_by_test_id("stop-Scout")).to_be_visible()
    hook.wait_for("the third turn", lambda: len(hook.received) >= 3)
    alice.get_by_test_id("stop-Scout").click()
    expect(chat_messages(alice).last).to_contain_text("alice stopped Scout.")
    stop = hook.wait_for(
        "the stop notice",
        lambda: next((p for p in hook.received if p["type"] == "turn.cancelled"), None),
    )
    assert stop["reason"] == "Stopped by alice."
    assert stop["turn"]["id"] == hook.received[2]["turn"]["id"]
    status, said = hook.wait_for("the answer to its late activity", lambda: hook.late_answer)
    assert status == 409
    assert said["detail"] == "The turn was stopped (Stopped by alice.); obey the Stop."
    expect(alice.locator(".cm-content")).not_to_contain_text("Working on it")

    assert hook.refusals == []  # every webhook verified
    assert [p["type"] for p in hook.received] == [
        "turn.requested",
        "turn.requested",
        "turn.requested",
        "turn.cancelled",
    ]
    assert watch.problems == [], "\n".join(watch.problems)
