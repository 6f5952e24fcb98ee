"""Tasks start from a task template (agents/task_templates) or free-form."""

from __future__ import annotations

from datetime import date

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from agents.policies.adapter import situation_from_context
from agents.policies.templates import load_templates
from collab.tasks.models import Task
from collab.tasks.services import create_task
from collab.tasks.task_templates import template_choices
from tests.factories import membership_of

pytestmark = pytest.mark.django_db

SHIPPED = {
    "travel_plan",
    "related_work",
    "meeting_brief",
    "blog_post",
    "lesson_plan",
    # added with the skills (issue 27)
    "announcement",
    "event_plan",
    "job_advert",
    "newsletter",
    "project_plan",
    "proposal",
    "report",
    "runbook",
}


def test_the_create_form_offers_free_form_and_every_shipped_template(as_user, workspace, bob):
    response = as_user(bob).get(reverse("tasks:list", args=[workspace.pk]))

    assert b"Start from a template" in response.content
    assert b'<option value="" selected>Free-form</option>' in response.content
    for kind in SHIPPED:
        assert f'<option value="{kind}"'.encode() in response.content
    assert b"Travel plan: A day-by-day itinerary for a trip, within a budget." in (response.content)
    assert {kind for kind, _ in template_choices()} == SHIPPED | {""}


def test_an_editor_starts_a_task_from_a_template_and_gets_its_skeleton(as_user, workspace, bob):
    response = as_user(bob).post(
        reverse("tasks:list", args=[workspace.pk]),
        {"title": "Lisbon in May", "goal": "", "template": "travel_plan"},
    )

    task = Task.objects.get(title="Lisbon in May")
    assert response.status_code == 302
    assert task.template == "travel_plan"
    assert task.document.text == load_templates()["travel_plan"].skeleton
    assert task.document.text.startswith("## Overview\n")


def test_a_free_form_task_has_no_template_and_an_empty_document(as_user, workspace, bob):
    as_user(bob).post(reverse("tasks:list", args=[workspace.pk]), {"title": "Anything"})

    task = Task.objects.get(title="Anything")
    assert (task.template, task.document.text) == ("", "")


def test_the_form_refuses_an_unknown_template_with_400(as_user, workspace, bob):
    response = as_user(bob).post(
        reverse("tasks:list", args=[workspace.pk]), {"title": "Odd", "template": "poem"}
    )

    assert response.status_code == 400
    assert b"Select a valid choice" in response.content
    assert not Task.objects.exists()


def test_the_service_refuses_an_unknown_template_naming_the_known_ones(workspace, bob):
    with pytest.raises(ValidationError) as refused:
        create_task(membership=membership_of(workspace, bob), title="Odd", template="poem")

    reason = refused.value.message_dict["template"][0]
    assert "Unknown template 'poem'" in reason
    assert "travel_plan" in reason
    assert not Task.objects.exists()


def test_the_task_page_shows_the_template_or_free_form(as_user, workspace, alice, carol):
    owner = membership_of(workspace, alice)
    planned = create_task(membership=owner, title="Trip", template="meeting_brief")
    free = create_task(membership=owner, title="Loose")
    client = as_user(carol)

    planned_page = client.get(reverse("tasks:detail", args=[planned.pk]))
    free_page = client.get(reverse("tasks:detail", args=[free.pk]))

    assert b"Template: <strong" in planned_page.content
    assert b"Meeting brief</strong>" in planned_page.content
    assert b"Free-form task" in free_page.content
    assert b"Template:" not in free_page.content


def test_outsiders_do_not_see_a_templated_task(as_user, workspace, alice, mallory):
    task = create_task(membership=membership_of(workspace, alice), title="T", template="blog_post")

    assert as_user(mallory).get(reverse("tasks:detail", args=[task.pk])).status_code == 404


@pytest.mark.parametrize("kind", sorted(SHIPPED))
def test_a_skeleton_gives_the_policies_no_slot_values(kind):
    """The skeleton is headings only: reading it must not fill any slot from the document."""
    template = load_templates()[kind]
    context = {"request": "Please start.", "document": template.skeleton, "task": {}}

    situation = situation_from_context(context, template_kind=kind, today=date(2027, 1, 4))

    assert template.skeleton.strip()
    assert [s.name for s in situation.slots if s.source == "document"] == []
