"""A turn's trace (/review/turns/<id>/) withholds the requester's unshared memory from
everyone but its owner, staff included; staff see it only where the person allowed admins to
read their memory, and each such read is audited."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from agents.memory import services as memory_services
from agents.memory.models import MemoryItem, Scope
from agents.memory.selectors import retrieve_for_turn
from agents.models import Agent, Turn
from agents.review.privacy import MEMORY_WITHHELD
from collab.audit.models import AuditEvent
from collab.tasks.models import Task
from tests.review.conftest import make_call, make_turn

pytestmark = pytest.mark.django_db

SECRET = "Bob is recovering from knee surgery and skips stairs"


def remember(owner: User, task: Task, text: str, **fields: Any) -> MemoryItem:
    # Pinned: always given to the person's turns, whatever the request says.
    return MemoryItem.objects.create(
        owner=owner, text=text, source_task_id=task.pk, pinned=True, **fields
    )


def turn_with_memory(agent: Agent, task: Task, requester: User) -> Turn:
    """A turn whose stored context and prompt carry the memory retrieval gave it, the way a
    real turn stores them (lines naming whose each item is, and the items as data)."""
    retrieved = retrieve_for_turn(
        [requester], task.workspace, "plan the offsite", requester_id=requester.pk
    )
    lines = [str(item) for item in retrieved.items]
    context = {
        "memory": lines,
        "memory_item_ids": retrieved.item_ids,
        "memory_items": [{**asdict(f), "kinds": list(f.kinds)} for f in retrieved.facts],
    }
    turn = make_turn(agent, task, requested_by=requester, context=context)
    prompt = "What the people involved prefer:\n" + "\n".join(f"* {line}" for line in lines)
    make_call(turn, prompt=prompt, response=f'{{"reply": "Noted: {SECRET}"}}')
    return turn


def trace_html(client: Any, turn: Turn) -> str:
    response = client.get(reverse("review:turn", args=[turn.pk]))
    assert response.status_code == 200
    return response.content.decode()


def test_a_workspace_owner_does_not_read_the_requesters_unshared_memory_in_a_trace(
    as_user, agent, task, alice, bob
):
    remember(bob, task, SECRET)
    remember(alice, task, "Use metric units", scope=Scope.TEAM, workspace=task.workspace)
    turn = turn_with_memory(agent, task, bob)
    assert SECRET in str(turn.context)  # the trace holds it; the page must not show it

    html = trace_html(as_user(alice), turn)

    assert SECRET not in html
    assert "Bob is recovering" not in html
    assert MEMORY_WITHHELD in html
    assert "Use metric units" in html  # team memory is the workspace's
    assert not AuditEvent.objects.filter(action=AuditEvent.Action.MEMORY_ADMIN_ACCESS).exists()


def test_an_item_its_owner_shared_with_the_workspace_stays_in_the_trace(
    as_user, agent, task, alice, bob
):
    remember(bob, task, "Bob writes in British English", shared=True)
    turn = turn_with_memory(agent, task, bob)

    assert "Bob writes in British English" in trace_html(as_user(alice), turn)


def test_the_owner_of_the_memory_reads_it_in_the_trace_of_their_own_turn(
    as_user, agent, task, alice
):
    remember(alice, task, "Alice is vegetarian")
    turn = turn_with_memory(agent, task, alice)

    html = trace_html(as_user(alice), turn)

    assert "Alice is vegetarian" in html
    assert MEMORY_WITHHELD not in html


def test_staff_do_not_read_it_either_unless_the_person_allowed_it(as_user, agent, task, bob, staff):
    remember(bob, task, SECRET)
    turn = turn_with_memory(agent, task, bob)

    html = trace_html(as_user(staff), turn)

    assert SECRET not in html
    assert MEMORY_WITHHELD in html
    assert not AuditEvent.objects.filter(action=AuditEvent.Action.MEMORY_ADMIN_ACCESS).exists()


def test_staff_read_it_where_the_person_allowed_it_and_the_read_is_audited(
    as_user, agent, task, bob, staff
):
    remember(bob, task, SECRET)
    memory_services.update_settings(
        user=bob, enabled=True, review_mode="auto", admin_access_allowed=True
    )
    turn = turn_with_memory(agent, task, bob)

    html = trace_html(as_user(staff), turn)

    assert SECRET in html
    event = AuditEvent.objects.get(action=AuditEvent.Action.MEMORY_ADMIN_ACCESS)
    assert (event.actor, event.data["subject_user_id"]) == (staff, bob.pk)
    assert event.data["where"] == f"trace of turn {turn.pk}"


def test_a_trace_line_without_its_item_is_withheld_unless_it_names_the_team_or_the_viewer(
    as_user, agent, task, alice
):
    # Traces stored before the items were kept beside the lines.
    turn = make_turn(
        agent,
        task,
        context={
            "memory": [
                "(bob's preference) Bob hates mornings",
                "(alice's preference) Alice likes lists",
                "(team preference) Short",
            ]
        },
    )

    html = trace_html(as_user(alice), turn)

    assert "Bob hates mornings" not in html
    assert "Alice likes lists" in html
    assert "Short" in html
