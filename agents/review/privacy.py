"""What review pages and exports may show of people's personal memory.

Team memory belongs to the workspace and is always shown. Personal memory (scope personal or
workspace) is the person's own: review pages show only that it changed; exports carry it only
when the workspace allows it AND the person allowed admins to read their memory.
"""

from __future__ import annotations

from collections.abc import Iterable

from agents.memory.models import MemorySettings, Scope
from agents.review.models import ReviewSettings

MEMORY_WITHHELD = "[personal memory withheld]"


def exportable_memory_owners(settings: ReviewSettings, owner_ids: Iterable[int]) -> set[int]:
    """The people whose personal memory this workspace's exports may include."""
    if not settings.export_personal_memory:
        return set()
    return set(
        MemorySettings.objects.filter(
            user_id__in=set(owner_ids), admin_access_allowed=True
        ).values_list("user_id", flat=True)
    )


def is_personal(scope: str) -> bool:
    return scope != Scope.TEAM


def redact_memory_lines(text: str, lines: Iterable[str]) -> str:
    """Withhold the personal memory lines a prompt showed (team lines are kept)."""
    for line in lines:
        if line and not line.startswith("(team"):
            text = text.replace(line, MEMORY_WITHHELD)
    return text
