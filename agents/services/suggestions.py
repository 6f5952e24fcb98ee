"""Suggestions agents propose: people accept them (as they are or edited) or reject them."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from agents.models import Suggestion
from agents.outbox import events
from agents.schemas import TEXT_MAX
from agents.services import plans
from agents.services.edits import changed_text, edit_document, unified_diff
from collab.lib.errors import Conflict
from collab.tasks import documents
from collab.tasks.models import Task
from collab.workspaces.models import Membership
from collab.workspaces.permissions import require_editor, require_same_workspace


@transaction.atomic
def propose_suggestion(
    *, membership: Membership, task: Task, find: str, replace: str, rationale: str = ""
) -> Suggestion:
    """A person's proposed change (e.g. through their MCP client): a card others accept, edit
    or reject, as an agent's would be. ``find`` must be in the live document (empty appends)."""
    require_editor(membership)
    require_same_workspace(membership, task)
    if len(replace) > TEXT_MAX * 4 or len(find) > TEXT_MAX * 4:
        raise ValidationError({"replace": "That change is too long."})
    if len(rationale) > TEXT_MAX:
        raise ValidationError({"rationale": "That reason is too long."})
    if not find and not replace.strip():
        raise ValidationError({"replace": "Say what to add."})
    before = documents.read_document(task=task).text
    after = changed_text(before, find, replace)
    if after is None:
        raise Conflict("The document does not contain the text to change: read it again.")
    suggestion = Suggestion.objects.create(
        task=task,
        proposed_by=membership.user,
        find=find,
        replace=replace,
        rationale=rationale.strip(),
        diff=unified_diff(before, after),
    )
    transaction.on_commit(lambda: events.suggestion_changed(suggestion.pk, created=True))
    return suggestion


def accept_suggestion(
    *, membership: Membership, suggestion: Suggestion, text: str | None = None
) -> Suggestion:
    """Apply the suggestion, or the person's edited version of it, to the document.

    A suggestion whose text is no longer in the document is marked stale and refused.
    """
    require_editor(membership)
    require_same_workspace(membership, suggestion.task)
    with transaction.atomic():
        locked = (
            Suggestion.objects.select_for_update(of=("self",))
            .select_related("agent", "proposed_by")
            .get(pk=suggestion.pk)
        )
        if locked.status != Suggestion.Status.PROPOSED:
            raise Conflict("This suggestion has already been decided.")
        replacement = locked.replace if text is None else text
        if len(replacement) > TEXT_MAX * 4:
            raise ValidationError({"text": "That change is too long."})
        applied = edit_document(
            task_id=locked.task_id,
            find=locked.find,
            replace=replacement,
            author_label=(
                f"{membership.user.get_username()} (accepted {locked.proposer_name}'s suggestion)"
            ),
            author=membership.user,
        )
        locked.decided_by = membership.user
        locked.decided_at = timezone.now()
        if applied is None:
            locked.status = Suggestion.Status.STALE
        else:
            edited = replacement != locked.replace
            locked.status = Suggestion.Status.EDITED if edited else Suggestion.Status.ACCEPTED
            locked.final_text = replacement
        locked.save(update_fields=["status", "final_text", "decided_by", "decided_at"])
        if applied is not None:  # a coordinator's plan: accepting it approves it (ADR 0024)
            plans.suggestion_accepted(suggestion=locked, user=membership.user)
        transaction.on_commit(lambda: events.suggestion_changed(locked.pk))
    if locked.status == Suggestion.Status.STALE:
        raise Conflict("The document no longer contains the text this suggestion changes.")
    return locked


@transaction.atomic
def reject_suggestion(*, membership: Membership, suggestion: Suggestion) -> Suggestion:
    require_editor(membership)
    require_same_workspace(membership, suggestion.task)
    locked = Suggestion.objects.select_for_update(of=("self",)).get(pk=suggestion.pk)
    if locked.status != Suggestion.Status.PROPOSED:
        raise Conflict("This suggestion has already been decided.")
    locked.status = Suggestion.Status.REJECTED
    locked.decided_by = membership.user
    locked.decided_at = timezone.now()
    locked.save(update_fields=["status", "decided_by", "decided_at"])
    transaction.on_commit(lambda: events.suggestion_changed(locked.pk))
    return locked
