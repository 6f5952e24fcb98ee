"""The agents' part of the JSON API, mounted by the API root (collab/api/api.py) beside the
platform's routes: one module per area, each with its own router.

- ``feedback``: rating an agent's work (``/api/tasks/{id}/feedback``);
- ``work``: the agents' questions and suggestions on a task.
"""

from __future__ import annotations

from ninja import Router

from agents.api import feedback, work

# Mounted under /api/tasks.
TASK_ROUTERS: tuple[Router, ...] = (feedback.router, work.router)
