"""Chains of agents addressing agents (issue 30) as the review pages show them: each chain as
one tree of turns (who triggered whom, each turn's decision, cost and time), its hops in order,
and the chain figures of the process metrics (definitions in docs/review.md).

Reads only; the pages that call these check the reader first (owners and staff,
``agents.review.selectors``). A fixed number of queries per task, whatever its chains' size.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Protocol

from agents.models import Chain, Hop, PlanStep, Turn
from collab.tasks.models import Message


class ChainFigures(Protocol):
    """What ``add_chain_metrics`` adds to (``agents.review.metrics.Metrics``)."""

    chains: int
    hops: int
    guards_tripped: Counter[str]
    chain_interventions: int
    plan_steps: int
    steps_done_by_people: int
    steps_done_by_agents: int


# The chat notice a tripped guard posts (agents/services/chains.py: ``_trip``).
TRIPPED_PREFIX = "Stopped this chain of agents: the "
_GUARD = re.compile(r"^Stopped this chain of agents: the (.+?) tripped \(")
LOOP_GUARD = "loop detector"


@dataclass
class ChainNode:
    turn: Turn
    depth: int
    children: list[ChainNode] = field(default_factory=list)

    @property
    def decision(self) -> str:
        decision = self.turn.policy_decision
        return str(decision.get("decision", "")) if isinstance(decision, dict) else ""

    @property
    def seconds(self) -> float | None:
        turn = self.turn
        if turn.started_at is None or turn.finished_at is None:
            return None
        return (turn.finished_at - turn.started_at).total_seconds()


@dataclass
class ChainTree:
    chain: Chain
    roots: list[ChainNode]
    hops: list[Hop]
    turns: int
    tokens: int
    cost: Decimal


def list_chain_trees(task_id: int, *, chain_id: int | None = None) -> list[ChainTree]:
    """The task's chains (or the one ``chain_id``), oldest first, each as a tree of its turns:
    a turn's children are the turns its messages started. Three queries."""
    chains = Chain.objects.filter(task_id=task_id).select_related("notice").order_by("id")
    if chain_id is not None:
        chains = chains.filter(pk=chain_id)
    chain_list = list(chains)
    if not chain_list:
        return []
    ids = [chain.pk for chain in chain_list]
    turns = list(
        Turn.objects.filter(chain_id__in=ids)
        .select_related("agent", "requested_by")
        .defer("context", "stream_text", "inputs", "stages")
        .order_by("id")
    )
    hops: dict[int, list[Hop]] = defaultdict(list)
    for hop in (
        Hop.objects.filter(chain_id__in=ids)
        .select_related("from_agent", "to_agent")
        .order_by("chain_id", "index")
    ):
        hops[hop.chain_id].append(hop)
    by_chain: dict[int, list[Turn]] = defaultdict(list)
    for turn in turns:
        by_chain[turn.chain_id or 0].append(turn)
    trees = []
    for chain in chain_list:
        members = by_chain[chain.pk]
        trees.append(
            ChainTree(
                chain=chain,
                roots=_tree(members),
                hops=hops[chain.pk],
                turns=len(members),
                tokens=sum(t.tokens_in + t.tokens_out for t in members),
                cost=sum((t.cost or Decimal(0) for t in members), Decimal(0)),
            )
        )
    return trees


def _tree(turns: list[Turn]) -> list[ChainNode]:
    """Turns whose parent is in the chain hang under it; the others (the root) are roots."""
    nodes = {turn.pk: ChainNode(turn=turn, depth=0) for turn in turns}
    roots = []
    for turn in turns:
        parent = nodes.get(turn.parent_id) if turn.parent_id is not None else None
        if parent is None:
            roots.append(nodes[turn.pk])
        else:
            parent.children.append(nodes[turn.pk])
    stack = [(root, 0) for root in roots]
    while stack:
        node, depth = stack.pop()
        node.depth = depth
        stack.extend((child, depth + 1) for child in node.children)
    return roots


def add_chain_metrics(result: Mapping[int, ChainFigures], task_ids: list[int]) -> None:
    """Chains, hops, guards tripped (by guard), loops stopped and people's interventions of each
    task in ``result``, and the plan's steps: how many, and how many a person or an agent
    decided were done. Three queries, a fourth only for tasks where a guard tripped."""
    for task_id, status, by_agent in PlanStep.objects.filter(
        plan__task_id__in=task_ids
    ).values_list("plan__task_id", "status", "done_by_agent_id"):
        figures = result[task_id]
        figures.plan_steps += 1
        if status == "done" and by_agent:
            figures.steps_done_by_agents += 1
        elif status == "done":
            figures.steps_done_by_people += 1  # a person's tick (in the document: no name)
    for row in Chain.objects.filter(task_id__in=task_ids).values("task_id", "hop_count", "status"):
        metrics = result[row["task_id"]]
        metrics.chains += 1
        metrics.hops += row["hop_count"]
    notices: dict[int, list[int]] = defaultdict(list)
    for task_id, pk, body in (
        Message.objects.filter(
            task_id__in=task_ids, kind=Message.Kind.SYSTEM, body__startswith=TRIPPED_PREFIX
        )
        .order_by("id")
        .values_list("task_id", "pk", "body")
    ):
        found = _GUARD.match(body)
        guard = found[1] if found else "guard"
        result[task_id].guards_tripped[guard] += 1
        notices[task_id].append(pk)
    if not notices:
        return
    people: dict[int, list[int]] = defaultdict(list)
    for task_id, pk in (
        Message.objects.filter(task_id__in=list(notices), kind=Message.Kind.HUMAN)
        .order_by("id")
        .values_list("task_id", "pk")
    ):
        people[task_id].append(pk)
    for task_id, notice_ids in notices.items():
        # A person's first message after a guard's notice lets the chain go on (or closes it):
        # one intervention per message, however many notices came before it.
        said = people[task_id]
        answers = {said[i] for n in notice_ids if (i := bisect_right(said, n)) < len(said)}
        result[task_id].chain_interventions += len(answers)


def guard_of(notice: str) -> str:
    """The guard a stop notice names ("guard" when it names none)."""
    found = _GUARD.match(notice)
    return found[1] if found else "guard"


def loops_stopped(guards_tripped: Counter[str]) -> int:
    return guards_tripped[LOOP_GUARD]
