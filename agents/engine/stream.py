"""Streaming the model's answer: the model runs in a helper thread while the job's thread owns
the database, publishes the reply text in batches, renews the lease and notices a Stop."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from django.utils import timezone
from langchain_core.utils.json import parse_partial_json

from agents import llm
from agents.engine.lease import lease_expiry, out_of_time_message, seconds_left
from agents.models import Turn, TurnStatus
from agents.outbox import events, presence
from agents.policies.memory_facts import MemoryFact
from agents.policies.private_memory import without_private
from agents.schemas import streamed_text

# Threads that run model calls while the job's thread owns the database (reused across turns;
# a stopped turn's call finishes in the background without holding the turn).
producers = ThreadPoolExecutor(max_workers=16, thread_name_prefix="model-stream")

STREAM_BATCH_SECONDS = 0.1  # reply tokens reach pages in batches of at most 100 ms
IDLE_TICK_SECONDS = 0.25  # while the model is silent: renew the lease, notice a Stop


class TurnCancelled(Exception):
    """The turn was stopped (or taken over) while this worker was running it."""


class TurnBudgetExceeded(Exception):
    """The turn used more time than ``AGENTS_TURN_TIME_BUDGET_SECONDS``."""


class Streamer:
    """Runs the model in a helper thread; this (the job's) thread owns the database.

    Every ≤100 ms while text arrives, and every 250 ms otherwise, one UPDATE both publishes the
    text so far for late pages, renews the lease, and notices a Stop (the UPDATE matches no
    row once the turn is no longer running).
    """

    def __init__(
        self,
        turn: Turn,
        model: Any,
        messages: list[Any],
        *,
        max_tokens: int,
        private: Sequence[MemoryFact] = (),
    ) -> None:
        self.turn = turn
        # Unshared memory items no one else may read: a sentence repeating one is never shown,
        # and while they exist only finished sentences are (``agents.engine.unshared``).
        self._private = tuple(private)
        # Output budget: the profile's max tokens, with slack for providers that count otherwise.
        self.max_chars = max_tokens * 4 * 2
        self.queue: queue.Queue[tuple[str, Any]] = queue.Queue()
        self.stop = threading.Event()
        self.text = ""
        self.tokens_in: int | None = None
        self.tokens_out: int | None = None
        self._shown = ""
        self.final_fields: dict[str, Any] = {}
        self.final_event: tuple[str, str] | None = None
        self._model = model
        self._messages = messages

    def _produce(self, model: Any, messages: list[Any]) -> None:
        try:
            for piece in llm.stream_model(model, messages):
                if self.stop.is_set():
                    break
                self.queue.put(("piece", piece))
        except BaseException as exc:
            self.queue.put(("error", exc))
        else:
            self.queue.put(("end", None))

    def run(self) -> str:
        producers.submit(self._produce, self._model, self._messages)
        started = time.monotonic()
        deadline = started + seconds_left(self.turn)  # the turn's one budget, not per attempt
        next_tick = started + IDLE_TICK_SECONDS
        try:
            while True:
                timeout = max(0.0, next_tick - time.monotonic())
                try:
                    kind, item = self.queue.get(timeout=timeout)
                except queue.Empty:
                    kind, item = "tick", None
                if kind == "error":
                    raise item
                if kind == "piece":
                    self.text += item.text
                    if len(self.text) > self.max_chars:
                        raise TurnBudgetExceeded("The model's answer went over its token budget.")
                    self.tokens_in = item.tokens_in or self.tokens_in
                    self.tokens_out = item.tokens_out or self.tokens_out
                    if not self._shown and streamed_text(self._partial()):
                        next_tick = time.monotonic()  # the first words go out at once
                    elif next_tick - time.monotonic() > STREAM_BATCH_SECONDS:
                        next_tick = time.monotonic() + STREAM_BATCH_SECONDS
                now = time.monotonic()
                if kind == "end":
                    self._end()
                    return self.text
                if now >= next_tick:
                    self._flush()
                    next_tick = now + IDLE_TICK_SECONDS
                if now > deadline:
                    raise TurnBudgetExceeded(out_of_time_message())
        finally:
            self.stop.set()

    def _partial(self) -> Any:
        try:
            return parse_partial_json(self.text)
        except ValueError:
            return None

    def _change(self, *, final: bool = False) -> tuple[dict[str, Any], tuple[str, str] | None]:
        """The turn's fields for the text shown so far, and the stream event's (text, delta)
        when it changed since the last batch."""
        shown = streamed_text(self._partial())
        if self._private:
            shown, _ = without_private(shown, self._private, complete=final)
        if shown == self._shown:
            return {}, None
        fields: dict[str, Any] = {"stream_text": shown}
        if not self._shown:
            fields["first_token_at"] = timezone.now()
        delta = shown[len(self._shown) :] if shown.startswith(self._shown) else shown
        self._shown = shown
        return fields, (shown, delta)

    def _flush(self) -> None:
        fields, event = self._change()
        matched = Turn.objects.filter(pk=self.turn.pk, status=TurnStatus.RUNNING).update(
            lease_expires_at=lease_expiry(), **fields
        )
        if not matched:
            raise TurnCancelled
        presence.renew(self.turn.pk)
        if event is not None:
            events.stream(self.turn, *event)

    def _end(self) -> None:
        """The answer is complete: its last batch is written together with the decision (one
        UPDATE that also notices a Stop), and published when that commits."""
        self.final_fields, self.final_event = self._change(final=True)


def await_signal(turn: Turn, future: Future[Any], deadline: float) -> Any | None:
    """A signal call's answer, renewing the lease meanwhile; None once the deadline passed.
    ``TurnCancelled`` if the turn was stopped (or taken over) while waiting."""
    while True:
        try:
            return future.result(
                timeout=max(0.0, min(IDLE_TICK_SECONDS, deadline - time.monotonic()))
            )
        except FutureTimeout:
            if time.monotonic() >= deadline:
                return None
            renewed = Turn.objects.filter(pk=turn.pk, status=TurnStatus.RUNNING).update(
                lease_expires_at=lease_expiry()
            )
            if not renewed:
                raise TurnCancelled from None
