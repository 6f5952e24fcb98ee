"""Agent changes to the live document: as a CRDT peer (``collab.tasks.documents``), a minimal
diff of the latest stored state, attributed to the agent and its turn."""

from __future__ import annotations

import difflib
from typing import Any

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from agents.models import Action, Turn
from agents.outbox import events
from collab.tasks import documents
from collab.tasks.models import Task
from collab.workspaces.models import Membership
from collab.workspaces.permissions import require_editor, require_same_workspace


def unified_diff(before: str, after: str) -> str:
    # Lines without their endings, joined with "\n": with keepends, a last line that has no
    # newline ran into the next line of the diff ("-…reload.+Ben: ask…").
    lines = difflib.unified_diff(
        before.splitlines(),
        after.splitlines(),
        fromfile="document",
        tofile="suggested",
        n=1,
        lineterm="",
    )
    return "\n".join(lines)[:20_000]


def changed_text(text: str, find: str, replace: str) -> str | None:
    """``text`` with the first ``find`` replaced (or ``replace`` appended); None if gone."""
    if not find:
        return text + replace
    if find not in text:
        return None
    return text.replace(find, replace, 1)


def edit_document(
    *, task_id: int, find: str, replace: str, author_label: str, author: User | None
) -> dict[str, Any] | None:
    """Replace ``find`` (or append) in the live document as a minimal CRDT diff.

    The co-editing service reads the latest persisted CRDT state, not ``Document.text`` (which
    may lag the update log by one batch), so concurrent typing is never reverted.
    Returns None when ``find`` is no longer in the document.
    """
    task = Task.objects.get(pk=task_id)
    edit = documents.replace_in_document(
        task=task, find=find, replace=replace, author_label=author_label, author=author
    )
    if edit is None:
        return None
    return {"update_id": edit.update_id, "operations": edit.operations}


def agent_label(turn: Turn) -> str:
    return f"{turn.agent.name} (agent, turn {turn.pk})"


def direct_edit(*, turn: Turn, find: str, replace: str) -> dict[str, Any] | None:
    """Edit the live document as the agent (a CRDT peer), attributed to the agent and turn."""
    return edit_document(
        task_id=turn.task_id,
        find=find,
        replace=replace,
        author_label=agent_label(turn),
        author=None,
    )


def undo_agent_edit(*, membership: Membership, action: Action) -> Action:
    """Undo an agent's direct edit: the text it wrote goes back to what it replaced (or away,
    for an addition), as a new minimal edit by this person, so everything typed since stays
    (like reverting one change in a shared editor, not the whole document). Refused, with the
    reason, when that text is no longer in the document."""
    require_editor(membership)
    require_same_workspace(membership, action.turn.task)
    with transaction.atomic():
        locked = (
            Action.objects.select_for_update(of=("self",))
            .select_related("turn__agent")
            .get(pk=action.pk)
        )
        result = dict(locked.result or {})
        if result.get("undone_by"):
            raise ValidationError(f"{result['undone_by']} already undid this edit.")
        written = str(locked.payload.get("replace", ""))
        replaced = str(locked.payload.get("find", ""))
        if not written:
            raise ValidationError("This edit only removed text: restore it from the history.")
        agent = locked.turn.agent.name
        applied = edit_document(
            task_id=locked.turn.task_id,
            find=written,
            replace=replaced,
            author_label=f"{membership.user.get_username()} (undid {agent}'s edit)",
            author=membership.user,
        )
        if applied is None:
            raise ValidationError(
                f"The text {agent} wrote has changed since, so it cannot be undone "
                "automatically: edit the document, or restore a version from its history."
            )
        result.update(
            undone_by=membership.user.get_username(), undone_at=timezone.now().isoformat()
        )
        locked.result = result
        locked.save(update_fields=["result"])
        transaction.on_commit(lambda: events.edit_applied(locked.pk, created=False))
    return locked
