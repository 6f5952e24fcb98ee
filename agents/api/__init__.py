"""The agents' part of the JSON API, mounted by the API root (collab/api/api.py) beside the
platform's routes: one module per area, each with its own router.

- ``feedback``: rating an agent's work (``/api/tasks/{id}/feedback``);
- ``work``: the agents' questions and suggestions on a task;
- ``agents``: a workspace's agents, and the agents on a task;
- ``turns``: the agents' turns on a task;
- ``memory``: the caller's own memory;
- ``review``: traces, a turn's trace and exports, for owners and staff;
- ``outside``: outside agents and what their programs call (issue 29).
"""

from __future__ import annotations

from ninja import Router

from agents.api import agents, feedback, memory, outside, review, turns, work

# Mounted under /api/tasks.
TASK_ROUTERS: tuple[Router, ...] = (
    feedback.router,
    work.router,
    agents.task_router,
    turns.router,
    review.task_router,
)
# Mounted under /api/workspaces.
WORKSPACE_ROUTERS: tuple[Router, ...] = (
    agents.workspace_router,
    review.workspace_router,
    outside.workspace_router,
)
# Mounted under /api/review (staff).
REVIEW_ROUTER: Router = review.site_router
# Mounted under /api/memory.
MEMORY_ROUTER: Router = memory.router
# Mounted under /api/models: the models an agent can be given.
MODELS_ROUTER: Router = agents.models_router
# Mounted under /api/outside: what an outside agent's program calls.
OUTSIDE_ROUTER: Router = outside.router
