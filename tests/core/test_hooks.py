"""The hook registries: the platform calls them, the agents app fills them in ready()."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User

from agents.models import ModelProfile, Provider, Turn
from agents.services import hooks as agents_hooks
from agents.services.agents import create_agent
from collab.core import hooks
from collab.core.hooks import HookReport, PostedMessage
from collab.tasks.models import Message, Task
from collab.tasks.services import post_message
from collab.workspaces.models import Membership, Workspace
from tests.factories import membership_of


def test_the_agents_app_registers_its_hooks_when_django_starts() -> None:
    assert agents_hooks.message_posted in hooks.message_posted.implementations
    assert agents_hooks.document_edited in hooks.document_edited.implementations
    assert agents_hooks.task_finished in hooks.task_finished.implementations
    assert agents_hooks.message_fragments in hooks.message_fragments.implementations


def test_registering_an_implementation_twice_runs_it_once() -> None:
    calls: list[int] = []

    def finished(*, task: Task) -> None:
        calls.append(task.pk)

    with hooks.task_finished.replaced():
        hooks.task_finished.register(finished)
        hooks.task_finished.register(finished)
        hooks.task_finished(task=Task(pk=7))

    assert calls == [7]


def test_a_hook_takes_keyword_arguments_only() -> None:
    with pytest.raises(TypeError, match="keyword arguments only"):
        hooks.task_finished(Task(pk=1))  # type: ignore[misc]


def test_post_message_returns_the_message_with_the_notice_the_hooks_reported(
    workspace: Workspace, bob: User, task: Task
) -> None:
    seen: list[tuple[str, str]] = []

    def posted(*, message: Message, membership: Membership) -> HookReport:
        seen.append((message.body, membership.user.get_username()))
        return HookReport(memory_notice="Noted.")

    with hooks.message_posted.replaced(posted):
        result = post_message(membership=membership_of(workspace, bob), task=task, body=" Hi ")

    assert isinstance(result, PostedMessage)
    assert result.message == Message.objects.get(task=task)
    assert result.memory_notice == "Noted."
    assert seen == [("Hi", "bob")]
    assert not hasattr(result.message, "memory_notice"), "nothing is smuggled onto the row"


def _mira(workspace: Workspace, alice: User, task: Task) -> None:
    profile = ModelProfile.objects.create(name="fake", provider=Provider.FAKE, model="echo")
    agent = create_agent(
        membership=membership_of(workspace, alice), name="Mira", model_profile=profile
    )
    agent.tasks.add(task)


def test_a_mention_starts_a_turn_through_the_agents_hook(
    workspace: Workspace,
    alice: User,
    bob: User,
    task: Task,
    django_capture_on_commit_callbacks: Any,
) -> None:
    _mira(workspace, alice, task)
    with django_capture_on_commit_callbacks(execute=False):
        post_message(membership=membership_of(workspace, bob), task=task, body="@Mira hi")

    assert Turn.objects.filter(task=task, agent__name="Mira").count() == 1


def test_the_platform_posts_messages_with_no_hook_registered(
    workspace: Workspace,
    alice: User,
    bob: User,
    task: Task,
    django_capture_on_commit_callbacks: Any,
) -> None:
    _mira(workspace, alice, task)
    with hooks.message_posted.replaced(), django_capture_on_commit_callbacks(execute=False):
        result = post_message(membership=membership_of(workspace, bob), task=task, body="@Mira hi")

    assert result.memory_notice == ""
    assert Message.objects.filter(task=task).count() == 1
    assert not Turn.objects.exists()
