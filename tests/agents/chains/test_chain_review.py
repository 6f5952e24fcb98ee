"""Review of a chain (issue 30): the replay and trace pages show each chain as one tree of
turns with its hops in order, and the process metrics count its hops, guards, loops and the
people who stepped in. Owners and staff only; everything shown is escaped."""

from __future__ import annotations

import re
from collections.abc import Callable
from html import escape

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from langchain_core.messages import BaseMessage

from agents.llm import fakes
from agents.models import Agent, Chain, Turn
from agents.review.metrics import compute_metrics
from agents.services import turns as turn_services
from collab.tasks import services as task_services
from collab.tasks.models import Task
from collab.workspaces.models import Workspace
from tests import factories

_SHOUT = "<b>check</b> the budget & dates"


def _me(messages: list[BaseMessage]) -> str:
    found = re.search(r"You are (\w+),", str(messages[0].content))
    return found[1] if found else ""


def _review_flow(messages: list[BaseMessage]) -> str:
    if _me(messages) == "Writer":
        return fakes._decision({"kind": "reply", "text": f"@Checker {_SHOUT}"})
    return fakes._decision({"kind": "reply", "text": "Two things are missing: dates, budget."})


def _echo_back(messages: list[BaseMessage]) -> str:
    partner = "Checker" if _me(messages) == "Writer" else "Writer"
    return fakes._decision({"kind": "reply", "text": f"@{partner} please look at it again."})


fakes.register_fake_behaviour("review-flow", _review_flow)
fakes.register_fake_behaviour("review-loop", _echo_back)


def _post(workspace: Workspace, user: User, task: Task, body: str) -> None:
    member = factories.membership_of(workspace, user)
    task_services.post_message(membership=member, task=task, body=body)


def test_the_replay_shows_the_chain_as_one_tree_with_its_hops_in_order(
    workspace: Workspace,
    alice: User,
    bob: User,
    task: Task,
    on_task: Callable[..., Agent],
    run_queued: Callable[[], list[str]],
    as_user: Callable[[User], Client],
) -> None:
    on_task("Writer", "review-flow")
    on_task("Checker", "review-flow")
    _post(workspace, bob, task, "@Writer draft the plan and have it checked")
    assert run_queued() == ["Writer", "Checker"]
    writer_turn, checker_turn = Turn.objects.order_by("id")

    page = as_user(alice).get(reverse("review:replay", args=[task.pk])).content.decode()

    tree = page[page.index('data-testid="chain-tree"') :]
    assert tree.index(f'data-turn="{writer_turn.pk}"') < tree.index(
        f'data-turn="{checker_turn.pk}"'
    )
    # the reviewer's turn hangs under the writer's: its <li> opens before the writer's closes
    writer_li = tree[tree.index(f'data-turn="{writer_turn.pk}"') :]
    assert writer_li.index(f'data-turn="{checker_turn.pk}"') < writer_li.index("</li>")
    assert "Mentioned by bob" in tree
    assert "Hand-off" in tree or "Review request" in tree
    assert escape(f"@Checker {_SHOUT}") in page
    assert _SHOUT not in page  # escaped, never raw
    assert "Hop 1 of chain" in page  # the replay's timeline has the hop
    assert "chains 1, " in page
    assert "1 hop (1.0 per chain)" in page


def test_the_trace_page_of_a_turn_shows_its_chain_with_that_turn_marked(
    workspace: Workspace,
    alice: User,
    bob: User,
    task: Task,
    on_task: Callable[..., Agent],
    run_queued: Callable[[], list[str]],
    as_user: Callable[[User], Client],
) -> None:
    on_task("Writer", "review-flow")
    on_task("Checker", "review-flow")
    _post(workspace, bob, task, "@Writer draft it and have it checked")
    run_queued()
    checker_turn = Turn.objects.get(agent__name="Checker")

    page = as_user(alice).get(reverse("review:turn", args=[checker_turn.pk])).content.decode()

    assert 'data-testid="chain-tree"' in page
    assert f'class="chain-node current" data-turn="{checker_turn.pk}"' in page


@pytest.mark.parametrize(("who", "status"), [("bob", 403), ("mallory", 404)])
def test_only_owners_and_staff_see_a_chain(
    workspace: Workspace,
    bob: User,
    task: Task,
    on_task: Callable[..., Agent],
    run_queued: Callable[[], list[str]],
    as_user: Callable[[User], Client],
    who: str,
    status: int,
    request: pytest.FixtureRequest,
) -> None:
    on_task("Writer", "review-flow")
    on_task("Checker", "review-flow")
    _post(workspace, bob, task, "@Writer draft it and have it checked")
    run_queued()
    checker_turn = Turn.objects.get(agent__name="Checker")
    reader = request.getfixturevalue(who)

    replay = as_user(reader).get(reverse("review:replay", args=[task.pk]))
    trace = as_user(reader).get(reverse("review:turn", args=[checker_turn.pk]))

    assert replay.status_code == trace.status_code == status


def test_metrics_count_hops_guards_loops_and_peoples_interventions(
    workspace: Workspace,
    alice: User,
    bob: User,
    task: Task,
    on_task: Callable[..., Agent],
    run_queued: Callable[[], list[str]],
    as_user: Callable[[User], Client],
) -> None:
    on_task("Writer", "review-loop")
    on_task("Checker", "review-loop")
    on_task("Third", "echo")  # three agents: a budget of four, which the loop beats
    _post(workspace, bob, task, "@Writer draft the plan")
    run_queued()  # Writer, Checker, Writer: the same request back again trips the loop detector
    assert Chain.objects.get().guard == "loop detector"
    _post(workspace, bob, task, "continue")  # a person lets it go on: it loops again
    run_queued()
    turn_services.cancel_turn(
        membership=factories.membership_of(workspace, bob),
        turn=Turn.objects.filter(agent__name="Writer").order_by("-id")[0],
    )

    metrics = compute_metrics(workspace.tasks.all())[task.pk]

    chain = Chain.objects.get()
    assert (metrics.chains, metrics.hops) == (1, chain.hop_count)
    assert metrics.guards_tripped == {"loop detector": 2}
    assert metrics.loops_stopped == 2
    assert metrics.chain_interventions == 1  # "continue"
    assert metrics.agent_work == Turn.objects.filter(actions__status="applied").distinct().count()
    assert metrics.people_work == 2  # bob's two messages
    page = as_user(alice).get(reverse("review:workspace_home", args=[workspace.pk]))
    assert "loop detector 2" in page.content.decode()
