"""Task templates: data files in agents/task_templates/*.toml, read with the standard library.

A template names a task kind and its slots (what the agent must know to do the task well), and
what the agent's skills (agents/skills) build from them: the document's sections (each with the
slots it shows), a checklist, risks and a rough effort; `{slot}` in their text is filled with
the slot's known value. A kind with `guess = false` is used when a task is made from it, or by
the skills, but the policy does not guess it from a free-form task's words. A file is
validated when loaded; a bad file raises `TemplateError` naming the file and the problem.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from agents.policies.base import SLOT_TYPES, SlotSpec

TEMPLATE_DIR = Path(__file__).resolve().parent.parent / "task_templates"

_NAME = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
_SLOT_KEYS = {
    "name",
    "type",
    "required",
    "label",
    "question",
    "choices",
    "default",
    "aliases",
    "choice_aliases",
    "units",
    "cues",
    "weight",
    "description",
    "examples",
    "from_title",
}
_TEMPLATE_KEYS = {
    "kind",
    "title",
    "description",
    "keywords",
    "skeleton",
    "slots",
    "guess",
    "sections",
    "checklist",
    "risks",
    "effort",
}
_PLACEHOLDER = re.compile(r"\{([a-z][a-z0-9_]*)\}")
MAX_SKELETON_CHARS = 2000


class TemplateError(ValueError):
    pass


@dataclass(frozen=True)
class Section:
    """A section of the kind's document: its heading, the slots it shows, and what it holds
    (said as a placeholder while nothing fills it)."""

    title: str
    slots: tuple[str, ...] = ()
    hint: str = ""


@dataclass(frozen=True)
class Line:
    """A checklist item or a risk: its text (``{slot}`` filled with the known value), shown
    only once the ``when`` slots are known (a risk about the budget needs a budget)."""

    text: str
    when: tuple[str, ...] = ()


@dataclass(frozen=True)
class Effort:
    """A rough effort for the kind: ``low`` to ``high`` ``unit`` for ``basis``, plus ``per_unit``
    for each unit of the ``per`` slot's known number (attendees, days, pages)."""

    low: float
    high: float
    unit: str = "hours"
    basis: str = ""
    per: str = ""
    per_unit: float = 0.0


@dataclass(frozen=True)
class TaskTemplate:
    kind: str
    title: str
    description: str = ""
    keywords: tuple[str, ...] = ()
    slots: tuple[SlotSpec, ...] = ()
    skeleton: str = ""  # markdown a new task's document starts with (headings, no values)
    guess: bool = True  # the policy may guess this kind from a free-form task's words
    sections: tuple[Section, ...] = ()
    checklist: tuple[Line, ...] = ()
    risks: tuple[Line, ...] = ()
    effort: Effort | None = None

    def slot(self, name: str) -> SlotSpec | None:
        for spec in self.slots:
            if spec.name == name:
                return spec
        return None

    @property
    def required(self) -> tuple[SlotSpec, ...]:
        return tuple(s for s in self.slots if s.required)


def parse_template(data: Mapping[str, Any], *, origin: str = "<data>") -> TaskTemplate:
    """Validate raw template data (as read from TOML or JSON) and build the template."""

    def fail(message: str) -> TemplateError:
        return TemplateError(f"{origin}: {message}")

    unknown = set(data) - _TEMPLATE_KEYS
    if unknown:
        raise fail(f"unknown keys {sorted(unknown)}")
    kind = data.get("kind")
    if not isinstance(kind, str) or not _NAME.match(kind):
        raise fail("'kind' must be a snake_case name")
    title = data.get("title")
    if not isinstance(title, str) or not title.strip():
        raise fail("'title' is required")
    skeleton = data.get("skeleton", "")
    if not isinstance(skeleton, str) or len(skeleton) > MAX_SKELETON_CHARS:
        raise fail(f"'skeleton' must be a string of at most {MAX_SKELETON_CHARS} characters")
    raw_slots = data.get("slots")
    if not isinstance(raw_slots, list) or not raw_slots:
        raise fail("at least one [[slots]] entry is required")
    slots: list[SlotSpec] = []
    for index, raw in enumerate(raw_slots):
        if not isinstance(raw, Mapping):
            raise fail(f"slot {index} is not a table")
        slots.append(_parse_slot(raw, fail=fail, index=index))
    names = [s.name for s in slots]
    if len(set(names)) != len(names):
        raise fail("slot names must be unique")
    if not any(s.required for s in slots):
        raise fail("at least one slot must be required")
    known = set(names)
    guess = data.get("guess", True)
    if not isinstance(guess, bool):
        raise fail("'guess' must be true or false")
    return TaskTemplate(
        kind=kind,
        title=title.strip(),
        description=str(data.get("description", "")).strip(),
        keywords=tuple(str(k).casefold() for k in data.get("keywords", ())),
        slots=tuple(slots),
        skeleton=skeleton.strip() + "\n" if skeleton.strip() else "",
        guess=guess,
        sections=_parse_sections(data.get("sections", []), known, fail),
        checklist=_parse_lines(data.get("checklist", []), known, fail, "checklist"),
        risks=_parse_lines(data.get("risks", []), known, fail, "risks"),
        effort=_parse_effort(data.get("effort"), known, fail),
    )


def _names(value: Any, known: set[str], fail: Any, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise fail(f"{where}: slot names must be a list of strings")
    unknown = [v for v in value if v not in known]
    if unknown:
        raise fail(f"{where}: unknown slots {unknown}")
    return tuple(value)


def _text(raw: Mapping[str, Any], key: str, fail: Any, where: str, known: set[str]) -> str:
    text = raw.get(key, "")
    if not isinstance(text, str):
        raise fail(f"{where}: '{key}' must be a string")
    unknown = [n for n in _PLACEHOLDER.findall(text) if n not in known]
    if unknown:
        raise fail(f"{where}: unknown placeholders {unknown}")
    return text.strip()


def _parse_sections(raw: Any, known: set[str], fail: Any) -> tuple[Section, ...]:
    if not isinstance(raw, list) or not all(isinstance(r, Mapping) for r in raw):
        raise fail("'sections' must be a list of tables")
    out = []
    for index, row in enumerate(raw):
        where = f"section {index}"
        if set(row) - {"title", "slots", "hint"}:
            raise fail(f"{where}: unknown keys {sorted(set(row) - {'title', 'slots', 'hint'})}")
        title = _text(row, "title", fail, where, known)
        if not title:
            raise fail(f"{where}: 'title' is required")
        slots = _names(row.get("slots", []), known, fail, where)
        out.append(Section(title=title, slots=slots, hint=_text(row, "hint", fail, where, known)))
    return tuple(out)


def _parse_lines(raw: Any, known: set[str], fail: Any, name: str) -> tuple[Line, ...]:
    if not isinstance(raw, list) or not all(isinstance(r, Mapping) for r in raw):
        raise fail(f"'{name}' must be a list of tables")
    out = []
    for index, row in enumerate(raw):
        where = f"{name} {index}"
        if set(row) - {"text", "when"}:
            raise fail(f"{where}: unknown keys {sorted(set(row) - {'text', 'when'})}")
        text = _text(row, "text", fail, where, known)
        if not text:
            raise fail(f"{where}: 'text' is required")
        out.append(Line(text=text, when=_names(row.get("when", []), known, fail, where)))
    return tuple(out)


def _parse_effort(raw: Any, known: set[str], fail: Any) -> Effort | None:
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise fail("'effort' must be a table")
    keys = {"low", "high", "unit", "basis", "per", "per_unit"}
    if set(raw) - keys:
        raise fail(f"effort: unknown keys {sorted(set(raw) - keys)}")
    low, high = raw.get("low"), raw.get("high")
    if not isinstance(low, int | float) or not isinstance(high, int | float) or not 0 < low <= high:
        raise fail("effort: 'low' and 'high' must be numbers with 0 < low <= high")
    per = raw.get("per", "")
    if per and per not in known:
        raise fail(f"effort: unknown slot {per!r}")
    per_unit = raw.get("per_unit", 0.0)
    if not isinstance(per_unit, int | float) or per_unit < 0:
        raise fail("effort: 'per_unit' must be a number >= 0")
    return Effort(
        low=float(low),
        high=float(high),
        unit=str(raw.get("unit", "hours")),
        basis=str(raw.get("basis", "")),
        per=str(per),
        per_unit=float(per_unit),
    )


def _parse_slot(raw: Mapping[str, Any], *, fail: Any, index: int) -> SlotSpec:
    unknown = set(raw) - _SLOT_KEYS
    if unknown:
        raise fail(f"slot {index}: unknown keys {sorted(unknown)}")
    name = raw.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        raise fail(f"slot {index}: 'name' must be a snake_case name")
    slot_type = raw.get("type", "text")
    if slot_type not in SLOT_TYPES:
        raise fail(f"slot {name}: type must be one of {', '.join(SLOT_TYPES)}")
    if not isinstance(raw.get("description", ""), str):
        raise fail(f"slot {name}: 'description' must be a string")
    for key in ("choices", "aliases", "units", "cues", "examples"):
        value = raw.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise fail(f"slot {name}: '{key}' must be a list of non-empty strings")
    choices = list(raw.get("choices", []))
    if slot_type == "choice" and len(choices) < 2:
        raise fail(f"slot {name}: a choice slot needs at least two choices")
    choice_aliases = raw.get("choice_aliases", {})
    if not isinstance(choice_aliases, Mapping):
        raise fail(f"slot {name}: 'choice_aliases' must be a table")
    for choice, words in choice_aliases.items():
        if choice not in choices:
            raise fail(f"slot {name}: alias for unknown choice {choice!r}")
        if not isinstance(words, list) or not all(isinstance(w, str) and w for w in words):
            raise fail(f"slot {name}: aliases of {choice!r} must be a list of strings")
    default = raw.get("default")
    if default is not None:
        if not isinstance(default, str):
            raise fail(f"slot {name}: 'default' must be a string")
        if choices and default not in choices:
            raise fail(f"slot {name}: default {default!r} is not one of the choices")
    weight = raw.get("weight", 1.0)
    if not isinstance(weight, int | float) or not 0 < weight <= 1:
        raise fail(f"slot {name}: 'weight' must be in (0, 1]")
    if not isinstance(raw.get("required", True), bool):
        raise fail(f"slot {name}: 'required' must be true or false")
    if not isinstance(raw.get("from_title", False), bool):
        raise fail(f"slot {name}: 'from_title' must be true or false")
    try:
        return SlotSpec.from_dict({**raw, "name": name})
    except (TypeError, ValueError) as exc:  # pragma: no cover - checked above
        raise fail(f"slot {name}: {exc}") from exc


def load_template_file(path: Path) -> TaskTemplate:
    with path.open("rb") as handle:
        try:
            data = tomllib.load(handle)
        except tomllib.TOMLDecodeError as exc:
            raise TemplateError(f"{path.name}: {exc}") from exc
    template = parse_template(data, origin=path.name)
    if template.kind != path.stem:
        raise TemplateError(f"{path.name}: kind {template.kind!r} must match the file name")
    return template


@cache
def load_templates(directory: Path = TEMPLATE_DIR) -> Mapping[str, TaskTemplate]:
    """Every template in `directory`, by kind (cached: the files ship with the code)."""
    files = sorted(directory.glob("[a-z]*.toml"))  # "_generic.toml" is not a kind of its own
    return {t.kind: t for t in (load_template_file(p) for p in files)}


def get_template(kind: str) -> TaskTemplate:
    try:
        return load_templates()[kind]
    except KeyError:
        raise TemplateError(f"no task template {kind!r}") from None


def template_kinds() -> tuple[str, ...]:
    return tuple(load_templates())


# The first keywords of a template name it plainly; the rest only support a guess.
HEAD_KEYWORDS = 3


def guess_template(text: str) -> TaskTemplate | None:
    """The template the text plainly asks for, else None (a free-form task: nothing is asked
    for the sake of a template). A template counts only when the text names one of its first
    HEAD_KEYWORDS keywords (its head nouns: "meeting", "trip", "holiday", "lesson", ...) or two
    of its keywords; the one with most hits wins. So "a two-day offsite with an agenda" is not
    taken for a meeting brief."""
    lowered = text.casefold()
    best: tuple[int, str] | None = None
    for template in load_templates().values():
        if not template.guess:
            continue
        hit = [k for k in template.keywords if re.search(rf"(?<!\w){re.escape(k)}(?!\w)", lowered)]
        head = any(k in hit for k in template.keywords[:HEAD_KEYWORDS])
        if not (head or len(hit) >= 2):
            continue
        score = len(hit) + (1 if head else 0)
        if best is None or score > best[0]:
            best = (score, template.kind)
    return None if best is None else load_templates()[best[1]]
