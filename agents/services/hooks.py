"""The agents' implementations of the platform's hooks (``collab.core.hooks``).

The platform never imports ``agents``; it calls its hooks, and ``AgentsConfig.ready`` calls
``register`` here. Each implementation is a thin adapter onto an agents service or selector.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.contrib.auth.models import User

from agents import defaults, selectors
from agents.memory import local_embeddings
from agents.memory import selectors as memory_selectors
from agents.memory import services as memory
from agents.models import Agent
from agents.policies import meaning
from agents.policies.templates import load_templates
from agents.services import chains as chain_services
from agents.services import plans as plan_services
from agents.services import turns as turn_services
from agents.skills.understand import guess_kind
from collab.core import hooks
from collab.core.hooks import HookReport, TaskTemplateLike
from collab.tasks.models import Message, Task
from collab.workspaces.models import Membership, Workspace


def message_posted(*, message: Message, membership: Membership) -> HookReport:
    # Turns first: on commit they are enqueued before the message is published (a worker can
    # start meanwhile), then memory's explicit commands and its debounced reflection.
    turn_services.handle_human_message(message=message)
    chain_services.person_posted(message=message)  # a person wrote: chains get a new budget
    remembered = memory.message_posted(message=message, membership=membership)
    notices = [remembered, turn_services.unknown_mention_notice(message=message)]
    return HookReport(
        memory_notice=" ".join(notice for notice in notices if notice),
        about_memory=bool(remembered),
    )


def document_edited(*, latest_updates: Mapping[int, int]) -> None:
    turn_services.documents_edited(latest_updates=dict(latest_updates))
    plan_services.documents_edited(latest_updates=dict(latest_updates))


def task_finished(*, task: Task) -> None:
    memory.task_finished(task_id=task.pk)


def message_fragments(*, task_id: int, messages: list[dict[str, Any]], viewer: User) -> None:
    selectors.attach_message_feedback(viewer, task_id, messages)
    selectors.attach_message_assumptions(task_id, messages)
    selectors.attach_message_hops(task_id, messages)
    memory_selectors.attach_memory_used(task_id, messages, viewer)


def task_page_context(*, task: Task, membership: Membership) -> dict[str, Any]:
    """A free-form task the agents read as a known kind says so on its page (the skills draft
    and check it as that kind: agents.skills.understand.kind_for)."""
    if task.template:
        return {}
    guessed = guess_kind(f"{task.title} {task.goal}")
    return {"kind_read_as": guessed.title} if guessed is not None else {}


def task_templates() -> Mapping[str, TaskTemplateLike]:
    return load_templates()


def task_participants(*, task: Task) -> list[dict[str, str]]:
    agents = Agent.objects.filter(tasks=task, is_active=True).order_by("name")
    return [{"name": agent.name, "color": agent.colour} for agent in agents]


def workspace_created(*, workspace: Workspace, owner: User, agent_name: str) -> None:
    defaults.create_default_agent(workspace=workspace, owner=owner, name=agent_name)


def demo_seeded(*, task: Task, owner: User) -> None:
    """The demo workspace gains a writer and a reviewer (issue 30): ask "@Writer draft the plan
    and ask @Reviewer to check it" to see a chain work with the built-in skills."""
    for name, instructions in DEMO_PAIR:
        agent = defaults.create_default_agent(workspace=task.workspace, owner=owner, name=name)
        if not agent.instructions:
            agent.instructions = instructions
            agent.save(update_fields=["instructions"])
        agent.tasks.add(task)


DEMO_PAIR = (
    (
        "Writer",
        "Drafts the document from the task's kind and what is known; hands the draft "
        "to the reviewer when asked.",
    ),
    (
        "Reviewer",
        "Checks a draft against the task's open values and the kind's checklist, and "
        "says what is missing.",
    ),
)


def task_created(*, task: Task) -> None:
    defaults.join_new_task(task=task)


def register() -> None:
    hooks.workspace_created.register(workspace_created)
    hooks.task_created.register(task_created)
    hooks.demo_seeded.register(demo_seeded)
    hooks.message_posted.register(message_posted)
    hooks.document_edited.register(document_edited)
    hooks.task_finished.register(task_finished)
    hooks.message_fragments.register(message_fragments)
    hooks.task_templates.register(task_templates)
    hooks.task_page_context.register(task_page_context)
    hooks.task_participants.register(task_participants)
    # The reader matches what people write to what each slot is for with the shipped
    # embedding (loaded by the first reading that needs it, once per process).
    meaning.install(local_embeddings.similarities)
