"""A task's shared plan as checklist lines of its document (issue 30, ADR 0024). Pure Python,
no Django: reading the plan section, writing a step back as its line, and the coordinator's
first plan built from what the task says.

The format (ADR 0024 says the same in prose)::

    ## Plan
    - [ ] Book the venue (@Writer, todo)
    - [ ] Send the invitations (@alice, doing)
    - [x] Agree the budget (@bob, done, checked by bob)

* The section starts at a heading whose text is "Plan" (any level) and ends at the next heading
  of the same or a higher level, or at the end of the document.
* A step is a checklist line (``-`` or ``*``, ``[ ]`` or ``[x]``), its text, then optionally
  one parenthesis at the end of the line: the assignee (``@name``), the status (``todo``,
  ``doing``, ``blocked``, ``done``) and a note (who decided it was done, why it is blocked),
  separated by commas, in that order, each optional.
* The box wins over the written status: ticking ``[x]`` is a person saying the step is done;
  unticking a done step puts it back to ``todo``.
* Any other non-blank line of the section is reported as a problem with its line number and
  left in the document as it is: nothing a person wrote is ever dropped.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

TODO = "todo"
DOING = "doing"
BLOCKED = "blocked"
DONE = "done"
STATUSES = (TODO, DOING, BLOCKED, DONE)

HEADING = "## Plan"
MAX_STEPS = 30
STEP_TEXT_MAX = 300

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_STEP = re.compile(r"^\s*[-*]\s+\[(?P<box>[ xX])\]\s+(?P<rest>.*?)\s*$")
_TAIL = re.compile(r"\((?P<inside>[^()]*)\)\s*$")
_NAME = re.compile(r"^@([A-Za-z][A-Za-z0-9_.-]{0,149})$")
_PLAN_REQUEST = re.compile(
    r"\b(?:split|break|divide)\b.{0,40}\b(?:steps?|tasks?|parts?)\b|"
    r"\bplan (?:out )?(?:the |our )?(?:steps|work)\b|\bcoordinate\b|\bwho does what\b|"
    r"\b(?:make|draw up|propose|write) (?:a|the|our) (?:shared |work )?plan with steps\b|"
    r"\bassign (?:the )?(?:steps|tasks|work)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Line:
    """One step as its line says it: ``number`` is its line in the document (1-based)."""

    number: int
    raw: str
    text: str
    assignee: str  # the @name as written, without the @ ("" when none)
    status: str
    note: str


@dataclass(frozen=True)
class Problem:
    number: int
    raw: str
    reason: str


@dataclass(frozen=True)
class Section:
    """The plan section of a document: its steps and the lines that are not steps."""

    found: bool
    steps: tuple[Line, ...] = ()
    problems: tuple[Problem, ...] = ()


_REVIEWER = re.compile(
    r"\b(?:review|reviewer|reviews|reviewing|critic|checker|proofreader)\b", re.I
)
_CHECKS = re.compile(r"^\s*(?:checks|reviews|verifies|proofreads)\b", re.I)


def is_reviewer(*, name: str, instructions: str = "") -> bool:
    """Whether an agent has the reviewer role on a task: its name says so ("Reviewer",
    "Budget-Critic") or its instructions start by saying it checks others' work ("Checks a
    draft against ..."). A rule on what people named and told the agent, never a model's say."""
    return bool(_REVIEWER.search(name.replace("-", " ").replace("_", " "))) or bool(
        _CHECKS.search(instructions)
    )


def review_request(*, reviewer: str, number: int, text: str, own_check: str) -> str:
    """The message a step's agent sends the reviewer (a review hop, ``hops.classify_hop``)."""
    said = f" My own check: {own_check}." if own_check else ""
    return (
        f"@{reviewer} please check step {number}, “{text}”: does my answer above cover it, "
        f"and what is missing?{said}"
    )


def asks_for_plan(request: str) -> bool:
    """Whether a request asks an agent to split the task into steps ("split this into steps",
    "plan the steps", "who does what?")."""
    return bool(_PLAN_REQUEST.search(request))


def _section_lines(document: str) -> tuple[bool, list[tuple[int, str]]]:
    lines = document.splitlines()
    start, level = None, 0
    for n, line in enumerate(lines):
        m = _HEADING.match(line)
        if m is None:
            continue
        if start is None and m[2].strip().lower() == "plan":
            start, level = n, len(m[1])
        elif start is not None and len(m[1]) <= level:
            return True, [(k + 1, lines[k]) for k in range(start + 1, n)]
    if start is None:
        return False, []
    return True, [(k + 1, lines[k]) for k in range(start + 1, len(lines))]


def parse_line(number: int, raw: str) -> Line | Problem:
    m = _STEP.match(raw)
    if m is None:
        return Problem(number, raw, "not a checklist line (“- [ ] what to do (@who, status)”)")
    rest, ticked = m["rest"], m["box"] in "xX"
    assignee, status, note = "", "", ""
    tail = _TAIL.search(rest)
    if tail is not None:
        parts = [p.strip() for p in tail["inside"].split(",")]
        named = _NAME.match(parts[0]) if parts else None
        if named is not None or (parts and parts[0].lower() in STATUSES):
            rest = rest[: tail.start()].rstrip()
            if named is not None:
                assignee, parts = named[1], parts[1:]
            if parts and parts[0].lower() in STATUSES:
                status, parts = parts[0].lower(), parts[1:]
            elif parts and parts[0]:
                return Problem(number, raw, f"unknown status “{parts[0]}” ({', '.join(STATUSES)})")
            note = ", ".join(p for p in parts if p)
    if not rest:
        return Problem(number, raw, "a step needs a text")
    if len(rest) > STEP_TEXT_MAX:
        return Problem(number, raw, f"a step's text is at most {STEP_TEXT_MAX} characters")
    if ticked:
        status = DONE
    elif status == DONE:
        status, note = TODO, ""  # a person unticked it
    return Line(number, raw, rest, assignee, status or TODO, note)


def parse(document: str) -> Section:
    found, lines = _section_lines(document)
    steps: list[Line] = []
    problems: list[Problem] = []
    for number, raw in lines:
        if not raw.strip():
            continue
        parsed = parse_line(number, raw)
        if isinstance(parsed, Problem):
            problems.append(parsed)
        elif len(steps) >= MAX_STEPS:
            problems.append(Problem(number, raw, f"a plan has at most {MAX_STEPS} steps"))
        else:
            steps.append(parsed)
    return Section(found, tuple(steps), tuple(problems))


def render(*, text: str, assignee: str, status: str, note: str = "") -> str:
    """The checklist line of a step (``parse_line`` reads it back unchanged)."""
    box = "x" if status == DONE else " "
    tail = [f"@{assignee}"] if assignee else []
    tail.append(status)
    if note:
        tail.append(note.replace("(", "").replace(")", "").replace(",", ";"))
    return f"- [{box}] {text} ({', '.join(tail)})"


def render_section(steps: Sequence[tuple[str, str]], *, lead: str = "") -> str:
    """A new plan section: a heading, an optional lead line, one ``todo`` line per
    (text, assignee)."""
    body = [render(text=text, assignee=who, status=TODO) for text, who in steps]
    head = [HEADING, "", lead, ""] if lead else [HEADING, ""]
    return "\n".join([*head, *body]) + "\n"


# Steps the skills of every agent can do and check on the default install (routed by
# ``agents.skills.route`` to open_questions, summary and risks): an agent's share of a plan.
AGENT_STEPS = (
    "List what is still open and what to decide first",
    "Sum up the task for everyone",
    "List the risks and what to do about them",
)


def plan_steps(
    items: Sequence[str], *, agents: Sequence[str], people: Sequence[str], limit: int = 6
) -> list[tuple[str, str]]:
    """A plan by what each can do: each agent gets one of ``AGENT_STEPS`` (a step its skills
    cover and can check), the task's own items go to its people in turn. Nothing here invents
    a name: the agents and people are the task's own."""
    mine = [(step, agent) for step, agent in zip(AGENT_STEPS, agents, strict=False)]
    theirs = assign(items, people, limit=max(limit - len(mine), 1))
    return [*mine, *theirs]


def assign(
    items: Sequence[str], workers: Sequence[str], *, limit: int = 6
) -> list[tuple[str, str]]:
    """The first ``limit`` items, each with a worker in turn (round robin; "" with none).
    Nothing here invents a name: the workers are the task's own agents and people."""
    chosen = [i.strip() for i in items if i.strip()][:limit]
    return [
        (item[:STEP_TEXT_MAX], workers[n % len(workers)] if workers else "")
        for n, item in enumerate(chosen)
    ]
