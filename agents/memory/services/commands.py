"""Chat commands: "remember that …" / "forget …" said in a task's chat, and the reflection
they (and every other message) schedule.

What a person says about themselves is applied at once (no review), and the item's history
names them as its author; what they say about another member of the workspace only waits in
that member's review inbox. Jobs are enqueued by name on commit (``agents.memory.queue``):
this module never imports the jobs.
"""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db.models import Q

from agents.memory import queue
from agents.memory.extractors import Command, parse_command, subject_name
from agents.memory.models import Scope, Source
from agents.memory.services.reconciliation import Provenance, Reconciliation, propose, reconcile
from agents.memory.told import told_preferences
from collab.tasks.models import Message
from collab.workspaces.models import Membership

REFLECT_JOB = "memory.reflect_conversation"


def schedule_reflection(task_id: int, *, countdown: int | None = None) -> None:
    """On commit, enqueue the debounced reflection of the task's chat (by default one quiet
    period later: ``MEMORY_REFLECTION_QUIET_SECONDS``)."""
    queue.enqueue_on_commit(
        REFLECT_JOB, task_id, countdown=queue.quiet_seconds() if countdown is None else countdown
    )


def message_posted(*, message: Message, membership: Membership) -> str:
    """Called (through the platform's ``message_posted`` hook) inside ``post_message``'s
    transaction.

    Applies an explicit "remember that …" / "forget …" right away, and schedules the debounced
    reflection of the conversation on commit. Returns what a command did, in a sentence for its
    author ("" when the message held none).
    """
    schedule_reflection(message.task_id)
    if message.author_id is None:
        return ""
    command = parse_command(message.body)
    if command is None:  # "@Assistant I prefer bullet points": kept now, one item each
        told = told_preferences(message.body)
        results = [_apply_command(c, message=message, membership=membership) for c in told]
        return " ".join(command_notice(r, forget=False) for r in results if r is not None)
    result = _apply_command(command, message=message, membership=membership)
    if result is None:
        return ""
    return command_notice(result, forget=command.proposal.forget)


def _someone_else(command: Command, membership: Membership, author_id: int) -> User | None:
    """The member of this workspace (other than the author) the command is about, if its
    sentence starts with their username or first name ("remember that Zoë prefers …")."""
    if command.scope == Scope.TEAM or command.proposal.forget:
        return None
    name = subject_name(command.proposal.text)
    if name is None:
        return None
    member = (
        Membership.objects.filter(workspace_id=membership.workspace_id)
        .filter(Q(user__username__iexact=name) | Q(user__first_name__iexact=name))
        .exclude(user_id=author_id)
        .select_related("user")
        .first()
    )
    return member.user if member is not None else None


def _apply_command(
    command: Command, *, message: Message, membership: Membership
) -> Reconciliation | None:
    """Reconcile the command's proposal with the author's (or the team's) memory. A command
    about another member is only a suggestion in that person's review inbox (in this
    workspace): nobody writes someone else's memory."""
    task_id = message.task_id
    assert message.author_id is not None
    if command.scope == Scope.TEAM and not membership.can_edit:
        return None
    other = _someone_else(command, membership, message.author_id)
    if other is not None:
        return propose(
            owner=other,
            proposal=command.proposal,
            scope=Scope.WORKSPACE,
            workspace=membership.workspace,
            provenance=Provenance(
                source_kind=Source.CHAT_COMMAND,
                task_id=task_id,
                message_id=message.pk,
                person_id=message.author_id,
            ),
            review=True,
        )
    author = message.author if isinstance(message.author, User) else None
    workspace = None if command.scope == Scope.PERSONAL else membership.workspace
    provenance = Provenance(
        source_kind=Source.CHAT_COMMAND,
        task_id=task_id,
        message_id=message.pk,
        person_id=message.author_id,
    )
    if command.proposal.forget and command.scope == Scope.PERSONAL:
        # "forget …" without a scope means anywhere the person's memory applies here.
        result = reconcile(
            owner=message.author_id,
            proposal=command.proposal,
            provenance=provenance,
            actor=author,
        )
        local = reconcile(
            owner=message.author_id,
            proposal=command.proposal,
            scope=Scope.WORKSPACE,
            workspace=membership.workspace,
            provenance=provenance,
            actor=author,
        )
        result.changed += local.changed
        if local.changed:
            result.action = "invalidated"
        return result
    return reconcile(
        owner=message.author_id,
        proposal=command.proposal,
        scope=command.scope,
        workspace=workspace,
        provenance=provenance,
        actor=author,
    )


def command_notice(result: Reconciliation, *, forget: bool) -> str:
    """What an explicit chat command did, in a sentence for the person who said it (and only
    for them: personal memory is theirs alone)."""
    item = result.item
    where = ""
    if item is not None:
        if item.scope == Scope.TEAM:
            where = " in the team's memory"
        elif item.scope == Scope.WORKSPACE:
            where = " for you in this workspace"
        else:
            where = " for you, everywhere"
    if result.action in ("added", "superseded") and item is not None:
        replaced = " (it replaces what was remembered before)" if result.changed else ""
        return f"Remembered{where}: “{item.text}”{replaced}."
    if result.action == "kept" and item is not None:
        return f"Already remembered{where}: “{item.text}”."
    if result.action == "invalidated":
        count = len(result.changed)
        return f"Forgot {count} remembered item{'s' if count != 1 else ''}."
    if result.action == "proposed":
        candidate = result.candidate
        if candidate is not None and candidate.source_person_id != candidate.owner_id:
            return (
                "That is about someone else: it waits for them to accept or reject it on "
                "their Memory page."
            )
        return "Noted for your review: accept or reject it on your Memory page."
    if forget:
        return "Nothing remembered matched that, so nothing was forgotten."
    return "Nothing was remembered: memory is off for you (your Memory page turns it on)."


def task_finished(*, task_id: int) -> None:
    """Called when a task is marked done: reflect on its conversation without waiting."""
    schedule_reflection(task_id, countdown=0)
