"""What of a turn's memory must not be repeated where everyone on the task reads: the items its
requester did not share, less those the task may use openly (``agents.policies.private_memory``;
issue 28, finding 3). Read once from the gathered input; the streamer holds back sentences that
repeat them while the reply is written, and produce leaves them out of the actions."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agents.engine.gather import TurnInput
from agents.policies.memory_facts import MemoryFact
from agents.policies.private_memory import Withheld, guarded, withhold_private
from agents.policies.understand import Understanding


@dataclass(frozen=True)
class Unshared:
    facts: tuple[MemoryFact, ...]  # every item the turn was shown, free text ones too
    task_slots: tuple[str, ...]
    public_text: tuple[str, ...]  # what the task already shows everyone

    def items(self) -> list[MemoryFact]:
        return guarded(self.facts, task_slots=self.task_slots, public_text=self.public_text)

    def withhold(self, actions: list[dict[str, Any]]) -> Withheld:
        return withhold_private(
            actions, self.facts, task_slots=self.task_slots, public_text=self.public_text
        )


def unshared_of(inp: TurnInput, understanding: Understanding) -> Unshared:
    ctx = inp.context
    task = ctx["task"]
    return Unshared(
        # The policies read keyed items only (``understanding.facts``); a free-text item is
        # just as private.
        facts=tuple(
            item if isinstance(item, MemoryFact) else MemoryFact(**{**item, "kinds": ()})
            for item in ctx.get("memory_items", ())
        ),
        task_slots=tuple(s.name for s in understanding.situation.slots),
        public_text=(
            task["title"],
            task["goal"] or "",
            ctx["document"],
            ctx["request"],
            *(m["body"] for m in ctx["messages"] if m["kind"] != "agent"),
        ),
    )
