"""A reviewer agent checks plan steps (issue 30, ADR 0024): a step another agent did goes to
the task's reviewer as a review request hop (through the hop pipeline, so the guards apply),
and the reviewer's verdict marks the step done, or blocked with what is missing. Turns run
through the engine as the worker would; no model is called by the skills agents."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.auth.models import User

from agents.chains import plan as plan_format
from agents.defaults import create_default_agent
from agents.models import Agent, Chain, Hop, PlanStep, Trigger, Turn, TurnStatus
from agents.services import plans as plan_services
from agents.services import suggestions as suggestion_services
from agents.services import turns as turn_services
from agents.skills import facts_from_context
from agents.skills.review import check_answer
from collab.tasks import documents
from collab.tasks import services as task_services
from collab.tasks.models import Message, Task
from collab.workspaces.models import Workspace
from tests import factories

OPEN_STEP = "List what is still open and what to decide first"


@pytest.fixture
def offsite(workspace: Workspace) -> Task:
    return factories.make_task(
        workspace, title="Team offsite", goal="Plan the team offsite for 12 people on 2027-06-12."
    )


def _approve(workspace: Workspace, bob: User, task: Task, lines: str) -> None:
    bobs = factories.membership_of(workspace, bob)
    suggestion = suggestion_services.propose_suggestion(
        membership=bobs, task=task, find="", replace=f"\n\n## Plan\n{lines}"
    )
    suggestion_services.accept_suggestion(membership=bobs, suggestion=suggestion)


def _document(task: Task) -> str:
    return documents.read_document(task=task).text


def test_the_reviewer_role_is_read_from_the_name_or_the_instructions():
    assert plan_format.is_reviewer(name="Reviewer")
    assert plan_format.is_reviewer(name="Budget-Critic")
    assert plan_format.is_reviewer(name="Ada", instructions="Checks a draft against the task.")
    assert not plan_format.is_reviewer(name="Writer", instructions="Drafts; hands to a reviewer.")
    assert not plan_format.is_reviewer(name="Previewer")


def test_an_answer_that_leaves_out_what_the_step_needs_is_missing_it():
    context = {
        "task": {
            "title": "Team offsite",
            "goal": "Plan the team offsite for 12 people on 2027-06-12.",
            "template": "event_plan",
        },
        "document": "",
        "messages": [],
        "request_date": "2027-05-01",
    }
    facts = facts_from_context(context)
    assert facts.open, "the venue and budget are open"
    own = "Still open: " + ", ".join(v.label for v in facts.open)
    assert check_answer(skill="open_questions", own_answer=own, answer=own, facts=facts).passed

    verdict = check_answer(
        skill="open_questions", own_answer=own, answer="Nothing is open.", facts=facts
    )
    assert not verdict.passed
    assert verdict.missing
    assert verdict.why.startswith("missing the open ")
    invented = check_answer(
        skill="open_questions", own_answer=own, answer=own + " Book it for 99 people.", facts=facts
    )
    assert (invented.passed, invented.invented) == (False, ("99",))
    nothing = check_answer(skill="", own_answer="", answer=own, facts=facts)
    assert not nothing.passed  # no skill covers the step: a person decides


def test_a_step_another_agent_did_goes_to_the_reviewer_whose_check_marks_it_done(
    workspace: Workspace,
    alice: User,
    bob: User,
    offsite: Task,
    run_queued: Callable[[], list[str]],
) -> None:
    writer = create_default_agent(workspace=workspace, owner=alice, name="Writer")
    reviewer = create_default_agent(workspace=workspace, owner=alice, name="Reviewer")
    writer.tasks.add(offsite)
    reviewer.tasks.add(offsite)
    _approve(workspace, bob, offsite, f"- [ ] {OPEN_STEP} (@Writer)\n")

    ran = run_queued()

    assert ran == ["Writer", "Reviewer"]
    step = PlanStep.objects.get()
    step_turn = Turn.objects.get(agent=writer, trigger=Trigger.PLAN)
    review_turn = Turn.objects.get(agent=reviewer)
    assert (review_turn.trigger, review_turn.parent, review_turn.hop_kind) == (
        Trigger.AGENT,
        step_turn,
        "review",
    )
    hop = Hop.objects.get()
    assert (hop.kind, hop.from_agent, hop.to_agent) == ("review", writer, reviewer)
    assert "@Reviewer please check step 1" in hop.text
    assert (step.status, step.done_by_agent, step.done_by_person) == ("done", reviewer, None)
    assert step.verification.startswith("Reviewer's check: covers what")
    assert f"- [x] {OPEN_STEP} (@Writer, done, checked by Reviewer)" in _document(offsite)
    verdict = Message.objects.filter(author_name="Reviewer").get()
    assert "passes my check" in verdict.body
    assert "@Writer" not in verdict.body  # no hop back


def test_a_model_agents_step_is_checked_by_the_reviewer_and_blocked_with_what_is_missing(
    workspace: Workspace,
    alice: User,
    bob: User,
    offsite: Task,
    make_agent: Callable[..., Agent],
    run_queued: Callable[[], list[str]],
) -> None:
    worker = make_agent("Mira", behaviour="echo")  # answers with the request, names nothing open
    worker.tasks.add(offsite)
    reviewer = create_default_agent(workspace=workspace, owner=alice, name="Reviewer")
    reviewer.tasks.add(offsite)
    _approve(workspace, bob, offsite, f"- [ ] {OPEN_STEP} (@Mira)\n")

    assert run_queued() == ["Mira", "Reviewer"]

    step = PlanStep.objects.get()
    assert step.status == "blocked"
    assert step.note.startswith("Reviewer: missing the open ")
    assert step.done_by_agent is None
    assert "(@Mira, blocked, Reviewer: missing the open" in _document(offsite)


def test_without_a_reviewer_the_agents_own_check_decides(
    workspace: Workspace,
    alice: User,
    bob: User,
    offsite: Task,
    run_queued: Callable[[], list[str]],
) -> None:
    writer = create_default_agent(workspace=workspace, owner=alice, name="Writer")
    writer.tasks.add(offsite)
    _approve(workspace, bob, offsite, f"- [ ] {OPEN_STEP} (@Writer)\n")

    assert run_queued() == ["Writer"]

    step = PlanStep.objects.get()
    assert (step.status, step.done_by_agent) == ("done", writer)
    assert step.verification.startswith("own check")
    assert not Hop.objects.exists()


def test_the_review_hop_is_held_by_a_tripped_guard_and_a_stopped_review_blocks_the_step(
    workspace: Workspace,
    alice: User,
    bob: User,
    offsite: Task,
    run_queued: Callable[[], list[str]],
    settings: object,
) -> None:
    writer = create_default_agent(workspace=workspace, owner=alice, name="Writer")
    reviewer = create_default_agent(workspace=workspace, owner=alice, name="Reviewer")
    writer.tasks.add(offsite)
    reviewer.tasks.add(offsite)
    settings.AGENTS_CHAIN_AGENT_SENDS = 0  # type: ignore[attr-defined]  # the rate guard trips
    _approve(workspace, bob, offsite, f"- [ ] {OPEN_STEP} (@Writer)\n")

    assert run_queued() == ["Writer"]  # the review request was held, not dropped

    step = PlanStep.objects.get()
    chain = Chain.objects.get()
    assert chain.status == "tripped"
    assert len(chain.held) == 1
    assert (step.status, step.note) == (
        "doing",
        "waiting for Reviewer's check (held: a person lets the chain go on)",
    )
    assert Message.objects.filter(body__startswith="Stopped this chain of agents").exists()

    # a person lets it go on, then stops the reviewer's turn: the step is blocked for a person
    settings.AGENTS_CHAIN_AGENT_SENDS = 5  # type: ignore[attr-defined]
    bobs = factories.membership_of(workspace, bob)
    task_services.post_message(membership=bobs, task=offsite, body="continue")
    review_turn = Turn.objects.get(agent=reviewer, status=TurnStatus.QUEUED)
    assert review_turn.inputs["review_step"] == step.pk
    turn_services.cancel_turn(membership=bobs, turn=review_turn)
    plan_services.sync_plan_of(task_id=offsite.pk)

    step.refresh_from_db()
    assert (step.status, step.note) == (
        "blocked",
        "the review turn cancelled: a person decides",
    )
