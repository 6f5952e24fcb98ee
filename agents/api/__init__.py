"""The agents' part of the JSON API, mounted by the API root (collab/api/api.py) beside the
platform's routes: one module per area, each with its own router.

- ``feedback``: rating an agent's work (``/api/tasks/{id}/feedback``);
- ``work``: the agents' questions and suggestions on a task;
- ``agents``: a workspace's agents, and the agents on a task;
- ``turns``: the agents' turns on a task;
- ``plans``: a task's shared plan (read it, tick a step, give a step to someone);
- ``memory`` and ``memory_inbox``: the caller's own memory;
- ``review`` and ``usage``: traces, a turn's trace, exports and usage, for owners and staff;
- ``model_profiles``: the models an agent can be given, and the Models page (staff);
- ``outside``: outside agents and what their programs call (issue 29).
"""

from __future__ import annotations

from ninja import Router

from agents.api import (
    agents,
    feedback,
    memory,
    memory_inbox,
    model_profiles,
    outside,
    plans,
    review,
    turns,
    usage,
    work,
)

# Mounted under /api/tasks.
TASK_ROUTERS: tuple[Router, ...] = (
    feedback.router,
    work.router,
    agents.task_router,
    turns.router,
    review.task_router,
    plans.router,
)
# Mounted under /api/workspaces.
WORKSPACE_ROUTERS: tuple[Router, ...] = (
    agents.workspace_router,
    review.workspace_router,
    usage.workspace_router,
    outside.workspace_router,
)
# Mounted under /api/review (staff).
REVIEW_ROUTERS: tuple[Router, ...] = (review.site_router, usage.site_router)
# Mounted under /api/memory.
MEMORY_ROUTERS: tuple[Router, ...] = (memory.router, memory_inbox.router)
# Mounted under /api/models: the models an agent can be given, and the Models page (staff).
MODELS_ROUTER: Router = model_profiles.router

# Mounted under /api/outside: what an outside agent's program calls.
OUTSIDE_ROUTER: Router = outside.router
