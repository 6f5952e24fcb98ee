"""A small A2A agent built with the official SDK's server, run as a real process by the tests
(``python -m tests.outside.a2a_agent PORT``). Its card is at
``http://127.0.0.1:PORT/.well-known/agent-card.json``. What it does depends on the request
(the message's text part; the data part carries Collab's turn):

* ``ask``: asks "Which city?" (input-required); the answer completes the task with a reply
  naming it;
* ``how long``: the browser test's script. It works, streaming "Looking at the dates", and
  waits until ``POST /test/release`` (at most ``GATE_SECONDS``) so that the stream can be seen
  while the task runs; then it replies "Two days, I would say." (an artifact) and asks "Which
  city?". The answer completes the task with "Noted: <city>." and a suggestion (a data part)
  appending "- Two days in <city>" to the document;
* ``draft``: completes with a text artifact and a suggestion (a data part);
* ``slow``: works ("Thinking") and waits until it is cancelled;
* ``fail``: fails with "disk full";
* ``garbage``: completes with a suggestion data part that has no ``replace``;
* anything else: replies "Echo: <request>", and "memory: <values>" of the data part's memory.

Besides the SDK's own routes (the card, JSON-RPC: ``SendMessage``, ``GetTask``, ``ListTasks``,
``CancelTask``, …) it has the test's own: ``POST /test/release`` opens the gate above;
``GET /test/page`` is a web page and ``GET /test/json`` JSON that is no card (wrong card URLs).
"""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import uvicorn
from a2a.helpers.proto_helpers import (
    get_data_parts,
    new_data_part,
    new_task_from_user_message,
    new_text_message,
    new_text_part,
)
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill, TaskState
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

GATE_SECONDS = 60.0
CARD_PATH = "/.well-known/agent-card.json"
START_SECONDS = 20.0
released = asyncio.Event()  # set by POST /test/release; each scripted task waits for it once


async def wait_for_release() -> None:
    with contextlib.suppress(TimeoutError):  # the gate opens by itself in the end
        await asyncio.wait_for(released.wait(), timeout=GATE_SECONDS)
    released.clear()


async def release(request: Request) -> Response:
    released.set()
    return Response(status_code=204)


def first_request(task: object) -> str:
    """The text of the message that started ``task``."""
    history = getattr(task, "history", [])
    return "".join(part.text for part in history[0].parts) if history else ""


class ScoutExecutor(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        message = context.message
        assert message is not None
        task = context.current_task
        if task is None:
            task = new_task_from_user_message(message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        text = context.get_user_input()
        data = next(iter(get_data_parts(message.parts)), {})
        answering = task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED

        def say(words: str) -> object:
            return new_text_message(words, context_id=task.context_id, task_id=task.id)

        if answering:
            city = text.splitlines()[0]
            parts = [new_text_part(f"Noted: {city}.")]
            if "how long" in first_request(task):
                line = {"type": "suggestion", "text": "A first line for the plan"}
                parts.append(
                    new_data_part({**line, "find": "", "replace": f"- Two days in {city}"})
                )
            await updater.add_artifact(parts)
            await updater.complete()
        elif "how long" in text:
            await updater.start_work(say("Looking at the dates"))  # type: ignore[arg-type]
            await wait_for_release()
            await updater.add_artifact([new_text_part("Two days, I would say.")])
            await updater.requires_input(say("Which city?"))  # type: ignore[arg-type]
        elif "ask" in text:
            await updater.requires_input(say("Which city?"))  # type: ignore[arg-type]
        elif "draft" in text:
            await updater.add_artifact(
                [
                    new_text_part("Here is a first draft."),
                    new_data_part({"type": "suggestion", "text": "A start", "replace": "# Plan"}),
                ]
            )
            await updater.complete()
        elif "slow" in text:
            await updater.start_work(say("Thinking"))  # type: ignore[arg-type]
            await asyncio.sleep(600)
        elif "fail" in text:
            await updater.failed(say("disk full"))  # type: ignore[arg-type]
        elif "garbage" in text:
            await updater.add_artifact([new_data_part({"type": "suggestion", "text": "x"})])
            await updater.complete()
        else:
            memory = ", ".join(str(m.get("value")) for m in data.get("memory", []))
            await updater.add_artifact([new_text_part(f"Echo: {text}. memory: {memory}")])
            await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task
        assert task is not None
        await TaskUpdater(event_queue, task.id, task.context_id).cancel()


def app(port: int) -> Starlette:
    card = AgentCard(
        name="Scout",
        description="A test agent: echoes, asks, drafts, fails, waits.",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(
                url=f"http://127.0.0.1:{port}/", protocol_binding="JSONRPC", protocol_version="1.0"
            )
        ],
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text"],
        default_output_modes=["text"],
        skills=[AgentSkill(id="plan", name="Plan", description="Plans things", tags=["plan"])],
    )
    handler = DefaultRequestHandler(
        agent_executor=ScoutExecutor(), task_store=InMemoryTaskStore(), agent_card=card
    )
    routes = create_agent_card_routes(card) + create_jsonrpc_routes(handler, rpc_url="/")
    routes.append(Route("/test/release", release, methods=["POST"]))
    routes.append(Route("/test/page", page, methods=["GET"]))
    routes.append(Route("/test/json", not_a_card, methods=["GET"]))
    return Starlette(routes=routes)


async def page(request: Request) -> Response:
    """A web page where a card URL should point at a card."""
    return Response("<html><body>Hello</body></html>", media_type="text/html")


async def not_a_card(request: Request) -> Response:
    """JSON that is no agent card (a list, where a card is an object)."""
    return Response('["not", "a", "card"]', media_type="application/json")


@contextlib.contextmanager
def serving(port: int) -> Iterator[str]:
    """This agent in a process of its own on ``port``, until the block ends: its card URL."""
    root = Path(__file__).resolve().parents[2]
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.outside.a2a_agent", str(port)],
        cwd=root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}{CARD_PATH}"
    try:
        deadline = time.monotonic() + START_SECONDS
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"the A2A agent exited with {process.returncode}")
            try:
                with urllib.request.urlopen(url, timeout=2):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)


if __name__ == "__main__":
    port = int(sys.argv[1])
    uvicorn.run(app(port), host="127.0.0.1", port=port, log_level="warning")
