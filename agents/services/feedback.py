"""Feedback on agent work: thumbs, comments, "this question was unnecessary"."""

from __future__ import annotations

from functools import partial

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from agents.models import FEEDBACK_COMMENT_MAX, Feedback
from agents.outbox import events
from agents.selectors import FEEDBACK_TARGET_FIELDS, FeedbackTarget
from agents.services.learning import learn_from_feedback
from collab.workspaces.models import Membership
from collab.workspaces.permissions import require_same_workspace


def _feedback_row(*, membership: Membership, target: FeedbackTarget) -> Feedback:
    """The person's row for this target, locked (created, empty, when missing)."""
    field = FEEDBACK_TARGET_FIELDS[target.kind]
    rows = Feedback.objects.select_for_update(of=("self",)).filter(
        user=membership.user, target_kind=target.kind, **{field: target.obj.pk}
    )
    row = rows.first()
    if row is not None:
        return row
    try:
        with transaction.atomic():
            return Feedback.objects.create(
                user=membership.user,
                workspace_id=target.task.workspace_id,
                task=target.task,
                turn_id=target.turn_id,
                target_kind=target.kind,
                **{field: target.obj.pk},
            )
    except IntegrityError:  # the same person's other tab got there first
        return rows.get()


def record_feedback(
    *,
    membership: Membership,
    target: FeedbackTarget,
    rating: str | None = None,
    toggle: bool = False,
    comment: str | None = None,
    unnecessary: bool | None = None,
) -> Feedback:
    """Thumbs up/down, a comment, or "this question was unnecessary" on one piece of agent work.

    Any member may give feedback, viewers included: it changes nothing in the task, only what
    review shows and what a learning policy learns. Arguments left as ``None`` keep their
    stored value; ``rating=""`` clears the rating, and with ``toggle`` giving the rating the
    row already has clears it (the thumb buttons). One row per (person, target), kept even when
    emptied so that the policy learns from each person's first opinion once
    (``agents/services/learning.py``).
    """
    require_same_workspace(membership, target.task)
    errors: dict[str, str] = {}
    if rating is not None and rating not in ("", *Feedback.Rating.values):
        errors["rating"] = "Rate with up or down (or nothing to clear the rating)."
    if comment is not None:
        comment = comment.strip()
        if len(comment) > FEEDBACK_COMMENT_MAX:
            errors["comment"] = f"Keep the comment under {FEEDBACK_COMMENT_MAX:,} characters."
    if unnecessary and target.kind != Feedback.TargetKind.QUESTION:
        errors["unnecessary"] = "Only a question can be marked unnecessary."
    if rating is None and comment is None and unnecessary is None:
        errors["rating"] = "Give a rating, a comment or mark the question unnecessary."
    if errors:
        raise ValidationError(errors)
    with transaction.atomic():
        row = _feedback_row(membership=membership, target=target)
        if rating is not None:
            row.rating = "" if toggle and row.rating == rating else rating
        if comment is not None:
            row.comment = comment
        if unnecessary is not None:
            row.unnecessary_question = unnecessary
        row.save(update_fields=["rating", "comment", "unnecessary_question", "updated_at"])
        learn_from_feedback(row)
        transaction.on_commit(
            partial(events.feedback_changed, target.kind, target.obj.pk, target.task.pk)
        )
    return row
