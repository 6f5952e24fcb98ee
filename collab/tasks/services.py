"""Every change to tasks, documents and chat goes through here; broadcasts run on commit."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction

from agents.memory import services as memory
from collab.realtime import broadcast
from collab.tasks import task_templates
from collab.tasks.models import Document, Message, Task, TaskStatus, TaskStatusChange
from collab.workspaces.models import Membership


def _require_editor(membership: Membership) -> None:
    if not membership.can_edit:
        raise PermissionDenied("Viewers can read but not change this workspace.")


@transaction.atomic
def create_task(*, membership: Membership, title: str, goal: str = "", template: str = "") -> Task:
    """A task, free-form or started from a template (its document then starts with the
    template's skeleton)."""
    _require_editor(membership)
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
    return task


@transaction.atomic
def set_task_status(*, membership: Membership, task: Task, status: str) -> Task:
    _require_editor(membership)
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
        memory.task_finished(task_id=task.pk)
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


@transaction.atomic
def post_message(*, membership: Membership, task: Task, body: str) -> Message:
    _require_editor(membership)
    if task.workspace_id != membership.workspace_id:
        raise PermissionDenied("That task belongs to another workspace.")
    body = validate_message_body(body)
    user = membership.user
    message = Message.objects.create(
        task=task,
        author=user,
        kind=Message.Kind.HUMAN,
        author_name=user.get_username(),
        body=body,
    )
    Task.objects.filter(pk=task.pk).update(updated_at=message.created_at)
    from agents.services import handle_human_message  # agents depend on tasks, not back

    # First, so that on commit the turns it starts are enqueued before the message is rendered
    # and published: a worker can start meanwhile. (Only an agent that joins the task with this
    # message goes before its turn: pages need its card for the turn's events.)
    handle_human_message(message=message)
    memory.message_posted(message=message, membership=membership)
    transaction.on_commit(lambda: broadcast.chat_message(message.pk, message=message))
    return message
