"""The shared plan (issue 30, ADR 0024): a person asks the coordinator to split the task into
steps; its plan is a suggestion; accepting it approves it; the agents take their steps one
turn each and their own check decides "done"; people tick and reassign steps, in the document
or through the panel, and the document follows. Turns run through the engine, no model."""

from __future__ import annotations

from collections.abc import Callable

from django.contrib.auth.models import User
from django.test import Client

from agents.chains import plan as plan_format
from agents.defaults import create_default_agent
from agents.models import ModelCall, Plan, PlanStep, Suggestion, Trigger, Turn
from agents.review.metrics import compute_metrics
from agents.services import plans as plan_services
from agents.services import suggestions as suggestion_services
from agents.services import turns as turn_services
from collab.tasks import documents
from collab.tasks import services as task_services
from collab.tasks.models import Task
from collab.workspaces.models import Workspace
from tests import factories


def test_a_plan_line_reads_back_as_it_was_written():
    line = plan_format.render(text="Book the venue", assignee="Writer", status="done", note="x")
    parsed = plan_format.parse_line(3, line)
    assert isinstance(parsed, plan_format.Line)
    assert (parsed.text, parsed.assignee, parsed.status, parsed.note) == (
        "Book the venue",
        "Writer",
        "done",
        "x",
    )


def test_the_box_wins_over_the_written_status():
    ticked = plan_format.parse_line(1, "- [x] Book the venue (@Writer, todo)")
    unticked = plan_format.parse_line(1, "- [ ] Book the venue (@Writer, done, checked by bob)")
    assert isinstance(ticked, plan_format.Line)
    assert ticked.status == "done"
    assert isinstance(unticked, plan_format.Line)
    assert (unticked.status, unticked.note) == (
        "todo",
        "",
    )


def test_bad_lines_of_the_plan_are_reported_and_other_sections_are_not_read():
    document = (
        "# Offsite\n- [ ] not in the plan\n## Plan\n- [ ] Book the venue (@Ana)\n"
        "Call the caterer first\n- [ ] Send invites (@Ben, someday)\n## Notes\n- [ ] a note\n"
    )
    section = plan_format.parse(document)
    assert [s.text for s in section.steps] == ["Book the venue"]
    assert [(p.number, p.raw) for p in section.problems] == [
        (5, "Call the caterer first"),
        (6, "- [ ] Send invites (@Ben, someday)"),
    ]
    assert "unknown status" in section.problems[1].reason


def test_a_parenthesis_that_is_no_tail_stays_in_the_text():
    parsed = plan_format.parse_line(1, "- [ ] Buy snacks (crisps and fruit)")
    assert isinstance(parsed, plan_format.Line)
    assert (parsed.text, parsed.assignee, parsed.status) == (
        "Buy snacks (crisps and fruit)",
        "",
        "todo",
    )


def test_a_request_to_split_the_work_asks_for_a_plan_and_a_draft_does_not():
    assert plan_format.asks_for_plan("@Coordinator split this into steps")
    assert plan_format.asks_for_plan("who does what?")
    assert not plan_format.asks_for_plan("@Writer draft the plan")


def test_agents_get_steps_their_skills_can_check_and_people_the_tasks_own_items():
    steps = plan_format.plan_steps(
        ["Book the venue", "Send invites"], agents=["Writer"], people=["ana"]
    )
    assert steps == [
        (plan_format.AGENT_STEPS[0], "Writer"),
        ("Book the venue", "ana"),
        ("Send invites", "ana"),
    ]


def test_steps_go_to_the_task_workers_in_turn_and_never_to_invented_names():
    assert plan_format.assign(["a", "b", "c"], ["Writer", "alice"]) == [
        ("a", "Writer"),
        ("b", "alice"),
        ("c", "Writer"),
    ]
    assert plan_format.assign(["a"], []) == [("a", "")]


def _document(task: Task) -> str:
    return documents.read_document(task=task).text


def test_the_coordinator_proposes_a_plan_a_person_accepts_and_the_agent_does_its_step(
    workspace: Workspace,
    alice: User,
    bob: User,
    task: Task,
    run_queued: Callable[[], list[str]],
) -> None:
    coordinator = create_default_agent(workspace=workspace, owner=alice, name="Coordinator")
    writer = create_default_agent(workspace=workspace, owner=alice, name="Writer")
    coordinator.tasks.add(task)
    writer.tasks.add(task)
    bobs = factories.membership_of(workspace, bob)

    task_services.post_message(
        membership=bobs, task=task, body="@Coordinator split this into steps"
    )
    assert run_queued() == ["Coordinator"]
    proposal = Suggestion.objects.get(agent=coordinator)
    assert plan_format.HEADING in proposal.replace
    assert not Plan.objects.exists()  # nothing starts before a person approves

    suggestion_services.accept_suggestion(membership=bobs, suggestion=proposal)

    plan = Plan.objects.get(task=task)
    assert (plan.status, plan.coordinator, plan.approved_by) == ("approved", coordinator, bob)
    steps = list(plan.steps.order_by("index"))
    assert {s.assignee_name for s in steps} == {"Writer", "bob"}  # the task's own, in turn
    first = steps[0]
    assert (first.agent, first.status) == (writer, "doing")
    assert "(@Writer, doing)" in _document(task)

    ran = run_queued()

    assert ran
    assert set(ran) == {"Writer"}
    turns = Turn.objects.filter(agent=writer, trigger=Trigger.PLAN)
    assert turns.count() == len([s for s in steps if s.agent == writer])
    done = PlanStep.objects.get(agent=writer)  # the agent's step: one its skills can check
    assert (done.status, done.done_by_agent, done.done_by_person) == ("done", writer, None)
    assert done.verification.startswith("own check")
    assert f"- [x] {done.text} (@Writer, done, checked by Writer)" in _document(task)
    for step in PlanStep.objects.filter(person=bob):
        assert step.status == "todo"  # people's steps wait for them
    assert not ModelCall.objects.exists()

    plan_services.tick_step(membership=bobs, step=PlanStep.objects.get(index=1), done=True)
    figures = compute_metrics(Task.objects.filter(pk=task.pk))[task.pk]
    assert (figures.plan_steps, figures.steps_done_by_agents, figures.steps_done_by_people) == (
        len(steps),
        1,
        1,
    )
    assert figures.step_share_people == figures.step_share_agents == 0.5


def test_a_person_ticks_and_reassigns_steps_and_the_document_follows(
    workspace: Workspace,
    alice: User,
    bob: User,
    carol: User,
    mallory: User,
    task: Task,
    run_queued: Callable[[], list[str]],
) -> None:
    writer = create_default_agent(workspace=workspace, owner=alice, name="Writer")
    writer.tasks.add(task)
    bobs = factories.membership_of(workspace, bob)
    before = _document(task)
    suggestion = suggestion_services.propose_suggestion(
        membership=bobs,
        task=task,
        find="",
        replace="\n\n## Plan\n- [ ] Book the venue (@bob)\n- [ ] Tell @nobody\nsome notes\n",
    )
    suggestion_services.accept_suggestion(membership=bobs, suggestion=suggestion)
    plan = Plan.objects.get(task=task)
    assert [p["text"] for p in plan.problems] == ["some notes"]
    assert "some notes" in _document(task)  # reported, never dropped
    step = plan.steps.get(index=0)

    plan_services.tick_step(membership=bobs, step=step, done=True)
    step.refresh_from_db()
    assert (step.status, step.done_by_person) == ("done", bob)
    assert "- [x] Book the venue (@bob, done, checked by bob)" in _document(task)

    second = plan.steps.get(index=1)
    client = Client()
    client.force_login(bob)
    url = f"/t/{task.pk}/plan/{second.pk}/assign/"
    assert client.post(url, {"assignee": "agent:999"}).status_code == 400
    assert client.post(url, {"assignee": f"agent:{writer.pk}"}).status_code in (204, 302)
    second.refresh_from_db()
    assert (second.agent, second.status) == (writer, "doing")  # the Writer picks it up
    assert "- [ ] Tell @nobody (@Writer, doing)" in _document(task)
    assert _document(task).startswith(before)

    for outsider in (carol, mallory):
        other = Client()
        other.force_login(outsider)
        response = other.post(f"/t/{task.pk}/plan/{step.pk}/tick/", {"done": "0"})
        assert response.status_code == (403 if outsider == carol else 404)
    step.refresh_from_db()
    assert step.status == "done"


def test_a_tick_in_the_document_is_a_person_deciding_and_is_read_back(
    workspace: Workspace, bob: User, task: Task
) -> None:
    bobs = factories.membership_of(workspace, bob)
    suggestion = suggestion_services.propose_suggestion(
        membership=bobs, task=task, find="", replace="\n## Plan\n- [ ] Book the venue (@bob)\n"
    )
    suggestion_services.accept_suggestion(membership=bobs, suggestion=suggestion)
    task_obj = Task.objects.get(pk=task.pk)
    documents.replace_in_document(
        task=task_obj,
        find="- [ ] Book the venue (@bob)",  # as written: a person's line is kept as it is
        replace="- [x] Book the venue (@bob)",
        author_label="bob",
        author=bob,
    )
    plan_services.sync_plan_of(task_id=task.pk)
    step = PlanStep.objects.get()
    assert step.status == "done"
    assert step.verification == "ticked in the document"


def test_a_step_whose_turn_is_stopped_is_blocked_for_a_person_and_starts_nothing_twice(
    workspace: Workspace, alice: User, bob: User, task: Task
) -> None:
    writer = create_default_agent(workspace=workspace, owner=alice, name="Writer")
    writer.tasks.add(task)
    bobs = factories.membership_of(workspace, bob)
    suggestion = suggestion_services.propose_suggestion(
        membership=bobs,
        task=task,
        find="",
        replace="\n## Plan\n- [ ] Sum up the task (@Writer)\n- [ ] List the risks (@Writer)\n",
    )
    suggestion_services.accept_suggestion(membership=bobs, suggestion=suggestion)
    first = PlanStep.objects.get(index=0)
    assert first.status == "doing"
    assert Turn.objects.filter(agent=writer, trigger=Trigger.PLAN).count() == 1  # one at a time

    turn_services.cancel_turn(membership=bobs, turn=first.turn)  # a person's Stop
    plan_services.sync_plan_of(task_id=task.pk)

    first.refresh_from_db()
    assert (first.status, first.note) == ("blocked", "its turn cancelled: a person decides")
    assert "(@Writer, blocked, its turn cancelled: a person decides)" in _document(task)
    second = PlanStep.objects.get(index=1)
    assert second.status == "doing"  # the Writer goes on with its next step
    assert plan_services.step_turn_finished(turn=first.turn) is None  # a late end changes nothing


def test_a_plan_step_never_joins_a_queued_mention_of_its_agent(db):
    owner = factories.make_user("ana")
    workspace = factories.make_workspace(owner)
    task = factories.make_task(workspace, "Offsite")
    agent = create_default_agent(workspace=workspace, owner=owner)
    mention = turn_services.start_turn(
        agent=agent, task=task, trigger=Trigger.MENTION, inputs={"prompt": "answer me"}
    )
    step = turn_services.start_turn(
        agent=agent, task=task, trigger=Trigger.PLAN, inputs={"plan_step": 1, "prompt": "step"}
    )
    assert step.pk != mention.pk
    mention.refresh_from_db()
    assert mention.inputs["prompt"] == "answer me"
    assert step.inputs["plan_step"] == 1
