"""Chains (issue 30): an agent's message that addresses another agent of the task by @name
starts that agent's turn through ``start_turn``, the way a person's mention does (so the
agent's settings, the workspace's budget, Stop and idempotency apply), within the chain's guards
(``agents.chains.guards``).

Each hop is a chat message everyone sees, stored as a ``Hop`` of the chain with its type; the
turn it starts points at the turn that sent it (``Turn.parent``) and at the chain. While a
question an agent of the chain asked is open, no hop starts: it is held, said so in the chat,
and started once a person answers. When a guard trips, the chain stops with a chat message
saying which guard, why, and what the chain cost; a person's next message opens a new window
(resets the budget), and "continue" also starts the hop the guard held.
"""

from __future__ import annotations

import re
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Sum
from django.utils import timezone

from agents.chains import guards
from agents.chains.hops import ERROR, QUESTION, REVIEW, HopRecord, classify_hop
from agents.models import Agent, Chain, Hop, Question, Trigger, Turn
from agents.selectors import hop_payload
from agents.services.chat import post_agent_message
from agents.services.turns import MENTION_RE, start_turn
from collab.realtime import broadcast
from collab.tasks.models import Message

HELD_FOR_QUESTION = "question"
HELD_BY_GUARD = "guard"
_CONTINUE = frozenset({"continue", "go on", "carry on", "keep going", "resume", "go ahead"})
_WORDS = re.compile(r"[^\w\s]|_")


def limits(chain: Chain) -> guards.Limits:
    return guards.Limits(
        budget=chain.budget,
        rate=settings.AGENTS_CHAIN_AGENT_SENDS,
        rate_seconds=settings.AGENTS_CHAIN_RATE_SECONDS,
    )


# What an agent quotes rather than says: a fenced block, a code span, a quotation (straight
# or curly double quotes) and a quoted line ("> ..."). A name inside them is cited, not asked.
_QUOTED = re.compile(
    r"```.*?(?:```|\Z)|`[^`\n]*`|\"[^\"\n]*\"|“[^”\n]*”|„[^“”\n]*[“”]|«[^»\n]*»|^[ \t]*>[^\n]*",
    re.DOTALL | re.MULTILINE,
)


def unquoted(body: str) -> str:
    """``body`` with what it quotes blanked out (``_QUOTED``)."""
    return _QUOTED.sub(" ", body)


def addressed_names(*, agent_name: str, body: str, echoed: list[str]) -> set[str]:
    """The @names (lower case) ``body`` addresses, other than the agent's own, those inside
    a line it repeats from the messages that started its turn (quoting a person's request is not
    addressing anyone) and those inside quotes or code (``the text "@Analyst"`` names it)."""
    for line in echoed:
        if line.strip():
            body = body.replace(line.strip(), " ")
    return {name.lower() for name in MENTION_RE.findall(unquoted(body))} - {agent_name.lower()}


def _echoed_lines(turn: Turn) -> list[str]:
    ids = [i for i in turn.inputs.get("message_ids", []) if isinstance(i, int)]
    if not ids:
        return []
    bodies = Message.objects.filter(pk__in=ids, kind=Message.Kind.HUMAN).values_list(
        "body", flat=True
    )
    return [line for body in bodies for line in body.splitlines()]


def agents_addressed(
    *,
    turn: Turn,
    message: Message,
    asked: bool = False,
    inputs: dict[str, Any] | None = None,
) -> list[dict[str, str]]:
    """Called when an action of ``turn`` posts ``message`` (a reply, or a question when
    ``asked``), in that action's transaction: start the turns of the agents it addresses.
    ``inputs``: what the addressed turns get besides the message (a plan step to review).
    Returns the hops that started, as the message shows them (``hop_payload``). A message that
    names no other agent costs no query."""
    if not {n.lower() for n in MENTION_RE.findall(message.body)} - {turn.agent.name.lower()}:
        return []
    names = addressed_names(
        agent_name=turn.agent.name, body=message.body, echoed=_echoed_lines(turn)
    )
    if not names:
        return []
    targets = [
        agent
        for agent in Agent.objects.filter(
            tasks=turn.task_id, is_active=True, on_mention=True
        ).order_by("name")
        if agent.name.lower() in names and agent.pk != turn.agent_id
    ]
    if not targets:
        return []
    chain = _chain_for(turn)
    answering = _answering(turn)
    started = []
    for agent in targets:
        kind = classify_hop(text=message.body, asked=asked, answering=answering, receiver=agent.pk)
        entry = _entry(turn=turn, to_agent=agent, kind=kind, message=message)
        if inputs:
            entry["inputs"] = inputs
        if _hop(chain, entry):
            started.append(hop_payload(kind=kind, to=agent.name))
    return started


def report_failure(*, turn_id: int, note_id: int) -> list[Turn]:
    """A turn some agent handed over failed: the failure (``note_id``, the chat message saying
    so) goes back to the agent that handed it over, as an error hop. Once per failure."""
    with transaction.atomic():
        turn = Turn.objects.select_related("agent", "parent").filter(pk=turn_id).first()
        note = Message.objects.filter(pk=note_id).first()
        if turn is None or note is None or turn.parent is None or turn.chain_id is None:
            return []
        if Hop.objects.filter(message=note).exists():
            return []  # a redelivered job
        receiver = Agent.objects.filter(pk=turn.parent.agent_id, is_active=True).first()
        if receiver is None or receiver.pk == turn.agent_id:
            return []
        chain = Chain.objects.select_for_update().get(pk=turn.chain_id)
        if any(entry.get("message_id") == note.pk for entry in chain.held):
            return []  # a redelivered job, the first delivery's hop held
        return _hop(chain, _entry(turn=turn, to_agent=receiver, kind=ERROR, message=note))


def person_posted(*, message: Message) -> list[Turn]:
    """A person wrote in the task's chat. Every chain of the task has a new window from this
    message on (its budget is reset: ``_window`` counts the hops after a person's last
    message, and a chain a guard stopped goes on), which costs no statement here; "continue"
    also starts the hops a guard or a question held."""
    if message.kind != Message.Kind.HUMAN or not is_continue(message.body):
        return []
    chains = Chain.objects.filter(
        task_id=message.task_id, status__in=(Chain.Status.ACTIVE, Chain.Status.TRIPPED)
    )
    started = []
    for chain in chains.select_for_update().order_by("id"):
        held, chain.held = chain.held, []
        chain.status, chain.guard, chain.reason = Chain.Status.ACTIVE, "", ""
        chain.save(update_fields=["held", "status", "guard", "reason"])
        for entry in held:
            started.extend(_hop(chain, entry))
    return started


def is_continue(body: str) -> bool:
    words = _WORDS.sub(" ", MENTION_RE.sub(" ", body.lower()))
    return " ".join(words.split()) in _CONTINUE


def question_closed(*, question: Question) -> list[Turn]:
    """A person answered ``question``: once no question of its chain is open, the hops held
    for it start (within the guards)."""
    chain_id = (
        Turn.objects.filter(pk=question.turn_id).values_list("chain_id", flat=True).first()
        if question.turn_id
        else None
    )
    if chain_id is None:
        return []
    chain = Chain.objects.select_for_update().get(pk=chain_id)
    if chain.status == Chain.Status.STOPPED or _open_question(chain):
        return []
    waiting = [e for e in chain.held if e.get("why") == HELD_FOR_QUESTION]
    chain.held = [e for e in chain.held if e.get("why") != HELD_FOR_QUESTION]
    chain.save(update_fields=["held"])
    started = []
    for entry in waiting:
        started.extend(_hop(chain, entry))
    return started


# --- One hop ------------------------------------------------------------------------------------


def _entry(*, turn: Turn, to_agent: Agent, kind: str, message: Message) -> dict[str, Any]:
    return {
        "from_turn": turn.pk,
        "from_agent": turn.agent_id,
        "to_agent": to_agent.pk,
        "to_name": to_agent.name,
        "kind": kind,
        "message_id": message.pk,
        "text": message.body[:2000],
    }


def _hop(chain: Chain, entry: dict[str, Any]) -> list[Turn]:
    """Start the hop ``entry`` describes, or hold it (a question of the chain is open, or the
    chain is stopped by a guard) or trip a guard: never a silent drop."""
    if chain.status == Chain.Status.STOPPED:
        return []  # a person pressed Stop: its turns are cancelled, and so is what they sent
    last_person = _last_person_message(chain.task_id)
    if chain.status == Chain.Status.TRIPPED and last_person > (chain.notice_id or 0):
        chain.status, chain.guard, chain.reason = Chain.Status.ACTIVE, "", ""  # a person wrote
        chain.save(update_fields=["status", "guard", "reason"])
    if chain.status == Chain.Status.TRIPPED:
        _hold(chain, entry, HELD_BY_GUARD)
        _say(
            chain,
            f"{entry['to_name']} was not asked: this chain of agents is stopped "
            f"({chain.guard}). Write “continue” in the chat to let it go on.",
        )
        return []
    if _open_question(chain):
        _hold(chain, entry, HELD_FOR_QUESTION)
        _say(
            chain,
            f"{entry['to_name']} will take its turn once a person answers the open question "
            "of this chain of agents.",
        )
        return []
    candidate = HopRecord(
        sender=entry["from_agent"],
        receiver=entry["to_agent"],
        kind=entry["kind"],
        text=entry["text"],
        at=timezone.now(),
        source=entry["message_id"],
    )
    trip = guards.check(_window(chain, after=last_person), candidate, limits(chain))
    if trip is not None:
        _trip(chain, trip, entry)
        return []
    return [_start(chain, entry)]


def _start(chain: Chain, entry: dict[str, Any]) -> Turn:
    parent = Turn.objects.select_related("task").get(pk=entry["from_turn"])
    receiver = Agent.objects.get(pk=entry["to_agent"])
    hop = Hop.objects.create(
        chain=chain,
        index=chain.hop_count,
        kind=entry["kind"],
        from_turn=parent,
        from_agent_id=entry["from_agent"],
        to_agent=receiver,
        message_id=entry["message_id"],
        text=entry["text"],
    )
    chain.hop_count += 1
    chain.save(update_fields=["hop_count"])
    turn = start_turn(
        agent=receiver,
        task=parent.task,
        trigger=Trigger.AGENT,
        requested_by=parent.requested_by,
        inputs={**entry.get("inputs", {}), "message_ids": [entry["message_id"]]},
        chain=chain,
        parent=parent,
        hop_kind=entry["kind"],
    )
    hop.to_turn = turn
    hop.save(update_fields=["to_turn"])
    return turn


def _hold(chain: Chain, entry: dict[str, Any], why: str) -> None:
    chain.held = [*chain.held, {**entry, "why": why}]
    chain.save(update_fields=["held"])


def _trip(chain: Chain, trip: guards.Trip, entry: dict[str, Any]) -> None:
    chain.status, chain.guard, chain.reason = Chain.Status.TRIPPED, trip.guard, trip.reason[:300]
    chain.held = [*chain.held, {**entry, "why": HELD_BY_GUARD}]
    spent = Turn.objects.filter(chain=chain).aggregate(
        tokens_in=Sum("tokens_in"), tokens_out=Sum("tokens_out"), cost=Sum("cost")
    )
    tokens = (spent["tokens_in"] or 0) + (spent["tokens_out"] or 0)
    cost = f", ${spent['cost']:.4f}" if spent["cost"] else ""
    chain.notice = _say(
        chain,
        f"Stopped this chain of agents: the {trip.guard} tripped ({trip.reason}). "
        f"{chain.hop_count} hop{'s' if chain.hop_count != 1 else ''} so far, "
        f"{tokens:,} tokens{cost}. {entry['to_name']} was not asked. Write in the chat to "
        f"reset the budget, or “continue” to let {entry['to_name']} take its turn.",
    )
    chain.save(update_fields=["status", "guard", "reason", "held", "notice"])


def _say(chain: Chain, body: str) -> Message:
    note = post_agent_message(
        task_id=chain.task_id, author_name="Collab", body=body, kind=Message.Kind.SYSTEM
    )
    transaction.on_commit(lambda: broadcast.chat_message(note.pk))
    return note


# --- Reads --------------------------------------------------------------------------------------


def _chain_for(turn: Turn) -> Chain:
    """The turn's chain, locked; a turn a person started begins one with its first hop."""
    if turn.chain_id is not None:
        return Chain.objects.select_for_update().get(pk=turn.chain_id)
    budget = settings.AGENTS_CHAIN_HOP_BUDGET or (
        Agent.objects.filter(tasks=turn.task_id, is_active=True).count() + 1
    )
    chain = Chain.objects.create(task_id=turn.task_id, root_turn=turn, budget=budget)
    Turn.objects.filter(pk=turn.pk).update(chain=chain)
    turn.chain = chain
    return chain


def _answering(turn: Turn) -> int | None:
    """The agent whose question or review request started ``turn`` (its reply answers it)."""
    if turn.parent_id is None or turn.hop_kind not in (QUESTION, REVIEW):
        return None
    return Turn.objects.filter(pk=turn.parent_id).values_list("agent_id", flat=True).first()


def _open_question(chain: Chain) -> bool:
    return Question.objects.filter(turn__chain=chain, status=Question.Status.OPEN).exists()


def _last_person_message(task_id: int) -> int:
    """The id of the newest message a person wrote in the task (0: none)."""
    newest = (
        Message.objects.filter(task_id=task_id, kind=Message.Kind.HUMAN)
        .order_by("-id")
        .values_list("pk", flat=True)
        .first()
    )
    return newest or 0


def _window(chain: Chain, *, after: int) -> list[HopRecord]:
    """The chain's hops whose message came after message ``after`` (a person's last), oldest
    first."""
    hops = Hop.objects.filter(chain=chain, message_id__gt=after).order_by("index")
    return [
        HopRecord(
            sender=hop.from_agent_id,
            receiver=hop.to_agent_id,
            kind=hop.kind,
            text=hop.text,
            at=hop.created_at,
            source=hop.message_id or 0,
        )
        for hop in hops
    ]
