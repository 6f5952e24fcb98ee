"""The owner-only check for managing agents (the editor and workspace checks every service makes
are the platform's, ``collab.workspaces.permissions``)."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied

from collab.workspaces.models import Membership


def require_owner(membership: Membership) -> None:
    if not membership.is_owner:
        raise PermissionDenied("Only workspace owners manage agents.")
