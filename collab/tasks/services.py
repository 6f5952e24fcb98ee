"""Every change to tasks, documents and chat goes through here; broadcasts run on commit."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction

from collab.core import hooks
from collab.core.hooks import PostedMessage
from collab.realtime import broadcast
from collab.tasks import task_templates
from collab.tasks.models import Document, Message, Task, TaskStatus, TaskStatusChange
from collab.workspaces.models import Membership
from collab.workspaces.permissions import require_editor, require_task_editor


@transaction.atomic
def create_task(*, membership: Membership, title: str, goal: str = "", template: str = "") -> Task:
    """A task, free-form or started from a template (its document then starts with the
    template's skeleton)."""
    require_editor(membership)
    title = title.strip()
    template = template.strip()
    errors = {}
    if not title:
        errors["title"] = "A task needs a title."
    elif len(title) > 200:
        errors["title"] = "Keep the title under 200 characters."
    if len(goal) > 10_000:
        errors["goal"] = "Keep the goal under 10,000 characters."
    problem = task_templates.template_error(template)
    if problem:
        errors["template"] = problem
    if errors:
        raise ValidationError(errors)
    task = Task.objects.create(
        workspace=membership.workspace,
        title=title,
        goal=goal.strip(),
        template=template,
        created_by=membership.user,
    )
    Document.objects.create(task=task, text=task_templates.skeleton(template))
    hooks.task_created(task=task)
    return task


@transaction.atomic
def set_task_status(*, membership: Membership, task: Task, status: str) -> Task:
    require_task_editor(membership, task)
    if status not in TaskStatus.values:
        raise ValidationError({"status": f"Unknown status {status!r}."})
    current = Task.objects.select_for_update().values_list("status", flat=True).get(pk=task.pk)
    if status == current:
        task.status = current
        return task
    TaskStatusChange.objects.create(
        task=task, from_status=current, to_status=status, changed_by=membership.user
    )
    task.status = status
    task.save(update_fields=["status", "updated_at"])
    transaction.on_commit(lambda: broadcast.task_changed(task.pk))
    if status == TaskStatus.DONE:
        hooks.task_finished(task=task)
    return task


def validate_message_body(body: str) -> str:
    body = body.strip()
    if not body:
        raise ValidationError({"body": "Write something first."})
    limit = settings.CHAT_MESSAGE_MAX_CHARS
    if len(body) > limit:
        raise ValidationError(
            {"body": f"Messages are limited to {limit:,} characters; this one has {len(body):,}."}
        )
    return body


def create_message(
    *, task_id: int, kind: str, body: str, author: User | None = None, author_name: str
) -> Message:
    """Store a chat message and bump the task's ``updated_at``: the one way a message is made,
    for people (``post_message``), agents and the system. The caller validates ``body``, checks
    access and registers the broadcast on commit."""
    message = Message.objects.create(
        task_id=task_id, kind=kind, author=author, author_name=author_name, body=body
    )
    Task.objects.filter(pk=task_id).update(updated_at=message.created_at)
    return message


@transaction.atomic
def post_message(*, membership: Membership, task: Task, body: str) -> PostedMessage:
    """A person's chat message: stored, told to the ``message_posted`` hooks (the agents start
    the turns it triggers, memory applies a "remember that ..."), broadcast on commit."""
    require_task_editor(membership, task)
    body = validate_message_body(body)
    user = membership.user
    message = create_message(
        task_id=task.pk,
        kind=Message.Kind.HUMAN,
        author=user,
        author_name=user.get_username(),
        body=body,
    )
    message.task = task  # the hooks read it; saves a query
    # First, so that on commit the turns the hooks start are enqueued before the message is
    # rendered and published: a worker can start meanwhile. (Only an agent that joins the task
    # with this message goes before its turn: pages need its card for the turn's events.)
    reports = hooks.message_posted(message=message, membership=membership)
    transaction.on_commit(lambda: broadcast.chat_message(message.pk, message=message))
    return PostedMessage.from_reports(message, reports)
