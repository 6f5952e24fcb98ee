"""A turn the built-in skills answered says so on the card: "answered by the built-in skills",
with a note that no model wrote it, never the small model's note."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from agents.defaults import create_default_agent
from agents.engine import runner
from agents.models import Turn, TurnStatus
from agents.models.turns import SKILLS_LABEL
from collab.tasks import services as task_services
from collab.tasks.models import Task
from collab.workspaces.models import Workspace
from tests import factories


def test_a_skills_answer_is_labelled_as_the_skills_on_the_card(
    workspace: Workspace,
    alice: User,
    task: Task,
    django_capture_on_commit_callbacks: Any,
) -> None:
    assistant = create_default_agent(workspace=workspace, owner=alice)
    assistant.tasks.add(task)
    task_services.post_message(
        membership=factories.membership_of(workspace, alice),
        task=task,
        body="@Assistant checklist for the offsite please",
    )
    turn = Turn.objects.get(agent=assistant)
    with django_capture_on_commit_callbacks(execute=True):
        runner.run_turn(turn_id=turn.pk)

    turn.refresh_from_db()
    assert turn.status == TurnStatus.DONE
    assert turn.model_label == SKILLS_LABEL
    client = Client()
    client.force_login(alice)
    page = client.get(reverse("tasks:detail", args=[task.pk])).content.decode()
    assert f"answered by {SKILLS_LABEL}" in page.replace("&#x27;", "'")
    assert "No model wrote this" in page
    assert "A small model on this server answered" not in page
