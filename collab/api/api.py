"""The JSON API under /api/ (django-ninja).

The OpenAPI schema is at /api/openapi.json and an interactive page at /api/docs (served from
our own static files, no network needed). See docs/api.md.

Part of the composition root (with settings, urls, asgi, celery): the one place of the API that
may import ``agents`` (the agents' routes live in the agents/api/ package, the evaluation
harness's in agents/evaluation/api.py).
"""

from __future__ import annotations

from ninja import NinjaAPI, Swagger

from agents import api as agents_api
from collab.api import audit, documents, members, tasks, tokens, workspaces
from collab.api.auth import BearerToken, BrowserSession
from collab.api.errors import install_error_handlers

api = NinjaAPI(
    title="Collab API",
    version="1",
    description=(
        "Workspaces, tasks and chat of Collab. Authenticate with a personal API token from "
        "your settings page: `Authorization: Bearer <token>`. Errors answer "
        '`{"detail": "..."}`; a 400 adds `"errors": {"field": ["reason"]}`.'
    ),
    urls_namespace="api",
    auth=[BearerToken(), BrowserSession()],
    # Swagger UI would otherwise ask an online validator about our schema.
    docs=Swagger(settings={"validatorUrl": None}),
)
install_error_handlers(api)
api.add_router("/workspaces", workspaces.router)
api.add_router("/workspaces", members.router)
api.add_router("/invitations", members.invitation_router)
api.add_router("/workspaces", audit.workspace_router)
api.add_router("/audit", audit.site_router)
api.add_router("/tokens", tokens.router)
api.add_router("/tasks", tasks.router)
api.add_router("/tasks", documents.router)
# The API root is part of the composition root: it may mount the agents' routes too.
for router in agents_api.TASK_ROUTERS:
    api.add_router("/tasks", router)
for router in agents_api.WORKSPACE_ROUTERS:
    api.add_router("/workspaces", router)
for router in agents_api.MEMORY_ROUTERS:
    api.add_router("/memory", router)
for router in agents_api.REVIEW_ROUTERS:
    api.add_router("/review", router)
# The evaluation harness keeps its own routes, named by a string as collab/urls.py names its
# pages: production code never imports the harness (.importlinter).
api.add_router("/evaluation", "agents.evaluation.api.router")
api.add_router("/outside", agents_api.OUTSIDE_ROUTER)
api.add_router("/models", agents_api.MODELS_ROUTER)
