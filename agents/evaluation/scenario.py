"""Scenario sets: simulated users with hidden intents and preferences, their sessions and
episodes (docs/evaluation.md). Loaded from JSON, validated with `jsonschema` against
scenario.schema.json (format 1) or scenario.v2.schema.json (format 2), then checked for
consistency (users exist, slots belong to the template, what the request "states" really is in
the request, evidence is where it is said to be...).

Both formats load into the same classes; a format-1 file reads as format 2 with one date for
every episode, "stated" slots in the request, every other slot hidden, and the category "clear"
or "missing". Everything the scorer uses (hidden values, blockers, categories, conflicts,
readings, checks) lives on these classes; the agent is only ever given what a turn context holds
(agents/evaluation/context.py builds it).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema

from agents.policies.templates import (
    TaskTemplate,
    TemplateError,
    get_template,
    load_templates,
    parse_template,
)

SCHEMA_PATH = Path(__file__).resolve().parent / "scenario.schema.json"
SCHEMA_V2_PATH = Path(__file__).resolve().parent / "scenario.v2.schema.json"
CATEGORIES = ("clear", "missing", "ambiguous", "contradictory")
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
# Where a slot's value can be found by the agent (format 2 "in").
VISIBLE_SOURCES = ("request", "document", "context")
SCENARIO_DIR = Path(__file__).resolve().parent / "scenarios"


class ScenarioError(ValueError):
    """A scenario file that does not follow the format, with every problem found."""

    def __init__(self, origin: str, problems: Sequence[str]) -> None:
        self.origin = origin
        self.problems = list(problems)
        super().__init__(f"{origin}: " + "; ".join(self.problems[:10]))


@cache
def schema(version: int = 1) -> dict[str, Any]:
    path = SCHEMA_V2_PATH if version == 2 else SCHEMA_PATH
    return dict(json.loads(path.read_text(encoding="utf-8")))


@dataclass(frozen=True)
class Preference:
    """What a person wants of the work. `key` / `value` are what a memory store extracts (the
    structured keys of SHARED_CONTRACTS.md); `check` is the scorer's, never shown to the agent or
    the writer; `kinds` limits it to some kinds of work (empty: all). An asking preference
    (`key` "asking") has no check: it is scored on the conversation."""

    id: str
    key: str
    text: str
    check: Mapping[str, Any] | None = None
    value: str = ""
    kinds: tuple[str, ...] = ()
    remembered: bool = False

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Preference:
        return cls(
            id=str(data["id"]),
            key=str(data["key"]),
            text=str(data["text"]),
            check=data.get("check"),
            value=str(data.get("value", "")),
            kinds=tuple(str(k) for k in data.get("kinds", ())),
            remembered=bool(data.get("remembered", False)),
        )

    def applies_to(self, kind: str | None) -> bool:
        return not self.kinds or (kind is not None and kind in self.kinds)

    @property
    def slot_name(self) -> str | None:
        return self.key[5:] if self.key.startswith("slot:") else None


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
class Conflict:
    """Two (or more) places that give one slot different values."""

    slot: str
    values: tuple[tuple[str, str], ...]  # (where: request/document/memory/chat, value)


@dataclass(frozen=True)
class Closing:
    """What the person says when done, stating a preference in force from their next episode."""

    text: str
    preference: Preference


@dataclass(frozen=True)
class Episode:
    id: str
    user: str
    session: int
    task: Task
    request: str
    slots: Mapping[str, str]  # slot -> the value the person means (scorer only)
    stated: Mapping[str, str]  # slot -> the words that state it (request, document or context)
    needs_clarification: bool
    clarification_slots: tuple[str, ...]  # the blockers (scorer only)
    success: tuple[Mapping[str, Any], ...]
    notes: str = ""
    # Format 2 (a format-1 file fills them from the above).
    date: date | None = None  # the day of the request (None: the set's today)
    category: str = ""
    split: str = ""
    sources: Mapping[str, str] = field(default_factory=dict)  # slot -> request/document/...
    readings: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    slot_replies: Mapping[str, str] = field(default_factory=dict)
    conflicts: tuple[Conflict, ...] = ()
    announces: tuple[Preference, ...] = ()
    exempt: tuple[str, ...] = ()
    closing: Closing | None = None
    chat: tuple[tuple[str, str], ...] = ()  # (user id, text) already in the chat
    reply_extra: str = ""
    template_def: TaskTemplate | None = field(default=None, compare=False, repr=False)
    # A multi-agent episode (issue 30, ``teams.py``): its agents and outcome checks; None for
    # the one-agent episodes every other mode plays.
    team: Mapping[str, Any] | None = field(default=None, compare=False)

    @property
    def hidden(self) -> dict[str, str]:
        """Slot values the request does not state: the person knows them, the agent does not."""
        return {k: v for k, v in self.slots.items() if k not in self.stated}

    @property
    def kind(self) -> str:
        return self.category or ("missing" if self.needs_clarification else "clear")

    def source(self, slot: str) -> str:
        return self.sources.get(slot, "request" if slot in self.stated else "hidden")

    @property
    def weekday(self) -> str:
        return WEEKDAYS[self.date.weekday()] if self.date else ""


@dataclass(frozen=True)
class ScenarioSet:
    name: str
    today: date
    users: Mapping[str, User]
    episodes: tuple[Episode, ...]
    description: str = ""
    origin: str = ""
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False)
    version: int = 1
    templates: Mapping[str, TaskTemplate] = field(default_factory=dict, repr=False)

    def day(self, episode: Episode) -> date:
        """The date of an episode's request."""
        return episode.date or self.today

    def splits(self) -> tuple[str, ...]:
        return tuple(sorted({e.split for e in self.episodes if e.split}))

    def only(self, split: str | None) -> ScenarioSet:
        """The set restricted to one split ("dev" / "test"); None or "all": unchanged."""
        if not split or split == "all":
            return self
        chosen = tuple(e for e in self.episodes if e.split == split)
        if not chosen:
            raise ScenarioError(self.origin or self.name, [f"no episode in split {split!r}"])
        return replace(self, episodes=chosen)

    def in_force(self) -> dict[str, tuple[Preference, ...]]:
        """Per episode id, the preferences its person holds when the episode starts: the user's
        preferences and changes for that session, then every closing remark of an earlier
        episode of theirs and every change announced in an earlier or this request (the latest
        per key wins)."""
        out: dict[str, tuple[Preference, ...]] = {}
        told: dict[str, dict[str, Preference]] = {}
        for episode in self.ordered():
            user = self.users[episode.user]
            by_key = {p.key: p for p in user.preferences_in(episode.session)}
            said = told.setdefault(episode.user, {})
            for pref in episode.announces:
                said[pref.key] = pref
            by_key.update(said)
            out[episode.id] = tuple(by_key.values())
            if episode.closing is not None:
                said[episode.closing.preference.key] = episode.closing.preference
        return out

    def ledger(self) -> PreferenceLedger:
        """What each person of the set has actually said, kept as episodes are played."""
        return PreferenceLedger(self)

    def scored(self, episode: Episode, held: Sequence[Preference]) -> tuple[Preference, ...]:
        """The preferences an episode is scored on: held, about this kind of work, not exempt."""
        return tuple(
            p for p in held if p.applies_to(episode.task.template) and p.key not in episode.exempt
        )

    @property
    def sessions(self) -> tuple[int, ...]:
        return tuple(sorted({e.session for e in self.episodes}))

    def ordered(self, max_sessions: int | None = None) -> list[Episode]:
        """Episodes in the order they are played: session by session, each person's episodes in
        file order within a session."""
        chosen = [e for e in self.episodes if max_sessions is None or e.session <= max_sessions]
        return sorted(chosen, key=lambda e: e.session)  # stable: file order inside a session


def _schema_problems(data: Any) -> list[str]:
    version = data.get("version") if isinstance(data, dict) else None
    validator = jsonschema.Draft202012Validator(schema(2 if version == 2 else 1))
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


def _squash(text: str) -> str:
    return " ".join(text.casefold().split())


def _file_templates(data: Mapping[str, Any], problems: list[str]) -> dict[str, TaskTemplate]:
    found: dict[str, TaskTemplate] = {}
    for index, raw in enumerate(data.get("templates", ())):
        where = f"templates/{index}"
        if raw.get("kind") in load_templates():
            problems.append(f"{where}: kind {raw['kind']!r} is a shipped template; pick a new one")
            continue
        if raw.get("kind") in found:
            problems.append(f"{where}: duplicate kind {raw['kind']!r}")
            continue
        try:
            found[raw["kind"]] = parse_template(raw, origin=where)
        except TemplateError as exc:
            problems.append(str(exc))
    return found


def _v2_problems(data: Mapping[str, Any], templates: Mapping[str, TaskTemplate]) -> list[str]:
    problems: list[str] = []
    users = {u["id"]: u for u in data["users"]}
    if len(users) != len(data["users"]):
        problems.append("users: duplicate user id")
    held_slots: dict[str, set[str]] = {}
    for user in data["users"]:
        keys = [p["key"] for p in user["preferences"]]
        if len(keys) != len(set(keys)):
            problems.append(f"user {user['id']}: two preferences with the same key")
        prefs = [*user["preferences"], *(c["preference"] for c in user.get("changes", ()))]
        held_slots[user["id"]] = {p["key"][5:] for p in prefs if p["key"].startswith("slot:")}
    seen: set[str] = set()
    for episode in data["episodes"]:
        where = f"episode {episode['id']}"
        if episode["id"] in seen:
            problems.append(f"{where}: duplicate id")
        seen.add(episode["id"])
        if episode["user"] not in users:
            problems.append(f"{where}: unknown user {episode['user']!r}")
        for line in episode.get("chat", ()):
            if line["user"] not in users:
                problems.append(f"{where}: chat line by unknown user {line['user']!r}")
        if "date" not in episode and "today" not in data:
            problems.append(f"{where}: no date (give the episode a date or the set a today)")
        day = date.fromisoformat(episode.get("date") or data.get("today") or "2000-01-01")
        if "weekday" in episode and episode["weekday"] != WEEKDAYS[day.weekday()]:
            problems.append(f"{where}: {day.isoformat()} is a {WEEKDAYS[day.weekday()]}")
        kind = episode["task"].get("template")
        template = None
        if kind:
            template = templates.get(kind)
            if template is None:
                try:
                    template = get_template(kind)
                except TemplateError:
                    problems.append(f"{where}: unknown template {kind!r}")
        names = {s.name for s in template.slots} if template else None
        request = _squash(episode["request"])
        document = _squash(episode["task"].get("document", ""))
        chat = _squash(" ".join(line["text"] for line in episode.get("chat", ())))
        context = " ".join(
            [
                request,
                document,
                chat,
                _squash(episode["task"]["title"]),
                _squash(episode["task"].get("goal", "")),
            ]
        )
        slots = episode["slots"]
        for name, slot in slots.items():
            if names is not None and name not in names:
                problems.append(f"{where}: slot {name!r} is not in template {kind}")
            evidence = _squash(slot.get("evidence", ""))
            place = slot["in"]
            haystack = {"request": request, "document": document, "context": context}.get(place)
            if haystack is not None:
                if not evidence:
                    problems.append(f"{where}: slot {name!r} is in the {place} but has no evidence")
                elif evidence not in haystack:
                    problems.append(f"{where}: evidence {slot['evidence']!r} is not in the {place}")
            if place == "memory" and name not in held_slots.get(episode["user"], set()):
                problems.append(
                    f"{where}: slot {name!r} is in memory but the person holds no slot:{name}"
                )
            readings = slot.get("readings")
            if readings and not any(_squash(slot["value"]) == _squash(r) for r in readings):
                problems.append(f"{where}: slot {name!r}: the value is not one of its readings")
        conflicted = {c["slot"] for c in episode.get("conflicts", ())}
        for conflict in episode.get("conflicts", ()):
            if conflict["slot"] not in slots:
                problems.append(f"{where}: conflict on {conflict['slot']!r} has no slot value")
            for value in conflict["values"]:
                found = {"request": request, "document": document, "chat": chat}.get(value["in"])
                evidence = _squash(value.get("evidence", "") or value["value"])
                if found is not None and evidence not in found:
                    problems.append(
                        f"{where}: conflicting value {value['value']!r} is not in the {value['in']}"
                    )
        ambiguous = {n for n, s in slots.items() if s.get("readings")}
        for blocker in episode["blockers"]:
            if blocker not in slots:
                problems.append(f"{where}: blocker {blocker!r} has no slot value")
            elif (
                slots[blocker]["in"] not in ("hidden", "memory")
                and blocker not in ambiguous
                and blocker not in conflicted
            ):
                problems.append(
                    f"{where}: blocker {blocker!r} is stated plainly (not hidden, ambiguous "
                    "or in conflict)"
                )
        category = episode["category"]
        blockers = set(episode["blockers"])
        if category == "clear" and blockers:
            problems.append(f"{where}: a clear episode has no blockers")
        if category == "missing" and not any(
            slots.get(b, {}).get("in") == "hidden" for b in blockers
        ):
            problems.append(f"{where}: a missing episode needs a hidden blocker")
        if category == "ambiguous" and not blockers & ambiguous:
            problems.append(f"{where}: an ambiguous episode needs a blocker with readings")
        if category == "contradictory" and not conflicted:
            problems.append(f"{where}: a contradictory episode needs a conflict")
        for pref in episode.get("announces", ()):
            if not any(
                _squash(part) in request for part in re.split(r"[.;!?]\s*", pref["text"]) if part
            ):
                problems.append(
                    f"{where}: announced preference {pref['id']!r} is not in the request"
                )
    return problems


def _parse_v1(data: Mapping[str, Any], origin: str) -> ScenarioSet:
    users = {u["id"]: _user(u) for u in data["users"]}
    today = date.fromisoformat(data["today"])
    episodes = []
    for e in data["episodes"]:
        template = get_template(e["task"]["template"]) if e["task"].get("template") else None
        stated = dict(e["stated"])
        needed = bool(e["clarification"]["needed"])
        episodes.append(
            Episode(
                id=e["id"],
                user=e["user"],
                session=int(e["session"]),
                task=_task(e["task"]),
                request=e["request"],
                slots=dict(e["slots"]),
                stated=stated,
                needs_clarification=needed,
                clarification_slots=tuple(e["clarification"]["slots"]),
                success=tuple(e["success"]),
                notes=e.get("notes", ""),
                date=today,
                category="missing" if needed else "clear",
                sources={s: "request" if s in stated else "hidden" for s in e["slots"]},
                template_def=template,
            )
        )
    return ScenarioSet(
        name=data["name"],
        today=today,
        users=users,
        episodes=tuple(episodes),
        description=data.get("description", ""),
        origin=origin,
        raw=data,
        version=1,
    )


def _user(u: Mapping[str, Any]) -> User:
    return User(
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


def _task(t: Mapping[str, Any]) -> Task:
    return Task(
        title=t["title"],
        template=t.get("template"),
        goal=t.get("goal", ""),
        document=t.get("document", ""),
    )


def _parse_v2(
    data: Mapping[str, Any], origin: str, templates: Mapping[str, TaskTemplate]
) -> ScenarioSet:
    users = {u["id"]: _user(u) for u in data["users"]}
    default_day = date.fromisoformat(data["today"]) if data.get("today") else None
    episodes = []
    for e in data["episodes"]:
        kind = e["task"].get("template")
        template = (templates.get(kind) or get_template(kind)) if kind else None
        slots = e["slots"]
        stated = {
            name: str(s.get("evidence") or s["value"])
            for name, s in slots.items()
            if s["in"] in VISIBLE_SOURCES
        }
        closing = e.get("closing")
        day = date.fromisoformat(e["date"]) if e.get("date") else default_day
        episodes.append(
            Episode(
                id=e["id"],
                user=e["user"],
                session=int(e["session"]),
                task=_task(e["task"]),
                request=e["request"],
                slots={name: str(s["value"]) for name, s in slots.items()},
                stated=stated,
                needs_clarification=bool(e["blockers"]),
                clarification_slots=tuple(e["blockers"]),
                success=tuple(e["success"]),
                notes=e.get("notes", ""),
                date=day,
                category=e["category"],
                split=e.get("split", ""),
                sources={name: s["in"] for name, s in slots.items()},
                readings={
                    name: tuple(s["readings"]) for name, s in slots.items() if s.get("readings")
                },
                slot_replies={name: s["reply"] for name, s in slots.items() if s.get("reply")},
                conflicts=tuple(
                    Conflict(
                        slot=c["slot"], values=tuple((v["in"], v["value"]) for v in c["values"])
                    )
                    for c in e.get("conflicts", ())
                ),
                announces=tuple(Preference.from_dict(p) for p in e.get("announces", ())),
                exempt=tuple(e.get("exempt", ())),
                closing=(
                    Closing(
                        text=closing["text"], preference=Preference.from_dict(closing["preference"])
                    )
                    if closing
                    else None
                ),
                chat=tuple((line["user"], line["text"]) for line in e.get("chat", ())),
                reply_extra=e.get("reply_extra", ""),
                template_def=template,
                team=e.get("team"),
            )
        )
    days = [e.date for e in episodes if e.date]
    return ScenarioSet(
        name=data["name"],
        today=default_day or min(days),
        users=users,
        episodes=tuple(episodes),
        description=data.get("description", ""),
        origin=origin,
        raw=data,
        version=2,
        templates=dict(templates),
    )


def parse_scenarios(data: Any, *, origin: str = "<data>") -> ScenarioSet:
    """Validate and build a ScenarioSet (format 1 or 2); raises ScenarioError listing every
    problem."""
    problems = _schema_problems(data)
    if problems:
        raise ScenarioError(origin, problems)
    if data["version"] == 1:
        problems = _consistency_problems(data)
        if problems:
            raise ScenarioError(origin, problems)
        return _parse_v1(data, origin)
    template_problems: list[str] = []
    templates = _file_templates(data, template_problems)
    problems = template_problems + _v2_problems(data, templates)
    if problems:
        raise ScenarioError(origin, problems)
    return _parse_v2(data, origin, templates)


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


class PreferenceLedger:
    """The preferences each person holds and has said, as a run plays their episodes in order.

    Unlike `ScenarioSet.in_force` (the set as written: every closing remark counted as said), a
    closing remark's preference is held only once the person actually said it (`closed`: the
    episode ended with "done"), and from their next session on; an announced change holds from
    its own request. `stated` is what the person has said so far: remembered preferences,
    announced changes, closing remarks said and preferences restated in an episode. An asking
    limit the person never stated is theirs, but no agent can be scored on it.
    """

    def __init__(self, scenarios: ScenarioSet) -> None:
        self.scenarios = scenarios
        self.told: dict[str, dict[str, Preference]] = {}
        self.pending: dict[str, list[tuple[int, Preference]]] = {}
        self.said: dict[str, set[str]] = {
            user.id: {p.id for p in user.preferences if p.remembered}
            for user in scenarios.users.values()
        }

    def held(self, episode: Episode) -> tuple[Preference, ...]:
        """The preferences the person holds when `episode` starts (latest per key wins)."""
        user = self.scenarios.users[episode.user]
        told = self.told.setdefault(episode.user, {})
        waiting = self.pending.get(episode.user, [])
        for _session, pref in [w for w in waiting if w[0] < episode.session]:
            told[pref.key] = pref
        self.pending[episode.user] = [w for w in waiting if w[0] >= episode.session]
        for pref in episode.announces:
            told[pref.key] = pref
            self.said.setdefault(episode.user, set()).add(pref.id)
        by_key = {p.key: p for p in user.preferences_in(episode.session)}
        by_key.update(told)
        return tuple(by_key.values())

    def stated(self, user: str) -> frozenset[str]:
        return frozenset(self.said.get(user, ()))

    def restated(self, user: str, ids: Sequence[str]) -> None:
        self.said.setdefault(user, set()).update(ids)

    def closed(self, episode: Episode) -> None:
        """The person ended `episode` with its closing remark: its preference holds from their
        next session."""
        if episode.closing is None:
            return
        pref = episode.closing.preference
        self.pending.setdefault(episode.user, []).append((episode.session, pref))
        self.said.setdefault(episode.user, set()).add(pref.id)
