"""Live typing: a direct edit applied in several small steps that people watch arrive
(``AGENTS_TYPING_SECONDS`` in all), each step committed with its progress mark so that a
redelivered job resumes it or reports it (``resume_typing``)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from agents.models import Action, Turn
from agents.outbox import events, presence
from agents.services.chat import post_agent_message
from agents.services.edits import agent_label, changed_text
from collab.lib import ytext
from collab.realtime import broadcast
from collab.tasks import documents
from collab.tasks.models import DocumentUpdate, Message, Task

TYPING_CHUNK_CHARS = 20  # about a few words per step
TYPING_MAX_STEPS = 40
TYPING_MAX_PAUSE = 0.15  # seconds between two steps, at most


@dataclass
class Typing:
    """A direct edit being typed: its steps (``ytext.typing_steps``), how many are applied, and
    the agent's replica (``base``: what it read plus its own steps)."""

    action_id: int
    task: Task
    turn_id: int
    author_label: str
    groups: list[list[ytext.TypingStep]]
    done: int
    base: documents.DocumentRead
    after_update_id: int
    update_ids: list[int] = field(default_factory=list)
    operations: int = 0

    def record(self) -> dict[str, Any]:
        return {
            "steps": self.groups,
            "done": self.done,
            "after_update_id": self.after_update_id,
            "update_ids": self.update_ids,
            "operations": self.operations,
        }


def typing_seconds() -> float:
    return float(settings.AGENTS_TYPING_SECONDS)


def plan_typing(*, action: Action, turn: Turn, find: str, replace: str) -> Typing | None:
    """The steps of a direct edit typed live, or None to apply it in one step (typing is off,
    the edit is one step anyway, or ``find`` is no longer in the document)."""
    if typing_seconds() <= 0:
        return None
    task = Task.objects.get(pk=turn.task_id)
    base = documents.read_document(task=task)
    new_text = changed_text(base.text, find, replace)
    if new_text is None:
        return None
    groups = ytext.typing_steps(
        base.text, new_text, chunk_chars=TYPING_CHUNK_CHARS, max_steps=TYPING_MAX_STEPS
    )
    if len(groups) < 2:
        return None
    return Typing(
        action_id=action.pk,
        task=task,
        turn_id=turn.pk,
        author_label=agent_label(turn),
        groups=groups,
        done=0,
        base=base,
        after_update_id=base.update_id,
    )


def resume_typing(*, action: Action, turn: Turn) -> Typing | None:
    """A redelivered job finds an edit that was being typed when its worker died. If nobody
    else has written to the document since its last step, the document is exactly the agent's
    replica and the remaining steps are typed; otherwise the partial edit is reported in the
    chat (people finish or undo it from the history) and the action is closed."""
    record = action.result["typing"]
    task = Task.objects.get(pk=turn.task_id)
    others = (
        DocumentUpdate.objects.filter(document__task=task, id__gt=record["after_update_id"])
        .exclude(pk__in=record["update_ids"])
        .exists()
    )
    groups = [[(int(a), int(b), str(c)) for a, b, c in group] for group in record["steps"]]
    if not others:
        return Typing(
            action_id=action.pk,
            task=task,
            turn_id=turn.pk,
            author_label=agent_label(turn),
            groups=groups,
            done=int(record["done"]),
            base=documents.read_document(task=task),
            after_update_id=int(record["after_update_id"]),
            update_ids=list(record["update_ids"]),
            operations=int(record["operations"]),
        )
    action.status = Action.Status.APPLIED
    action.result = {
        "edited_directly": True,
        "interrupted": True,
        "typed_steps": record["done"],
        "steps": len(groups),
        "update_id": record["update_ids"][-1] if record["update_ids"] else None,
        "operations": record["operations"],
    }
    action.applied_at = timezone.now()
    action.save(update_fields=["status", "result", "applied_at"])
    transaction.on_commit(partial(events.edit_applied, action.pk))
    agent = turn.agent
    note = post_agent_message(
        task_id=task.pk,
        author_name=agent.name,
        body=(
            f"{agent.name}'s edit of the document was interrupted after {record['done']} of "
            f"{len(groups)} steps, and the document changed since: it holds part of the edit. "
            "Finish or undo it from the document history."
        ),
        kind=Message.Kind.SYSTEM,
    )
    transaction.on_commit(lambda: broadcast.chat_message(note.pk))
    return None


def type_step(typing: Typing) -> bool:
    """Apply the next step in its own transaction, together with the progress mark on the
    action; the last step also marks the action applied. False if another delivery has moved
    on (the steps are then its business)."""
    with transaction.atomic():
        action = Action.objects.select_for_update(of=("self",)).get(pk=typing.action_id)
        record = action.result.get("typing") or {}
        if action.status != Action.Status.PENDING or record.get("done") != typing.done:
            return False
        group = typing.groups[typing.done]
        new_text = ytext.apply_steps(typing.base.text, group)
        last = typing.done + 1 == len(typing.groups)
        edit = documents.apply_text_edit(
            task=typing.task,
            new_text=new_text,
            author_label=typing.author_label,
            base=typing.base,
            record_version=last,
        )
        typing.base = documents.next_base(typing.base, edit, text=new_text)
        typing.done += 1
        typing.operations += edit.operations
        if edit.update_id is not None:
            typing.update_ids.append(edit.update_id)
        if last:
            action.status = Action.Status.APPLIED
            action.applied_at = timezone.now()
            action.result = {
                "edited_directly": True,
                "update_id": typing.update_ids[-1] if typing.update_ids else None,
                "update_ids": typing.update_ids,
                "operations": typing.operations,
                "steps": len(typing.groups),
            }
            transaction.on_commit(partial(events.edit_applied, action.pk))
        else:
            action.result = {"typing": typing.record()}
        action.save(update_fields=["status", "result", "applied_at"])
    start, _end, insert = group[-1]
    presence.move_cursor(typing.turn_id, state=typing.base.state, index=start + len(insert))
    return True


def type_edit(typing: Typing) -> None:
    """Type the remaining steps, pausing between them (``AGENTS_TYPING_SECONDS`` in all)."""
    pause = min(TYPING_MAX_PAUSE, typing_seconds() / max(1, len(typing.groups) - 1))
    first = True
    while typing.done < len(typing.groups):
        if not first and pause > 0:
            time.sleep(pause)
        first = False
        if not type_step(typing):
            return
