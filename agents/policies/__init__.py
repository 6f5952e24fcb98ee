"""Clarification policies: pure Python, a Situation in, a Decision out (docs/policies.md).

Importing this package registers the built-in policies; use `get_policy(name)`.
"""

from __future__ import annotations

# Importing the modules registers the built-in policies.
from agents.policies import (  # noqa: F401
    ask_once,
    ask_when_blocked,
    bandit,
    intent_sampling,
    llm_judge,
    never,
    value_of_information,
)
from agents.policies.base import (
    ACTIONS,
    Action,
    Ambiguity,
    AskingBudget,
    Assumption,
    Conflict,
    Decision,
    Interpretation,
    Question,
    Signals,
    Situation,
    SlotSpec,
    SlotState,
)
from agents.policies.registry import (
    DEFAULT_POLICY,
    POLICY_NAMES,
    LearningPolicy,
    Policy,
    UnknownPolicyError,
    get_policy,
    register,
    registered_names,
    resolve_policy_name,
)

__all__ = [
    "ACTIONS",
    "DEFAULT_POLICY",
    "POLICY_NAMES",
    "Action",
    "Ambiguity",
    "AskingBudget",
    "Assumption",
    "Conflict",
    "Decision",
    "Interpretation",
    "LearningPolicy",
    "Policy",
    "Question",
    "Signals",
    "Situation",
    "SlotSpec",
    "SlotState",
    "UnknownPolicyError",
    "get_policy",
    "register",
    "registered_names",
    "resolve_policy_name",
]
