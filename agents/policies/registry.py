"""The policy registry: the `Policy` protocol, the built-in policies' names, `register` (a
policy module registers its class on import), `get_policy` and the name resolution a workspace
or an agent's setting goes through. Pure Python, like base.py.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from agents.policies.base import Decision, Situation


@runtime_checkable
class Policy(Protocol):
    """A clarification policy: decides, for one turn, whether to ask, suggest or act."""

    name: str

    def decide(self, situation: Situation) -> Decision: ...


@runtime_checkable
class LearningPolicy(Policy, Protocol):
    """A policy that learns from feedback and keeps JSON-serialisable state."""

    def learn(self, decision: Decision, reward: float) -> None: ...

    def to_state(self) -> dict[str, Any]: ...


# A factory builds a policy from keyword options (for example `state=` for a learning policy).
PolicyFactory = Callable[..., Policy]

_REGISTRY: dict[str, PolicyFactory] = {}

# The built-in policies, in the order a settings page lists them. Stable: safe for model choices.
POLICY_NAMES: tuple[str, ...] = (
    "never",
    "ask_once",
    "llm_judge",
    "intent_sampling",
    "value_of_information",
    "bandit",
    "ask_when_blocked",
)
# What every new agent gets (the Agent model's field default, the form, docs/policies.md).
DEFAULT_POLICY = "ask_when_blocked"


class UnknownPolicyError(KeyError):
    pass


def register(name: str) -> Callable[[PolicyFactory], PolicyFactory]:
    """Register a policy factory (usually the policy class) under `name`."""

    def decorator(factory: PolicyFactory) -> PolicyFactory:
        if name in _REGISTRY and _REGISTRY[name] is not factory:
            raise ValueError(f"policy {name!r} is already registered")
        _REGISTRY[name] = factory
        return factory

    return decorator


def get_policy(name: str, **options: Any) -> Policy:
    """Build the policy registered as `name`; options go to its factory."""
    try:
        factory = _REGISTRY[name]
    except KeyError:
        raise UnknownPolicyError(name) from None
    return factory(**options)


def registered_names() -> tuple[str, ...]:
    """Every registered policy name: the built-ins first, then any added by plug-ins."""
    return tuple(n for n in POLICY_NAMES if n in _REGISTRY) + tuple(
        sorted(n for n in _REGISTRY if n not in POLICY_NAMES)
    )


def resolve_policy_name(*candidates: str | None) -> str:
    """The first registered name among `candidates` (e.g. workspace override, agent default),
    else DEFAULT_POLICY."""
    for name in candidates:
        if name and name in _REGISTRY:
            return name
    return DEFAULT_POLICY


def known_policy(name: str) -> bool:
    """Whether `name` is a registered policy that builds."""
    try:
        get_policy(name)
    except UnknownPolicyError:
        return False
    return True
