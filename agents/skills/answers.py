"""The skills that list and answer: checklist, risks, rough effort, the next step, answers
about the task ("when is it due?", "who is involved?") and the honest answer to a request no
skill covers (pure Python, no Django). Checklists, risks and effort come from the kind's data
file, filtered by what is known and filled with it; for a task of no known kind, from the goal's
own parts and ``_generic.toml``.
"""

from __future__ import annotations

import re

from agents.skills.amounts import amount, count_of, singular, split_amount
from agents.skills.facts import TaskFacts, Value
from agents.skills.generic import generic_kind
from agents.skills.notes import noted
from agents.skills.quote import (
    Passage,
    answering,
    content_words,
    lines_of,
    passages,
    quoted,
    unanswered_words,
)
from agents.skills.work import (
    SkillAnswer,
    _cap,
    _count,
    _lines,
    _question,
    open_items,
    phrase,
)
from agents.skills.write import and_list, as_list, finish, lower_first, say, say_money


def next_step(facts: TaskFacts) -> SkillAnswer:
    """A value people disagree on first, then what their own notes say is still to do, then the
    most blocking open value; with nothing open, the draft or the checklist's first line."""
    items = [o for o in open_items(facts) if o.required or o.readings]
    todo = noted(facts.document, facts.chat, "todo")
    if todo and not (items and items[0].readings):
        head, colon, _ = todo[0].partition(":")
        if colon:  # "We still need: gloves, first aid kit and sign-in sheet", as noted
            things = [t.partition(":")[2].strip() for t in todo if t.startswith(head + ":")]
            first = f"{head}: {and_list(things)}"
        else:
            first = todo[0]
        return SkillAnswer("next_step", finish(f"Next step: {first}.", facts.prefs))
    if items:
        top = items[0]
        text = f"Next step: settle the {top.label}. {_question(top, facts)}"
        if not facts.document.strip():
            text += " Then ask me for a draft."
        return SkillAnswer("next_step", finish(text, facts.prefs))
    steps = checklist_items(facts)
    if not facts.document.strip():
        return SkillAnswer(
            "next_step",
            finish("Next step: ask me for a draft; everything it needs is known.", facts.prefs),
        )
    text = f"Next step: {lower_first(steps[0])}." if steps else "Next step: review the draft."
    return SkillAnswer("next_step", finish(text, facts.prefs))


# --- checklist, risks, effort -----------------------------------------------------------------


def checklist_items(facts: TaskFacts) -> list[str]:
    """What the task's own notes say is to do, then what they leave open to settle ("who
    takes the sofa? disputed"), then the kind's checklist (or the goal's parts)."""
    todo = noted(facts.document, facts.chat, "todo")
    settle = [f"Settle: {n}" for n in noted(facts.document, facts.chat, "open") if n not in todo]
    return list(dict.fromkeys([*todo, *settle, *_kind_checklist(facts)]))


def _kind_checklist(facts: TaskFacts) -> list[str]:
    if facts.kind is not None and facts.kind.checklist:
        return [*_lines(facts.kind.checklist, facts), *generic_kind().checklist]
    items = []
    deadline = facts.deadline
    for part in facts.parts:
        items.append(f"{_cap(part)}: agree what is needed and who does it")
    if deadline is not None:
        items.append(f"Have everything done by {say(deadline, facts.prefs)}")
    budget = next((v for v in facts.of_type("money") if v.label == "budget"), None)
    if budget is not None:
        items.append(f"Keep the total within {say(budget, facts.prefs)}")
    items += list(generic_kind().checklist)
    return items


def checklist(facts: TaskFacts, count: int | None = None) -> SkillAnswer:
    items = _count(checklist_items(facts), count)
    lead = f"Checklist for {facts.title}:" if facts.title else "Checklist:"
    body = "\n".join(f"- [ ] {i}" for i in items)
    if facts.prefs.get("list_style") == "numbered":
        body = "\n".join(f"{n}. {i}" for n, i in enumerate(items, 1))
    return SkillAnswer("checklist", finish(f"{lead}\n{body}", facts.prefs))


def risk_items(facts: TaskFacts) -> list[str]:
    """What the task's own notes flag (late deliveries, a price increase), then the kind's risks
    (or the goal's parts against its deadline and budget)."""
    flagged = [
        f"{note}: a risk if nothing changes" for note in noted(facts.document, facts.chat, "risk")
    ]
    return list(dict.fromkeys([*flagged, *_kind_risks(facts)]))


def _kind_risks(facts: TaskFacts) -> list[str]:
    if facts.kind is not None and facts.kind.risks:
        # a kind's own risks, then the risks of any work, so "3 risks" gets three
        items = [*_lines(facts.kind.risks, facts), *generic_kind().risks]
    else:
        items = []
        deadline = facts.deadline
        for part in facts.parts[:3]:
            if deadline is not None:
                by = say(deadline, facts.prefs)
                items.append(f"“{_cap(part)}” is not ready by {by}: agree an owner and a date")
        budget = next((v for v in facts.of_type("money") if v.label == "budget"), None)
        if budget is not None:
            items.append(f"Costs run over the budget of {say(budget, facts.prefs)}")
        items += list(generic_kind().risks)
    return items


def risks(facts: TaskFacts, count: int | None = None) -> SkillAnswer:
    items = _count(risk_items(facts), count)
    lead = "Risks, with what to do about them:" if any(":" in i for i in items) else "Risks:"
    return SkillAnswer("risks", finish(f"{lead}\n{as_list(items, facts.prefs)}", facts.prefs))


def _hours(x: float) -> str:
    return f"{x:.1f}".rstrip("0").rstrip(".")


def effort(facts: TaskFacts) -> SkillAnswer:
    """A rough effort from the kind's data (scaled by a known count), or per part of the goal."""
    note = "A rough guide for this kind of task, not a measurement."
    if facts.kind is not None and facts.kind.effort is not None:
        e = facts.kind.effort
        low, high = e.low, e.high
        text = f"Rough effort: {_hours(low)} to {_hours(high)} {e.unit}"
        if e.basis:
            text += f" for {e.basis}"
        per = facts.value(e.per) if e.per else None
        if per is not None and e.per_unit:
            try:
                n = float(per.raw)
            except ValueError:
                n = 0.0
            if n > 0:
                extra = n * e.per_unit
                low, high = low + extra, high + extra
                text += (
                    f", plus about {_hours(extra)} for {_hours(n)} {per.unit or per.label}: "
                    f"{_hours(low)} to {_hours(high)} {e.unit} in all"
                )
        return SkillAnswer("effort", finish(f"{text}. {note}", facts.prefs))
    g = generic_kind()
    parts = max(1, len(facts.parts))
    low, high = g.per_part_low * parts, g.per_part_high * parts
    text = (
        f"Rough effort: {_hours(low)} to {_hours(high)} {g.unit} "
        f"({_hours(g.per_part_low)} to {_hours(g.per_part_high)} for {g.basis}"
        + (f", {parts} parts" if parts > 1 else "")
        + ")."
    )
    return SkillAnswer("effort", finish(f"{text} {note}", facts.prefs))


# --- answers about the task -------------------------------------------------------------------

_ASKED = {
    "when": ("date",),
    "who": ("person", "number"),
    "where": ("place",),
    "budget": ("money",),
}
_PEOPLE_UNITS = {
    "people",
    "persons",
    "attendees",
    "guests",
    "participants",
    "students",
    "travelers",
}
_FROM = {
    "request": "the task",
    "chat": "the chat",
    "document": "the document",
    "memory": "your memory",
}
_MISSING = {
    "when": "No date is given yet",
    "who": "Nobody is named yet",
    "where": "No place is given yet",
    "budget": "No budget is given yet",
}


def answer_text(facts: TaskFacts, question: str) -> SkillAnswer:
    """A question no typed value answers: the lines of the task that say it, quoted."""
    found = answering(lines_of(facts.goal, facts.document, facts.chat), question)
    if not found:  # nothing in the task says it: that, plainly, and what the agent can do
        return not_in_task(facts)
    return SkillAnswer("answer_text", finish(quoted(found), facts.prefs))


def _more_in_text(facts: TaskFacts, question: str, said: str) -> str:
    """The quote of the line that answers what ``said`` (the typed answer) leaves out of the
    question ("the budget per laptop": the line about laptops), or ""."""
    if not question:
        return ""
    found = passages(facts, question, limit=1)
    if not found or found[0].text.casefold() in said.casefold():
        return ""
    left = unanswered_words(question, said)
    return quoted(found) if left & content_words(found[0].text) else ""


# A document line labelled with what the question asks ("Venue: back room of The Heron pub,
# Bristol") says more than the typed value read from it (Bristol): it is quoted beside it.
_LABELLED = {
    "where": re.compile(
        r"(?i)^(?:[\w ]+: )?(?:venue|where|location|place|address|meeting point)\s*:"
    ),
    "when": re.compile(r"(?i)^(?:[\w ]+: )?(?:date|when|time|deadline|due)\s*:"),
}


def _labelled_line(facts: TaskFacts, about: str, said: str) -> str:
    label = _LABELLED.get(about)
    if label is None:
        return ""
    for origin, line in lines_of("", facts.document, ()):
        if label.search(line) and line.casefold() not in said.casefold():
            return quoted([Passage(origin, line, 1)])
    return ""


def answer(facts: TaskFacts, about: str, question: str = "") -> SkillAnswer:
    """ "When is it due?", "who is involved?", "where?", "what's the budget?" from the values,
    with the line of the task that says what else the question asks about."""
    types = _ASKED.get(about, ())
    values = [v for v in facts.known if v.type in types]
    if about == "who":
        values = [v for v in values if v.type == "person" or v.unit in _PEOPLE_UNITS]
        values = sorted(values, key=lambda v: v.type != "person")
    if values:
        said = []
        for v in values[:3]:
            origin = _FROM.get(v.source, "the task")
            if v.type == "person":
                names = and_list([p.strip() for p in say(v, facts.prefs).split(",")])
                said.append(f"People named: {names} (from {origin}).")
            elif v.type == "number":
                said.append(
                    f"{phrase(v, facts)[:1].upper()}{phrase(v, facts)[1:]} (from {origin})."
                )
            else:
                lead = "It has" if v.type == "money" else "It is"
                if v.label == "origin":  # "flights from Stansted"
                    lead = "It starts"
                said.append(f"{lead} {phrase(v, facts)} (from {origin}).")
        text = " ".join(said)
        if about == "budget":
            text += _budget_sum(facts, values[0], question)
        more = _more_in_text(facts, question, text) or _labelled_line(facts, about, text)
        if about == "when" and re.search(r"(?i)\bwhere\b", question):  # "when and where?"
            more = f"{more} {answer(facts, 'where').text}".strip()
        return SkillAnswer(f"answer_{about}", finish(f"{text} {more}".strip(), facts.prefs))
    found = passages(facts, question) if question else []
    if found:
        return SkillAnswer(f"answer_{about}", finish(quoted(found), facts.prefs))
    missing = _MISSING.get(about, "That is not given yet")
    question = ""
    for item in open_items(facts):
        spec = facts.kind.slot(item.slot) if facts.kind and item.slot else None
        if (spec is not None and spec.type in types) or item.slot in {
            "when": ("deadline",),
            "who": ("people",),
            "budget": ("budget",),
        }.get(about, ()):
            question = item.question
            break
    text = f"{missing}." + (f" {question}" if question else "")
    return SkillAnswer(f"answer_{about}", finish(text, facts.prefs))


def _budget_sum(facts: TaskFacts, budget: Value, question: str) -> str:
    """ "Per laptop": the budget divided by the count the task gives ("8 laptops"), said as
    worked out; "does it cover this?": what the task lacks to tell."""
    asked = question.casefold()
    total = split_amount(budget.raw)
    per = re.search(r"\bper\s+([^\W\d_]{3,})", asked)
    if total is not None and per is not None:
        count = count_of(per[1], facts.stated)
        if count is not None:
            shown = amount(total[0], total[1] / count[0])
            return (
                f" That is about {shown} per {singular(per[1])}: {say_money(budget.raw)} for "
                f"{count[1]} (worked out from the task)."
            )
    if re.search(r"\b(?:cover|covers|afford|enough)\b", asked):
        return " Whether it is enough I can't tell: the task gives no costs to add up."
    return ""


CAPABILITIES = (
    "I can draft the document from what the task says, list what is still open and what to "
    "decide first, the options its notes leave open and reminders of its dates, write a "
    "checklist, risks or a rough effort, discussion, interview or feedback questions and "
    "questions to ask someone, sum the task up, suggest a title, work out a share or a rate "
    "times hours or nights from its figures, and answer when, who, where and how much."
)


def not_in_task(facts: TaskFacts) -> SkillAnswer:
    """The honest answer to a question about the task that none of its lines answers."""
    text = (
        "I found no line of the task that answers that (its goal, document and chat); whoever "
        f"knows can add it to the document. {CAPABILITIES}"
    )
    return SkillAnswer("not_in_task", finish(text, facts.prefs))


def capabilities(facts: TaskFacts) -> SkillAnswer:
    """The one short honest answer to a request no skill covers."""
    text = f"I can't do that here. {CAPABILITIES} Try Draft, Open questions or Checklist."
    return SkillAnswer("capabilities", finish(text, facts.prefs))
