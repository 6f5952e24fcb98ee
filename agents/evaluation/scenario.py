"""Scenario sets: simulated users with hidden intents and preferences, their sessions and
episodes (docs/evaluation.md). Loaded from JSON, validated against scenario.schema.json with
`jsonschema`, then checked for consistency (users exist, slots belong to the template, what the
request "states" really is in the request...).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema

from agents.policies.templates import TemplateError, get_template

SCHEMA_PATH = Path(__file__).resolve().parent / "scenario.schema.json"
SCENARIO_DIR = Path(__file__).resolve().parent / "scenarios"


class ScenarioError(ValueError):
    """A scenario file that does not follow the format, with every problem found."""

    def __init__(self, origin: str, problems: Sequence[str]) -> None:
        self.origin = origin
        self.problems = list(problems)
        super().__init__(f"{origin}: " + "; ".join(self.problems[:10]))


@cache
def schema() -> dict[str, Any]:
    return dict(json.loads(SCHEMA_PATH.read_text(encoding="utf-8")))


@dataclass(frozen=True)
class Preference:
    id: str
    key: str
    text: str
    check: Mapping[str, Any]

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Preference:
        return cls(
            id=str(data["id"]), key=str(data["key"]), text=str(data["text"]), check=data["check"]
        )


@dataclass(frozen=True)
class PreferenceChange:
    from_session: int
    preference: Preference


@dataclass(frozen=True)
class User:
    id: str
    name: str
    persona: str
    preferences: tuple[Preference, ...] = ()
    changes: tuple[PreferenceChange, ...] = ()
    patience: int = 6

    def preferences_in(self, session: int) -> tuple[Preference, ...]:
        """The preferences this person holds in `session`: a change replaces the preference with
        the same key from its session on (the latest applicable change wins)."""
        by_key = {p.key: p for p in self.preferences}
        for change in sorted(self.changes, key=lambda c: c.from_session):
            if change.from_session <= session:
                by_key[change.preference.key] = change.preference
        return tuple(by_key.values())

    def changed_in(self, session: int) -> tuple[Preference, ...]:
        """Preferences that take effect by a change exactly in `session`."""
        return tuple(c.preference for c in self.changes if c.from_session == session)


@dataclass(frozen=True)
class Task:
    title: str
    template: str | None = None
    goal: str = ""
    document: str = ""


@dataclass(frozen=True)
class Episode:
    id: str
    user: str
    session: int
    task: Task
    request: str
    slots: Mapping[str, str]
    stated: Mapping[str, str]
    needs_clarification: bool
    clarification_slots: tuple[str, ...]
    success: tuple[Mapping[str, Any], ...]
    notes: str = ""

    @property
    def hidden(self) -> dict[str, str]:
        """Slot values the request does not state: the person knows them, the agent does not."""
        return {k: v for k, v in self.slots.items() if k not in self.stated}


@dataclass(frozen=True)
class ScenarioSet:
    name: str
    today: date
    users: Mapping[str, User]
    episodes: tuple[Episode, ...]
    description: str = ""
    origin: str = ""
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False)

    @property
    def sessions(self) -> tuple[int, ...]:
        return tuple(sorted({e.session for e in self.episodes}))

    def ordered(self, max_sessions: int | None = None) -> list[Episode]:
        """Episodes in the order they are played: session by session, each person's episodes in
        file order within a session."""
        chosen = [e for e in self.episodes if max_sessions is None or e.session <= max_sessions]
        return sorted(chosen, key=lambda e: e.session)  # stable: file order inside a session


def _schema_problems(data: Any) -> list[str]:
    validator = jsonschema.Draft202012Validator(schema())
    problems = []
    for error in sorted(validator.iter_errors(data), key=lambda e: list(e.path)):
        where = "/".join(str(p) for p in error.path) or "(top)"
        problems.append(f"{where}: {error.message[:200]}")
    return problems


def _consistency_problems(data: Mapping[str, Any]) -> list[str]:
    problems: list[str] = []
    users = {u["id"]: u for u in data["users"]}
    if len(users) != len(data["users"]):
        problems.append("users: duplicate user id")
    seen: set[str] = set()
    for user in data["users"]:
        keys = [p["key"] for p in user["preferences"]]
        if len(keys) != len(set(keys)):
            problems.append(f"user {user['id']}: two preferences with the same key")
    for episode in data["episodes"]:
        where = f"episode {episode['id']}"
        if episode["id"] in seen:
            problems.append(f"{where}: duplicate id")
        seen.add(episode["id"])
        if episode["user"] not in users:
            problems.append(f"{where}: unknown user {episode['user']!r}")
        kind = episode["task"].get("template")
        names: set[str] | None = None
        if kind:
            try:
                names = {s.name for s in get_template(kind).slots}
            except TemplateError:
                problems.append(f"{where}: unknown template {kind!r}")
        for slot in [*episode["slots"], *episode["stated"], *episode["clarification"]["slots"]]:
            if names is not None and slot not in names:
                problems.append(f"{where}: slot {slot!r} is not in template {kind}")
        for slot, words in episode["stated"].items():
            if slot not in episode["slots"]:
                problems.append(f"{where}: stated slot {slot!r} has no value in slots")
            if words.casefold() not in episode["request"].casefold():
                problems.append(f"{where}: stated words {words!r} are not in the request")
        clar = episode["clarification"]
        for slot in clar["slots"]:
            if slot in episode["stated"]:
                problems.append(f"{where}: clarification slot {slot!r} is stated by the request")
            if slot not in episode["slots"]:
                problems.append(f"{where}: clarification slot {slot!r} has no hidden value")
        if clar["needed"] != bool(clar["slots"]):
            problems.append(
                f"{where}: clarification.needed must be true exactly when it names slots"
            )
    return problems


def parse_scenarios(data: Any, *, origin: str = "<data>") -> ScenarioSet:
    """Validate and build a ScenarioSet; raises ScenarioError listing every problem."""
    problems = _schema_problems(data)
    if problems:
        raise ScenarioError(origin, problems)
    problems = _consistency_problems(data)
    if problems:
        raise ScenarioError(origin, problems)
    users = {
        u["id"]: User(
            id=u["id"],
            name=u["name"],
            persona=u["persona"],
            patience=int(u.get("patience", 6)),
            preferences=tuple(Preference.from_dict(p) for p in u["preferences"]),
            changes=tuple(
                PreferenceChange(
                    from_session=int(c["from_session"]),
                    preference=Preference.from_dict(c["preference"]),
                )
                for c in u.get("changes", ())
            ),
        )
        for u in data["users"]
    }
    episodes = tuple(
        Episode(
            id=e["id"],
            user=e["user"],
            session=int(e["session"]),
            task=Task(
                title=e["task"]["title"],
                template=e["task"].get("template"),
                goal=e["task"].get("goal", ""),
                document=e["task"].get("document", ""),
            ),
            request=e["request"],
            slots=dict(e["slots"]),
            stated=dict(e["stated"]),
            needs_clarification=bool(e["clarification"]["needed"]),
            clarification_slots=tuple(e["clarification"]["slots"]),
            success=tuple(e["success"]),
            notes=e.get("notes", ""),
        )
        for e in data["episodes"]
    )
    return ScenarioSet(
        name=data["name"],
        today=date.fromisoformat(data["today"]),
        users=users,
        episodes=episodes,
        description=data.get("description", ""),
        origin=origin,
        raw=data,
    )


def load_scenarios(path: str | Path) -> ScenarioSet:
    """Read a scenario file (a path, or a name of a shipped set such as "default")."""
    candidate = Path(path)
    if not candidate.exists() and (SCENARIO_DIR / f"{path}.json").exists():
        candidate = SCENARIO_DIR / f"{path}.json"
    try:
        data = json.loads(candidate.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ScenarioError(str(path), [str(exc)]) from exc
    return parse_scenarios(data, origin=str(candidate))


def shipped_scenario_files() -> list[Path]:
    return sorted(SCENARIO_DIR.glob("*.json"))
