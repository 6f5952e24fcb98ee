"""Agents addressing agents (issue 30), through the real services and the turn engine: each
queued turn is run by calling the engine directly, as the worker would, with the jobs it sends
recorded (``sent_jobs``). The agents answer with scripted fake chat models."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from langchain_core.messages import BaseMessage

from agents import jobs
from agents.defaults import create_default_agent
from agents.engine import runner
from agents.llm import fakes
from agents.llm.embedded import embedded_messages
from agents.models import Action, Agent, Chain, Hop, ModelCall, Question, Trigger, Turn, TurnStatus
from agents.outbox import enqueue
from agents.services import questions as question_services
from agents.services import turns as turn_services
from collab.realtime import broadcast
from collab.tasks import services as task_services
from collab.tasks.models import Message, Task
from collab.workspaces.models import Workspace
from tests import factories
from tests.agents.conftest import SentJob

# Every hop says something new (no loop): the chain runs until its hop budget stops it.
_FRESH = (
    "please draft the venue shortlist",
    "now price the catering options",
    "go ahead and book travel for the speakers",
    "order badges and signage from the printer",
    "confirm the wifi contract with the hotel",
    "write up the risks we found so far",
    "send the invitations to every team",
    "collect dietary needs from everyone",
)


def _me(messages: list[BaseMessage]) -> str:
    found = re.search(r"You are (\w+),", str(messages[0].content))
    return found[1] if found else ""


def _chat_lines(messages: list[BaseMessage]) -> int:
    return sum(1 for line in fakes.prompt_text(messages).splitlines() if line.startswith("- "))


def _reply(text: str) -> str:
    return fakes._decision({"kind": "reply", "text": text})


def _partner(messages: list[BaseMessage]) -> str:
    return "Bee" if _me(messages) == "Ace" else "Ace"


def _ping_pong(messages: list[BaseMessage]) -> str:
    return _reply(f"@{_partner(messages)} {_FRESH[_chat_lines(messages) % len(_FRESH)]}")


def _repeat(messages: list[BaseMessage]) -> str:
    """The same request back and forth, its number changed each time."""
    return _reply(f"@{_partner(messages)} please have a look at section {_chat_lines(messages)}.")


def _hand_off(messages: list[BaseMessage]) -> str:
    if _me(messages) == "Ace":
        return _reply("@Bee please draft the agenda for the kickoff")
    return _reply("Done: the agenda for the kickoff is in the document.")


def _fan_out(messages: list[BaseMessage]) -> str:
    return _reply("@Bee take the venue and @Cy the catering, please")


def _ask_bee(messages: list[BaseMessage]) -> str:
    if _me(messages) == "Ace":
        return fakes._decision({"kind": "ask", "text": "@Bee should plan for which budget?"})
    return _reply("I will plan for the budget you gave.")


def _to_assistant(messages: list[BaseMessage]) -> str:
    return _reply("@Assistant make a checklist for the offsite")


for _name, _behaviour in {
    "chain-to-assistant": _to_assistant,
    "chain-ping-pong": _ping_pong,
    "chain-repeat": _repeat,
    "chain-hand-off": _hand_off,
    "chain-fan-out": _fan_out,
    "chain-ask": _ask_bee,
}.items():
    fakes.register_fake_behaviour(_name, _behaviour)


def _post(workspace: Workspace, user: User, task: Task, body: str) -> Message:
    member = factories.membership_of(workspace, user)
    return task_services.post_message(membership=member, task=task, body=body).message


def _said(task: Task, kind: str = Message.Kind.SYSTEM) -> list[str]:
    return list(task.messages.filter(kind=kind).order_by("id").values_list("body", flat=True))


def test_an_agent_addressing_another_starts_its_turn_linked_to_the_one_that_asked(
    workspace: Workspace,
    bob: User,
    task: Task,
    on_task: Callable[..., Agent],
    run_queued: Callable[[], list[str]],
) -> None:
    on_task("Ace", "chain-hand-off")
    on_task("Bee", "chain-hand-off")

    _post(workspace, bob, task, "@Ace plan the kickoff")
    ran = run_queued()

    assert ran == ["Ace", "Bee"]
    ace_turn, bee_turn = Turn.objects.order_by("id")
    hand_off = task.messages.get(body="@Bee please draft the agenda for the kickoff")
    assert hand_off.kind == Message.Kind.AGENT
    assert hand_off.author_name == "Ace"
    assert bee_turn.trigger == Trigger.AGENT
    assert bee_turn.parent == ace_turn
    assert bee_turn.chain is not None
    assert bee_turn.chain == ace_turn.chain
    assert bee_turn.chain.root_turn == ace_turn
    assert bee_turn.hop_kind == "handoff"
    assert bee_turn.inputs == {"message_ids": [hand_off.pk]}
    assert bee_turn.requested_by == bob  # whose request the chain serves
    assert bee_turn.status == TurnStatus.DONE
    hop = Hop.objects.get()
    assert (hop.from_turn, hop.to_turn, hop.message, hop.kind) == (
        ace_turn,
        bee_turn,
        hand_off,
        "handoff",
    )
    assert (
        _said(task, Message.Kind.AGENT)[-1]
        == "Done: the agenda for the kickoff is in the document."
    )


def test_an_agent_that_repeats_a_persons_request_addresses_nobody(
    workspace: Workspace,
    bob: User,
    task: Task,
    on_task: Callable[..., Agent],
    run_queued: Callable[[], list[str]],
) -> None:
    on_task("Ace", "echo")  # replies "Noted: <the message>"
    on_task("Bee", "echo")

    _post(workspace, bob, task, "@Ace and @Bee plan the kickoff")
    ran = run_queued()

    assert sorted(ran) == ["Ace", "Bee"]  # each once, for bob's message
    assert not Hop.objects.exists()
    assert not Chain.objects.exists()


def test_the_hop_budget_stops_two_agents_that_keep_addressing_each_other(
    workspace: Workspace,
    bob: User,
    task: Task,
    on_task: Callable[..., Agent],
    run_queued: Callable[[], list[str]],
) -> None:
    on_task("Ace", "chain-ping-pong")
    on_task("Bee", "chain-ping-pong")

    _post(workspace, bob, task, "@Ace get the offsite going")
    ran = run_queued()

    # Two agents on the task: a budget of three hops after bob's message.
    assert ran == ["Ace", "Bee", "Ace", "Bee"]
    chain = Chain.objects.get()
    assert chain.budget == 3
    assert chain.hop_count == 3
    assert chain.status == Chain.Status.TRIPPED
    assert chain.guard == "hop budget"
    notice = _said(task)[-1]
    assert notice.startswith("Stopped this chain of agents: the hop budget tripped")
    assert "3 hops so far" in notice
    assert "tokens" in notice
    assert "Ace was not asked" in notice
    assert chain.notice is not None
    assert chain.notice.body == notice
    assert not Turn.objects.filter(status=TurnStatus.QUEUED).exists()


def test_only_a_persons_message_resets_the_budget_of_a_chain_going_on(
    workspace: Workspace,
    bob: User,
    task: Task,
    on_task: Callable[..., Agent],
    run_queued: Callable[[], list[str]],
    django_capture_on_commit_callbacks: Any,
) -> None:
    on_task("Ace", "chain-ping-pong")
    on_task("Bee", "chain-ping-pong")
    _post(workspace, bob, task, "@Ace get the offsite going")
    for _ in range(2):  # Ace, then Bee: two hops; Ace's next turn is queued
        turn = Turn.objects.filter(status=TurnStatus.QUEUED).order_by("id").first()
        assert turn is not None
        with django_capture_on_commit_callbacks(execute=True):
            runner.run_turn(turn_id=turn.pk)

    _post(workspace, bob, task, "Looks good so far.")  # no agent mentioned: no turn of its own
    ran = run_queued()

    # Three more hops after bob's message, whatever came before it.
    assert ran == ["Ace", "Bee", "Ace", "Bee"]
    chain = Chain.objects.get()
    assert (chain.hop_count, chain.guard) == (5, "hop budget")


def test_continue_from_a_person_resets_the_budget_and_starts_the_held_hop(
    workspace: Workspace,
    bob: User,
    task: Task,
    on_task: Callable[..., Agent],
    run_queued: Callable[[], list[str]],
) -> None:
    on_task("Ace", "chain-ping-pong")
    on_task("Bee", "chain-ping-pong")
    _post(workspace, bob, task, "@Ace get the offsite going")
    run_queued()
    chain = Chain.objects.get()
    last_bee = Turn.objects.filter(agent__name="Bee").order_by("-id").first()

    _post(workspace, bob, task, "Continue.")

    resumed = Turn.objects.get(status=TurnStatus.QUEUED)
    assert resumed.agent.name == "Ace"
    assert resumed.parent == last_bee
    chain.refresh_from_db()
    assert chain.status == Chain.Status.ACTIVE
    assert chain.held == []
    assert run_queued() == ["Ace", "Bee", "Ace", "Bee"]  # a new budget of three hops
    chain.refresh_from_db()
    assert chain.status == Chain.Status.TRIPPED
    assert chain.hop_count == 7


def test_the_rate_limit_stops_an_agent_that_addresses_others_too_often(
    workspace: Workspace,
    bob: User,
    task: Task,
    on_task: Callable[..., Agent],
    run_queued: Callable[[], list[str]],
    settings: Any,
) -> None:
    settings.AGENTS_CHAIN_HOP_BUDGET = 10
    settings.AGENTS_CHAIN_AGENT_SENDS = 1  # one message addressing agents a minute, each
    on_task("Ace", "chain-ping-pong")
    on_task("Bee", "chain-ping-pong")

    _post(workspace, bob, task, "@Ace get the offsite going")
    ran = run_queued()

    assert ran == ["Ace", "Bee", "Ace"]  # Ace's second message to Bee is refused
    chain = Chain.objects.get()
    assert (chain.budget, chain.hop_count, chain.guard) == (10, 2, "rate limit")
    assert "the rate limit tripped" in _said(task)[-1]


def test_the_loop_detector_stops_a_request_going_back_and_forth_reworded(
    workspace: Workspace,
    bob: User,
    task: Task,
    on_task: Callable[..., Agent],
    run_queued: Callable[[], list[str]],
) -> None:
    on_task("Ace", "chain-repeat")
    on_task("Bee", "chain-repeat")
    on_task("Cy", "echo")  # a third agent: a budget of four, which the loop beats

    _post(workspace, bob, task, "@Ace look at the plan")
    ran = run_queued()

    # Ace asks for a review, Bee answers it back, Ace asks again: the third hop is refused.
    assert ran == ["Ace", "Bee", "Ace"]
    assert list(Hop.objects.values_list("kind", flat=True)) == ["review", "answer"]
    chain = Chain.objects.get()
    assert chain.guard == "loop detector"
    assert chain.hop_count == 2
    assert "the same review came back" in _said(task)[-1]


def test_stop_cancels_every_pending_turn_of_the_chain(
    workspace: Workspace,
    bob: User,
    task: Task,
    on_task: Callable[..., Agent],
    run_queued: Callable[[], list[str]],
    django_capture_on_commit_callbacks: Any,
) -> None:
    on_task("Ace", "chain-fan-out")
    on_task("Bee", "chain-ping-pong")
    on_task("Cy", "chain-ping-pong")
    _post(workspace, bob, task, "@Ace split the work")
    ace_turn = Turn.objects.get()
    with django_capture_on_commit_callbacks(execute=True):
        runner.run_turn(turn_id=ace_turn.pk)
    bee_turn = Turn.objects.get(agent__name="Bee")
    cy_turn = Turn.objects.get(agent__name="Cy")
    assert bee_turn.parent == cy_turn.parent == ace_turn

    turn_services.cancel_turn(membership=factories.membership_of(workspace, bob), turn=bee_turn)

    ace_turn.refresh_from_db()
    assert set(Turn.objects.filter(chain=ace_turn.chain).values_list("status", flat=True)) == {
        TurnStatus.DONE,  # Ace's, already over
        TurnStatus.CANCELLED,
    }
    assert Turn.objects.get(pk=cy_turn.pk).error == "Stopped by bob."
    assert Chain.objects.get().status == Chain.Status.STOPPED
    assert _said(task)[-1] == "bob stopped this chain of agents: 2 turns of Bee, Cy cancelled."
    assert run_queued() == []


def test_a_question_of_the_chain_holds_its_hops_until_a_person_answers(
    workspace: Workspace,
    bob: User,
    task: Task,
    on_task: Callable[..., Agent],
    run_queued: Callable[[], list[str]],
) -> None:
    on_task("Ace", "chain-ask")
    on_task("Bee", "chain-ask")
    _post(workspace, bob, task, "@Ace plan the budget")

    assert run_queued() == ["Ace"]
    question = Question.objects.get()
    assert question.status == Question.Status.OPEN
    assert _said(task)[-1] == (
        "Bee will take its turn once a person answers the open question of this chain of agents."
    )
    assert not Turn.objects.filter(agent__name="Bee").exists()

    question_services.answer_question(
        membership=factories.membership_of(workspace, bob), question=question, answer="5000 EUR"
    )

    bee_turn = Turn.objects.get(agent__name="Bee")
    ace_resumed = Turn.objects.get(trigger=Trigger.ANSWER)
    assert bee_turn.hop_kind == "question"
    assert bee_turn.parent == question.turn
    assert ace_resumed.chain == bee_turn.chain == question.turn.chain  # type: ignore[union-attr]
    assert ace_resumed.parent == question.turn
    assert Chain.objects.get().held == []


def test_a_failed_hand_off_goes_back_to_the_agent_that_handed_it_over(
    workspace: Workspace,
    bob: User,
    task: Task,
    on_task: Callable[..., Agent],
    run_queued: Callable[[], list[str]],
    sent_jobs: list[SentJob],
) -> None:
    on_task("Ace", "chain-hand-off")
    on_task("Bee", "nonsense")  # an unknown behaviour: Bee's turn fails at once
    _post(workspace, bob, task, "@Ace plan the kickoff")
    assert run_queued() == ["Ace", "Bee"]
    (failure,) = [job for job in sent_jobs if job.name == enqueue.CHAIN_FAILURE]
    bee_turn = Turn.objects.get(agent__name="Bee")
    assert bee_turn.status == TurnStatus.FAILED

    started = jobs.chain_failure_job(*failure.args)
    jobs.chain_failure_job(*failure.args)  # redelivered: reported once

    ace_again = Turn.objects.get(pk=started[0])
    assert ace_again.agent.name == "Ace"
    assert ace_again.hop_kind == "error"
    assert ace_again.parent == bee_turn
    assert Hop.objects.filter(kind="error").count() == 1


def test_a_skills_agent_addressed_by_another_agent_answers_that_agents_request(
    workspace: Workspace,
    alice: User,
    bob: User,
    task: Task,
    on_task: Callable[..., Agent],
    run_queued: Callable[[], list[str]],
) -> None:
    """The default install's agent (skills, no model call) takes a hop like any other."""
    assistant = create_default_agent(workspace=workspace, owner=alice)
    assistant.tasks.add(task)
    on_task("Ace", "chain-to-assistant")

    _post(workspace, bob, task, "@Ace get us organised")
    ran = run_queued()

    assert ran == ["Ace", "Assistant"]
    turn = Turn.objects.get(agent=assistant)
    assert turn.context["request"] == "@Assistant make a checklist for the offsite"
    assert turn.context["asked_by"] == "Ace"
    assert turn.hop_kind == "handoff"
    assert not ModelCall.objects.filter(turn=turn).exists()  # a skill answered
    answer = Action.objects.get(turn=turn, kind="reply")
    assert answer.status == Action.Status.APPLIED
    assert "- [ ]" in Message.objects.get(pk=answer.result["message_id"]).body


def test_the_chat_shows_each_hop_by_type_live_and_after_a_reload(
    workspace: Workspace,
    bob: User,
    task: Task,
    on_task: Callable[..., Agent],
    run_queued: Callable[[], list[str]],
    as_user: Callable[[User], Client],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    published: list[dict[str, Any]] = []
    real = broadcast.chat_message

    def capture(message_id: int, **kwargs: Any) -> None:
        published.append({"id": message_id, **(kwargs.get("extras") or {})})
        real(message_id, **kwargs)

    monkeypatch.setattr(broadcast, "chat_message", capture)
    on_task("Ace", "chain-hand-off")
    on_task("Bee", "chain-hand-off")
    _post(workspace, bob, task, "@Ace plan the kickoff")
    run_queued()
    hand_off = task.messages.get(body="@Bee please draft the agenda for the kickoff")

    page = as_user(bob).get(reverse("tasks:detail", args=[task.pk])).content.decode()

    live = next(event for event in published if event["id"] == hand_off.pk)
    assert live["hops"] == [{"kind": "handoff", "label": "Hand-off", "to": "Bee"}]
    assert page.count('data-testid="hops"') == 1
    assert "Hand-off → Bee" in page


def test_the_embedded_model_is_told_which_agent_asked(task: Task) -> None:
    context = {
        "agent": "Bee",
        "task": {"title": task.title, "goal": ""},
        "document": "",
        "messages": [
            {"author": "bob", "kind": "human", "body": "@Ace plan the kickoff"},
            {"author": "Ace", "kind": "agent", "body": "@Bee please draft the agenda"},
        ],
        "request": "@Bee please draft the agenda",
        "requested_by": "bob",
        "asked_by": "Ace",
    }

    user = str(embedded_messages(context)[-1].content)

    assert "Ace asks you: please draft the agenda" in user
    assert "Reply to Ace." in user
    assert user.count("please draft the agenda") == 1  # the request, not also a chat line


def test_a_superuser_sees_a_chain_and_its_hops_in_the_admin(
    workspace: Workspace,
    bob: User,
    task: Task,
    on_task: Callable[..., Agent],
    run_queued: Callable[[], list[str]],
    as_user: Callable[[User], Client],
) -> None:
    on_task("Ace", "chain-hand-off")
    on_task("Bee", "chain-hand-off")
    _post(workspace, bob, task, "@Ace plan the kickoff")
    run_queued()
    chain = Chain.objects.get()
    admin = factories.make_user("root")
    admin.is_staff = admin.is_superuser = True
    admin.save(update_fields=["is_staff", "is_superuser"])

    listing = as_user(admin).get(reverse("admin:agents_chain_changelist"))
    page = as_user(admin).get(reverse("admin:agents_chain_change", args=[chain.pk]))

    assert listing.status_code == page.status_code == 200
    assert "@Bee please draft the agenda for the kickoff" in page.content.decode()


def test_a_hop_that_joins_a_queued_turn_brings_it_into_the_chain(
    workspace: Workspace,
    bob: User,
    task: Task,
    on_task: Callable[..., Agent],
    django_capture_on_commit_callbacks: Any,
) -> None:
    on_task("Ace", "chain-hand-off")
    on_task("Bee", "chain-hand-off")
    _post(workspace, bob, task, "@Ace plan the kickoff")
    _post(workspace, bob, task, "@Bee are you there?")  # Bee's turn waits in the queue
    ace_turn, bee_turn = Turn.objects.order_by("id")

    with django_capture_on_commit_callbacks(execute=True):
        runner.run_turn(turn_id=ace_turn.pk)  # Ace hands off to Bee: the hop joins Bee's turn

    ace_turn.refresh_from_db()
    bee_turn.refresh_from_db()
    assert Turn.objects.filter(agent__name="Bee").count() == 1
    assert bee_turn.chain == ace_turn.chain
    assert bee_turn.parent == ace_turn
    assert bee_turn.hop_kind == "handoff"
    assert Hop.objects.get().to_turn == bee_turn
    turn_services.cancel_turn(membership=factories.membership_of(workspace, bob), turn=ace_turn)
    bee_turn.refresh_from_db()
    assert bee_turn.status == TurnStatus.CANCELLED  # the chain's Stop reaches it


def test_a_hop_never_joins_a_queued_turn_of_another_chain(
    workspace: Workspace,
    bob: User,
    task: Task,
    on_task: Callable[..., Agent],
    django_capture_on_commit_callbacks: Any,
) -> None:
    on_task("Ace", "chain-hand-off")
    bee = on_task("Bee", "chain-hand-off")
    _post(workspace, bob, task, "@Ace plan the kickoff")
    ace_turn = Turn.objects.get()
    other = Chain.objects.create(task=task, budget=3)
    waiting = Turn.objects.create(agent=bee, task=task, trigger=Trigger.AGENT, chain=other)

    with django_capture_on_commit_callbacks(execute=True):
        runner.run_turn(turn_id=ace_turn.pk)

    ace_turn.refresh_from_db()
    handed = Turn.objects.get(agent=bee, chain=ace_turn.chain)
    assert handed != waiting
    assert handed.parent == ace_turn
    waiting.refresh_from_db()
    assert (waiting.chain, waiting.inputs) == (other, {})


def test_two_relay_agents_loop_until_the_loop_detector_stops_them(
    workspace: Workspace,
    bob: User,
    task: Task,
    on_task: Callable[..., Agent],
    run_queued: Callable[[], list[str]],
) -> None:
    """The built-in ``relay`` fake behaviour the browser test uses."""
    on_task("Ace", "relay")
    on_task("Bee", "relay")
    on_task("Cy", "echo")

    _post(workspace, bob, task, "@Ace and then @Bee, look at this")
    ran = run_queued()

    assert ran == ["Ace", "Bee"]  # Bee's "@Ace please have another look." is Ace's, back
    chain = Chain.objects.get()
    assert (chain.guard, chain.hop_count) == ("loop detector", 1)
