"""The fifth stage's seam, produce: a ``Producer`` turns a decided turn into its actions. It is
the only place where the work differs by kind of agent.

A producer gets the turn's ``TurnInput`` (``gather``), its ``Understanding`` (``understand``)
and the policy's ``Decision`` (``decide``), and returns ``Produced``: the validated actions
(``agents.schemas.DecisionOut``), the context to store with them, and, when it called a model,
that call's log and the streamed text's last batch. It writes nothing itself except the stream
(``agents.engine.stream.Streamer``, the one streamer) and the log of a call that failed;
``apply`` stores and applies what it returns, each action at most once.

Producers are registered when the app is ready (``AgentsConfig.ready``, the composition root,
calls ``producers/installed.py``). ``producer_for`` returns the first registered producer that
``accepts`` the turn, else the fallback: the model producer (``producers/model.py``, today's
path). A new kind of agent adds a module here and one ``register_producer`` line in
``producers/installed.py``:

* the skills producer (deterministic skills on the default install): ``producers/skills.py``;
* the outside-agent producer (an agent reached over a webhook or MCP): ``producers/outside.py``;
* the hand-off producer (an agent handing the work to another agent): ``producers/handoff.py``.

A decision to ask is produced by no producer: its one action is the policy's question.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from agents.schemas import DecisionOut

if TYPE_CHECKING:
    from agents.engine.decide import Decision
    from agents.engine.gather import TurnInput
    from agents.models import ModelCall
    from agents.policies.understand import Understanding


@dataclass(frozen=True)
class Produced:
    """A producer's work: validated actions, stored and applied by ``apply``."""

    actions: DecisionOut
    context: Mapping[str, Any]  # the context stored on the turn with the decision
    producer: str = ""  # the producer's name, for the trace
    call: ModelCall | None = None  # the model call's log, saved with the decision
    fields: Mapping[str, Any] = field(default_factory=dict)  # turn fields stored with it
    stream: tuple[str, str] | None = None  # the streamed text's last batch, published on commit
    withheld: int = 0  # sentences left out: they repeated someone's unshared memory (produce)

    def summary(self) -> str:
        kinds = [a.kind for a in self.actions.actions]
        said = f"{self.producer or 'policy'}: " + (", ".join(str(k) for k in kinds) or "nothing")
        if self.withheld:
            said += f"; {self.withheld} sentences left out (they repeated unshared memory)"
        return said


class ProducerFailed(Exception):
    """The producer cannot do the turn's work and a retry would not help (an outside agent
    that reported an error or stopped answering): the turn fails with this message in the
    chat."""


class Producer(Protocol):
    """A kind of agent's way of producing a turn's actions."""

    name: str

    def accepts(self, inp: TurnInput) -> bool:
        """Whether this producer does the turn's work (the fallback is never asked)."""
        ...

    def produce(self, inp: TurnInput, understanding: Understanding, decision: Decision) -> Produced:
        """The turn's actions. Raises ``agents.engine.stream.TurnCancelled`` when the turn was
        stopped meanwhile, ``agents.llm.ModelError`` for a failure worth a retry."""
        ...


_producers: list[Producer] = []
_fallback: list[Producer] = []


def register_producer(producer: Producer, *, fallback: bool = False) -> None:
    """Add ``producer`` (once); ``fallback``: the one that takes every turn no other accepts."""
    if fallback:
        _fallback[:] = [producer]
    elif all(p.name != producer.name for p in _producers):
        _producers.append(producer)


def producer_for(inp: TurnInput) -> Producer:
    for producer in _producers:
        if producer.accepts(inp):
            return producer
    if not _fallback:
        raise LookupError("No producer registered (agents/apps.py registers the model producer).")
    return _fallback[0]


def registered() -> tuple[str, ...]:
    """The registered producers' names, in the order they are asked (the fallback last)."""
    return tuple(p.name for p in (*_producers, *_fallback))
