"""``python manage.py mcp_server``: Collab's MCP server over stdio, acting as the person whose
API token is in ``COLLAB_API_TOKEN`` (docs/mcp.md)."""

from __future__ import annotations

import os
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from agents.mcp.server import build_server, stdio_user_id
from collab.accounts.services import check_api_token


class Command(BaseCommand):
    help = "Serve Collab's MCP tools over stdio, as the owner of COLLAB_API_TOKEN."

    def handle(self, *args: Any, **options: Any) -> None:
        token = os.environ.get("COLLAB_API_TOKEN", "").strip()
        if not token:
            raise CommandError("Set COLLAB_API_TOKEN to an API token (Settings > API tokens).")
        user = check_api_token(token).user
        if user is None:
            raise CommandError("COLLAB_API_TOKEN is not a valid, unrevoked API token.")
        stdio_user_id.set(user.pk)
        build_server(with_auth=False).run("stdio")
