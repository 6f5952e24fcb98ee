"""The JSON API under /api/ (django-ninja); OpenAPI schema at /api/openapi.json."""

from __future__ import annotations

from ninja import NinjaAPI

api = NinjaAPI(title="Collab API", version="1", urls_namespace="api")
