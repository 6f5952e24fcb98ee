"""Import and export of a person's own memory (the ``collab-memory`` JSON format, version 1).

Export is a read (``selectors.export_memory``, audited here by ``record_export``); import adds
the file's items, reconciled like any other source.
"""

from __future__ import annotations

from typing import Literal

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from pydantic import BaseModel, ConfigDict, Field
from pydantic import ValidationError as PydanticValidationError

from agents.memory.extractors import Proposal
from agents.memory.models import KEY_MAX_CHARS, TEXT_MAX_CHARS, VALUE_MAX_CHARS, Source
from agents.memory.services.reconciliation import Provenance, lock_owner, reconcile_locked
from collab.workspaces.models import Membership, Workspace

# --- Import ----------------------------------------------------------------------------------

EXPORT_FORMAT = "collab-memory"
IMPORT_MAX_ITEMS = 2000


class _ImportedItem(BaseModel):
    model_config = ConfigDict(extra="ignore")

    scope: Literal["personal", "workspace"] = "personal"
    workspace_id: int | None = None
    kind: Literal["preference", "fact", "instruction"] = "preference"
    text: str = Field(min_length=1, max_length=TEXT_MAX_CHARS)
    key: str = Field("", max_length=KEY_MAX_CHARS)
    value: str = Field("", max_length=VALUE_MAX_CHARS)
    confidence: float = Field(0.8, ge=0, le=1)
    pinned: bool = False


class _ImportFile(BaseModel):
    model_config = ConfigDict(extra="ignore")

    format: Literal["collab-memory"]
    version: Literal[1]
    items: list[_ImportedItem] = Field(max_length=IMPORT_MAX_ITEMS)


def parse_import(raw: bytes) -> list[_ImportedItem]:
    """Validates an export file; ``ValidationError`` lists what is wrong."""
    try:
        parsed = _ImportFile.model_validate_json(raw)
    except PydanticValidationError as exc:
        reasons = [
            f"{'.'.join(str(p) for p in error['loc']) or 'file'}: {error['msg']}"
            for error in exc.errors()[:10]
        ]
        raise ValidationError(reasons) from None
    return parsed.items


@transaction.atomic
def import_memory(*, user: User, raw: bytes) -> dict[str, int]:
    """Adds the file's items to the person's memory, reconciling like any other source."""
    items = parse_import(raw)
    workspace_ids = {i.workspace_id for i in items if i.workspace_id is not None}
    workspaces = Workspace.objects.in_bulk(
        Membership.objects.filter(user=user, workspace_id__in=workspace_ids).values_list(
            "workspace_id", flat=True
        )
    )
    errors = []
    for index, entry in enumerate(items):
        if entry.scope == "workspace" and entry.workspace_id not in workspaces:
            errors.append(f"items.{index}.workspace_id: not a workspace you belong to")
        if entry.scope == "personal" and entry.workspace_id is not None:
            errors.append(f"items.{index}.workspace_id: personal items have no workspace")
    if errors:
        raise ValidationError(errors[:10])
    lock_owner(user.pk)
    counts = {"added": 0, "superseded": 0, "kept": 0}
    for entry in items:
        try:
            result = reconcile_locked(
                owner_id=user.pk,
                proposal=Proposal.of(entry),
                scope=entry.scope,
                workspace=(
                    workspaces[entry.workspace_id] if entry.workspace_id is not None else None
                ),
                provenance=Provenance(source_kind=Source.IMPORT, person_id=user.pk),
                actor=user,
            )
        except ValidationError as exc:
            raise ValidationError([f"{entry.text[:40]!r}: {m}" for m in exc.messages]) from None
        counts[result.action] = counts.get(result.action, 0) + 1
        if entry.pinned and result.item is not None and not result.item.pinned:
            result.item.pinned = True
            result.item.save(update_fields=["pinned", "updated_at"])
    return counts
