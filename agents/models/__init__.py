"""Agents, their model profiles, and the full record of every turn they take.

A turn's life: queued → running → (waiting for a person) → done, failed or cancelled. Each
decided action is stored before it is applied and carries an idempotency key, so a job that is
delivered twice (a worker killed mid-turn) never applies an action twice.
"""

from __future__ import annotations

from agents.models.agents import (
    AGENT_FIELDS,
    AGENT_NAME_RE,
    Agent,
    AgentMode,
)
from agents.models.chains import Chain, Hop
from agents.models.feedback import (
    FEEDBACK_COMMENT_MAX,
    FEEDBACK_TARGETS,
    Feedback,
    PolicyState,
)
from agents.models.outside import (
    Activity,
    ActivityKind,
    Delivery,
    OutsideAgent,
    OutsideSecret,
    RemoteTask,
)
from agents.models.plans import Plan, PlanStep
from agents.models.profiles import (
    ENV_NAME_RE,
    ModelProfile,
    Provider,
)
from agents.models.turns import (
    ACTIVE_STATUSES,
    FINAL_STATUSES,
    Action,
    ActionKind,
    HopKind,
    ModelCall,
    Trigger,
    Turn,
    TurnStatus,
)
from agents.models.work import (
    AgentNote,
    Assumption,
    Question,
    Suggestion,
)

__all__ = [
    "ACTIVE_STATUSES",
    "AGENT_FIELDS",
    "AGENT_NAME_RE",
    "ENV_NAME_RE",
    "FEEDBACK_COMMENT_MAX",
    "FEEDBACK_TARGETS",
    "FINAL_STATUSES",
    "Action",
    "ActionKind",
    "Activity",
    "ActivityKind",
    "Agent",
    "AgentMode",
    "AgentNote",
    "Assumption",
    "Chain",
    "Delivery",
    "Feedback",
    "Hop",
    "HopKind",
    "ModelCall",
    "ModelProfile",
    "OutsideAgent",
    "OutsideSecret",
    "Plan",
    "PlanStep",
    "PolicyState",
    "Provider",
    "Question",
    "RemoteTask",
    "Suggestion",
    "Trigger",
    "Turn",
    "TurnStatus",
]
