"""Agent2Agent (A2A) agents (issue 29, docs/adr/0025): the one module that calls the official
``a2a-sdk`` client. Nothing of the SDK (protobuf messages, its async client) leaves it: the
producer (``agents/engine/producers/a2a.py``) sees plain ``Event`` values.

The SDK is asynchronous and the turn pipeline is not, and the ORM must stay on the turn's own
thread: a ``Conversation`` runs the SDK on an event loop of its own, in a thread of its own,
and hands each event over a queue; the producer reads it between its lease renewals. Every
connection goes through the guarded HTTP client (the address rules of model base URLs).
"""

from __future__ import annotations

import asyncio
import json
import logging
import queue
import threading
from collections.abc import AsyncIterator
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

import httpx
from django.core.exceptions import ValidationError

from agents.llm.endpoints import EndpointRefused, base_url_refusal, validate_base_url
from agents.llm.guarded_http import guarded_async_client

log = logging.getLogger(__name__)

CARD_TIMEOUT_SECONDS = 10.0
CALL_TIMEOUT_SECONDS = 30.0
INSTALL_HINT = "This server was installed without the A2A client: `make run` installs it."

# The A2A task states, by the names the protocol's JSON uses.
WORKING = ("submitted", "working")
ENDED = ("completed", "failed", "canceled", "rejected", "input-required", "auth-required")


class A2AFailure(Exception):
    """The A2A agent could not be reached or answered something that is no A2A answer."""


class TaskEnded(A2AFailure):
    """The agent says the task cannot be canceled: it has ended already, or it has none."""


@dataclass(frozen=True)
class Event:
    """One thing the A2A agent sent: its task's ``state`` (and the status message's text),
    an artifact's parts, or a direct message (a reply without a task)."""

    kind: str  # "status", "artifact" or "message"
    task_id: str = ""
    context_id: str = ""
    state: str = ""
    text: str = ""
    parts: list[dict[str, Any]] = field(default_factory=list)  # {"text": …} or {"data": …}
    artifact_id: str = ""
    append: bool = False


def _sdk() -> Any:
    try:
        import a2a.client
        import a2a.types
    except ImportError as exc:  # pragma: no cover - the extra `make` installs
        raise A2AFailure(INSTALL_HINT) from exc
    return a2a


def check_card_url(url: str) -> str:
    """The card URL, stripped, once the address rules allow it and an agent card is there
    (``ValidationError`` with the reason otherwise)."""
    url = url.strip()
    validate_base_url(url)
    try:
        card = asyncio.run(_fetch_card(url))
    except A2AFailure as exc:
        raise ValidationError(str(exc)) from None
    if not card.supported_interfaces:
        raise ValidationError(f"The agent card at {url} names no interface to send messages to.")
    return url


async def _fetch_card(url: str) -> Any:
    _sdk()
    from a2a.client import A2ACardResolver, AgentCardResolutionError

    async with guarded_async_client(timeout=CARD_TIMEOUT_SECONDS) as http:
        try:
            return await A2ACardResolver(http, url, agent_card_path="").get_agent_card()
        except AgentCardResolutionError as exc:
            log.warning("A2A agent card at %s: %s", url, exc)  # the SDK's details, for admins
            raise A2AFailure(f"No A2A agent card at {url}: {card_problem(exc)}.") from None
        except EndpointRefused as exc:
            raise A2AFailure(str(exc)) from None


def card_problem(exc: BaseException) -> str:
    """What went wrong fetching an agent card, in a few plain words (the SDK's own message
    repeats the URL and the HTTP client's internals); its cause says which step failed."""
    from google.protobuf.json_format import ParseError

    cause = exc.__cause__
    if isinstance(cause, httpx.HTTPStatusError):
        return f"not an agent card (status {cause.response.status_code})"
    if isinstance(cause, httpx.TimeoutException):
        return "it did not answer in time"
    if isinstance(cause, httpx.RequestError):
        return "could not reach it"
    if isinstance(cause, json.JSONDecodeError):
        return "its answer is not JSON"
    if isinstance(cause, ParseError):
        return "its JSON is not an agent card"
    return "could not read it"


def _parts(parts: Any) -> list[dict[str, Any]]:
    from google.protobuf.json_format import MessageToDict

    found: list[dict[str, Any]] = []
    for part in parts:
        if part.HasField("data"):
            found.append({"data": MessageToDict(part.data)})
        elif part.text:
            found.append({"text": part.text})
    return found


def _text(message: Any) -> str:
    return "\n".join(p["text"] for p in _parts(message.parts) if "text" in p)


def _state(value: int) -> str:
    from a2a.types import TaskState

    name = TaskState.Name(value)  # TASK_STATE_INPUT_REQUIRED
    return name.removeprefix("TASK_STATE_").lower().replace("_", "-")


def events_of(response: Any) -> list[Event]:
    """A stream response of the SDK as ``Event`` values."""
    if response.HasField("message"):
        m = response.message
        return [Event("message", m.task_id, m.context_id, parts=_parts(m.parts))]
    if response.HasField("status_update"):
        u = response.status_update
        status = u.status
        return [
            Event("status", u.task_id, u.context_id, _state(status.state), _text(status.message))
        ]
    if response.HasField("artifact_update"):
        a = response.artifact_update
        return [
            Event(
                "artifact",
                a.task_id,
                a.context_id,
                parts=_parts(a.artifact.parts),
                artifact_id=a.artifact.artifact_id,
                append=a.append,
            )
        ]
    if response.HasField("task"):
        t = response.task
        found = [
            Event("artifact", t.id, t.context_id, parts=_parts(x.parts), artifact_id=x.artifact_id)
            for x in t.artifacts
        ]
        status = t.status
        return [
            *found,
            Event("status", t.id, t.context_id, _state(status.state), _text(status.message)),
        ]
    raise A2AFailure("The A2A agent sent a response that is neither a task nor a message.")


class Conversation:
    """One turn's exchange with an A2A agent, on an event loop in a thread of its own.
    ``events`` yields ``Event`` values, then ``None`` when the agent's stream ended, or an
    ``A2AFailure`` when it failed."""

    def __init__(self, card_url: str) -> None:
        self.card_url = card_url
        self.events: queue.Queue[Event | A2AFailure | None] = queue.Queue()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self._client: Any = None
        self._http: Any = None
        self._running: Future[None] | None = None

    def _submit(self, coroutine: Any) -> Future[Any]:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop)

    async def _connect(self) -> Any:
        if self._client is None:
            from a2a.client import ClientConfig, ClientFactory

            card = await _fetch_card(self.card_url)
            for interface in card.supported_interfaces:
                refusal = base_url_refusal(interface.url)
                if refusal:
                    raise A2AFailure(f"The agent card's address is refused: {refusal}")
            self._http = guarded_async_client(timeout=CALL_TIMEOUT_SECONDS)
            config = ClientConfig(streaming=True, httpx_client=self._http)
            self._client = ClientFactory(config).create(card)
        return self._client

    async def _pump(self, start: Any) -> None:
        try:
            client = await self._connect()
            stream: AsyncIterator[Any] = start(client)
            async for response in stream:
                for event in events_of(response):
                    self.events.put(event)
            self.events.put(None)
        except A2AFailure as exc:
            self.events.put(exc)
        except asyncio.CancelledError:
            self.events.put(None)
        except Exception as exc:  # the SDK's errors, a broken stream, a malformed answer
            self.events.put(A2AFailure(f"{type(exc).__name__}: {str(exc)[:300]}"))

    def send(
        self, *, message_id: str, text: str, data: dict[str, Any], task_id: str, context_id: str
    ) -> None:
        """Send the turn's message (continuing ``task_id`` when it is an answer)."""
        from a2a.helpers.proto_helpers import new_data_part, new_text_part
        from a2a.types import Message, Role, SendMessageRequest

        message = Message(
            role=Role.ROLE_USER,
            message_id=message_id,
            parts=[new_text_part(text), new_data_part(data, media_type="application/json")],
            task_id=task_id or None,
            context_id=context_id or None,
        )
        request = SendMessageRequest(message=message)
        self._running = self._submit(self._pump(lambda c: c.send_message(request)))

    def follow(self, task_id: str) -> None:
        """Follow a task already sent (a turn taken over after its worker died)."""
        from a2a.types import SubscribeToTaskRequest

        request = SubscribeToTaskRequest(id=task_id)
        self._running = self._submit(self._pump(lambda c: c.subscribe(request)))

    def cancel(self, task_id: str) -> None:
        """Ask the agent to cancel its task (a person pressed Stop); best effort."""
        from a2a.types import CancelTaskRequest
        from a2a.utils.errors import TaskNotCancelableError, TaskNotFoundError

        async def cancel() -> None:
            client = await self._connect()
            await client.cancel_task(CancelTaskRequest(id=task_id))

        try:
            self._submit(cancel()).result(timeout=CALL_TIMEOUT_SECONDS)
        except (TaskNotCancelableError, TaskNotFoundError) as exc:
            raise TaskEnded(f"{type(exc).__name__}: {str(exc)[:300]}") from None
        except A2AFailure:
            raise
        except Exception as exc:
            raise A2AFailure(f"{type(exc).__name__}: {str(exc)[:300]}") from None

    def close(self) -> None:
        async def close() -> None:
            if self._running is not None:
                self._running.cancel()
            if self._http is not None:
                await self._http.aclose()

        try:
            self._submit(close()).result(timeout=5)
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=5)
            self._loop.close()
