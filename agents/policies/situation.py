"""Build a `Situation` from a turn's context: every value the request, the task's goal, the
chat, the document and the requester's memory state, each tagged with where it came from and
how sure the reading is; the conflicts between them; the values with several readings.

Where a slot's value comes from (the first that states it wins):

1. answers to the agent's own question card (source "chat", confidence 1.0);
   then chat messages newer than the request, newest first (source "chat": "the servings
   should be 5" after the request corrects it);
2. the request that triggered the turn (source "request");
3. the task's goal and title (source "request": the person wrote them for this task);
4. earlier chat messages, newest first (source "chat");
5. the document, anywhere: "Label: value" lines, table rows, a heading and what follows it,
   bullets and sentences (source "document");
6. the requester's memory facts (`slot:<name>` keys, source "memory");
7. the model's structured extraction (source "request" when its quoted evidence is really in
   the request, else "model": a guess, never an answer). An extracted value that contradicts
   what a detector read with high confidence is ignored (and said so in `ignored_signals`).

The model's rating and sampled readings are then checked against the detectors' sure readings
(`signal_checks.screen_signals`): what contradicts them is ignored, and said so in
`ignored_signals` too.

A reading weaker than ANSWER_THRESHOLD is kept as a guess (source "model"), so a policy may
still ask about it. Memory is read as data (`MemoryFact`), never parsed back from prose.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from datetime import date

from agents.policies import situation_conflicts
from agents.policies.base import (
    AskingBudget,
    Conflict,
    Signals,
    Situation,
    SlotSpec,
    SlotState,
)
from agents.policies.detect import Detection, detect, normalise
from agents.policies.detect_meaning import find_text_by_meaning
from agents.policies.detect_words import MONTHS
from agents.policies.memory_facts import MemoryFact
from agents.policies.scoring import sampled_slot_names
from agents.policies.signal_checks import DETECTOR_TRUST, screen_signals
from agents.policies.signals import SlotExtraction
from agents.policies.situation_sources import (
    ANSWER_THRESHOLD,
    TITLE_CONFIDENCE,
    Candidate,
    asked_before,
    date_order,
    document_candidates,
    evidence_in,
    match_spec,
    memory_slot_values,
    request_needs_slots,
    same,
    title_subject,
    unlabelled_item,
)
from agents.policies.templates import TaskTemplate

log = logging.getLogger(__name__)

MEMORY_CONFIDENCE_CAP = 0.9
MODEL_CONFIDENCE_CAP = 0.9
MEMORY_TEXT_CONFIDENCE = 0.8


def _given(found: Sequence[Candidate]) -> bool:
    return any(c.confidence >= ANSWER_THRESHOLD for c in found)


# An earlier chat message's "tomorrow" or "on Friday" is read against the request's day, not the
# message's own: a guess (below ANSWER_THRESHOLD), never an answer.
RELATIVE_CHAT_DATE_CONFIDENCE = 0.4


# --- the situation -------------------------------------------------------------------------


def _without_skeleton(document: str, skeleton: str) -> str:
    """The document without the template's own headings: a new task's document starts with
    them ("## Working title", "## Learning goal"), and they state nothing anyone said."""
    scaffold = {line.strip() for line in skeleton.splitlines() if line.strip()}
    return "\n".join(line for line in document.splitlines() if line.strip() not in scaffold)


def _without_title(document: str, goal: str) -> str:
    """The document without headings that repeat the task's title or goal ("# Meeting brief
    for Hiroshi"): they were read as the goal already, where a person's name in them is known
    to say who the work is for, not what it is about."""
    said = squash(goal)

    def repeats(line: str) -> bool:
        m = _HEADING.match(line)
        return m is not None and bool(squash(m[1])) and squash(m[1]) in said

    return "\n".join(line for line in document.splitlines() if not repeats(line))


_HEADING = re.compile(r"^\s*#{1,6}\s+(.+?)\s*#*\s*$")
# A day named relative to when a message was written ("tomorrow", "on Friday", "next week"):
# an earlier chat message's own date is unknown here, so such a reading is only a guess.
_ANCHORED_DATE = re.compile(
    r"\b(?:" + "|".join(MONTHS) + r")\b|\b\d{4}-\d{1,2}-\d{1,2}\b|\b\d{1,2}[/.]\d{1,2}\b"
    r"|\b\d{1,2}(?:st|nd|rd|th)\b",
    re.IGNORECASE,
)


def squash(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.casefold()).split())


def _text_by_meaning(
    request: str,
    specs: Sequence[SlotSpec],
    found: Mapping[str, Detection],
    template: TaskTemplate | None,
) -> dict[str, tuple[str, float]]:
    """The required free-text slots the request's cues left open, read by meaning
    (agents/policies/detect_meaning.py), beside the spans the other slots' values took."""
    open_text = [s for s in specs if s.type == "text" and s.required and s.name not in found]
    if not open_text or template is None:
        return {}
    text = re.sub(r"@[\w.-]+", lambda m: " " * len(m[0]), request)
    taken = []
    for hit in found.values():
        at = text.find(hit.evidence) if hit.evidence else -1
        if at >= 0:
            taken.append((at, at + len(hit.evidence)))
    generic = [template.title, *template.keywords, template.kind.replace("_", " ")]
    return find_text_by_meaning(text, open_text, taken=taken, generic=generic)


def build_situation(
    *,
    request: str,
    template: TaskTemplate | None = None,
    answers: Mapping[str, str] | None = None,
    chat: Sequence[str] = (),
    later: Sequence[str] = (),
    document: str = "",
    memory: Mapping[str, str] | Sequence[MemoryFact] = (),
    extraction: SlotExtraction | None = None,
    signals: Signals | None = None,
    budget: AskingBudget | None = None,
    timed_out: bool = False,
    changes_in_episode: int = 0,
    today: date | None = None,
    goal: str = "",
    title: str = "",
    agent_messages: Sequence[str] = (),
    needs_slots: bool | None = None,
    people: Sequence[str] = (),
) -> Situation:
    """The Situation for one turn. `chat` is chronological (oldest first), human messages only;
    `later` the human messages newer than the request (a correction of it), chronological;
    `memory` is the requester's facts (MemoryFact; other items are ignored) or slot -> value;
    `goal` the task's title and goal, `title` the title alone; `agent_messages` what the
    agent said before (its questions are not asked again)."""
    today = today or date.today()
    signals = signals or Signals()
    specs: list[SlotSpec] = list(template.slots) if template else []
    if template is None:  # free-form: the model names the slots
        names = [s.slot for s in extraction.slots] if extraction else []
        names += list(sampled_slot_names(signals.interpretations))
        specs = [SlotSpec(name=n, weight=0.6) for n in dict.fromkeys(names)]
    by_name = {s.name: s for s in specs}
    facts = (
        [m for m in memory if isinstance(m, MemoryFact)] if not isinstance(memory, Mapping) else []
    )
    remembered = dict(memory) if isinstance(memory, Mapping) else memory_slot_values(facts)

    candidates: dict[str, list[Candidate]] = {}

    # Everyone in the conversation, by full name and by each part of it ("Ana Souza", "Ana").
    names_of_people = {p.casefold() for p in people if p}
    names_of_people |= {w for p in list(names_of_people) for w in p.split() if len(w) > 1}

    def add(name: str, candidate: Candidate) -> None:
        spec = by_name[name]
        if spec.type in ("text", "place") and candidate.value.casefold() in names_of_people:
            return  # "Recipe card for Fatima": the person it is for, not the dish
        if (
            spec.type in ("text", "place")
            and candidate.where == "the goal"
            and names_of_people & set(candidate.value.casefold().split())
        ):
            return  # the title "Meeting brief for José" names who it is for, not its purpose
        if candidate.source != "model" and candidate.confidence < ANSWER_THRESHOLD:
            candidate = Candidate(
                candidate.value, "model", candidate.confidence, candidate.where, candidate.evidence
            )
        candidates.setdefault(spec.name, []).append(candidate)

    answered_by_card: set[str] = set()
    for name, raw in (answers or {}).items():
        spec = by_name.get(name) or match_spec(name, specs)
        if spec is not None and raw.strip():
            value = normalise(raw, spec, today=today) or raw.strip()[:120]
            add(spec.name, Candidate(value, "chat", 1.0, "your answer", raw))
            answered_by_card.add(spec.name)

    for message in reversed(later):
        for name, hit in detect(message, specs, today=today).items():
            add(name, Candidate(hit.value, "chat", hit.confidence, "the chat", hit.evidence))
    in_request = detect(request, specs, today=today)
    for name, hit in in_request.items():
        add(name, Candidate(hit.value, "request", hit.confidence, "your message", hit.evidence))
    from_request = frozenset(
        n for n, cs in candidates.items() if any(c.confidence >= ANSWER_THRESHOLD for c in cs)
    )
    leftover = unlabelled_item(
        request, specs, today=today, stated=from_request, people=frozenset(names_of_people)
    )
    if leftover is not None:
        add(leftover[0], Candidate(leftover[1], "request", 0.6, "your message", leftover[1]))
    if goal.strip():
        for name, hit in detect(goal, specs, today=today).items():
            add(name, Candidate(hit.value, "request", hit.confidence, "the goal", hit.evidence))
    generic = [*template.title.split(), *template.keywords] if template else []
    subject = title_subject(title, generic) if template and title else ""
    for spec in specs:
        if (
            subject
            and spec.from_title
            and not any(c.confidence >= ANSWER_THRESHOLD for c in candidates.get(spec.name, ()))
        ):
            add(spec.name, Candidate(subject, "request", TITLE_CONFIDENCE, "the title", title))
    for message in reversed(chat):
        for name, hit in detect(message, specs, today=today).items():
            confidence = hit.confidence
            if by_name[name].type == "date" and not _ANCHORED_DATE.search(hit.evidence):
                confidence = min(confidence, RELATIVE_CHAT_DATE_CONFIDENCE)
            add(name, Candidate(hit.value, "chat", confidence, "the chat", hit.evidence))
    if template is not None and template.skeleton:
        document = _without_skeleton(document, template.skeleton)
    if goal.strip():
        document = _without_title(document, goal)
    if document.strip():
        given = frozenset(
            n for n, cs in candidates.items() if any(c.confidence >= ANSWER_THRESHOLD for c in cs)
        )
        for name, found in document_candidates(
            document, specs, today=today, people=frozenset(names_of_people), stated=given
        ).items():
            for candidate in found:
                add(name, candidate)
    for name, raw in remembered.items():
        spec = by_name.get(name) or match_spec(name, specs)
        if spec is not None and raw.strip():
            value = normalise(raw, spec, today=today) or raw.strip()[:120]
            add(spec.name, Candidate(value, "memory", MEMORY_CONFIDENCE_CAP, "your memory", raw))
    # What the person's memory says in their own words ("My readers are total beginners"),
    # for the slots nothing newer gives: read like the chat, a little less sure than a key.
    kind = template.kind if template else None
    for fact in facts:
        text = fact.text or f"{fact.key}: {fact.value}"
        if fact.slot_name or (fact.kinds and kind not in fact.kinds) or not text.strip():
            continue
        open_specs = [s for s in specs if not _given(candidates.get(s.name, ()))]
        for name, hit in detect(text, open_specs, today=today).items():
            if by_name[name].type == "text" and hit.confidence < 0.6:
                continue
            confidence = min(hit.confidence, MEMORY_TEXT_CONFIDENCE)
            add(name, Candidate(hit.value, "memory", confidence, "your memory", hit.evidence))

    # What the request is about when no cue said it and no other source gave it: read by meaning.
    unread = [s for s in specs if not _given(candidates.get(s.name, ()))]
    for name, (value, by_meaning) in _text_by_meaning(
        request, unread, in_request, template
    ).items():
        add(name, Candidate(value, "request", by_meaning, "your message", value))

    ignored: list[str] = []
    if extraction is not None:
        for extracted in extraction.slots:
            spec = by_name.get(extracted.slot) or match_spec(extracted.slot, specs)
            if spec is None or not extracted.value.strip():
                continue
            read = normalise(extracted.value, spec, today=today)
            if read is None:
                ignored.append(f"{extracted.slot}: unreadable value")
                continue
            sure = [
                c
                for c in candidates.get(spec.name, ())
                if c.source != "model" and c.confidence >= DETECTOR_TRUST
            ]
            if sure and not any(same(c.value, read) for c in sure):
                ignored.append(f"{spec.name}: model said {read}, detectors {sure[0].value}")
                continue
            confidence = min(extracted.confidence, MODEL_CONFIDENCE_CAP)
            stated = bool(extracted.evidence) and evidence_in(extracted.evidence, request)
            add(
                spec.name,
                Candidate(read, "request" if stated else "model", confidence, "your message"),
            )
    if ignored:
        log.info("model extraction ignored: %s", "; ".join(ignored))

    order = date_order(facts, [request, goal, *chat, document])
    if order is not None:  # numeric dates read the way this person (or this text) writes them
        for spec in specs:
            if spec.type == "date" and spec.name in candidates:
                candidates[spec.name] = [
                    situation_conflicts.reorder(c, order, today) for c in candidates[spec.name]
                ]

    # The first candidate in precedence order is the slot's value.
    states: dict[str, SlotState] = {}
    conflicts: list[Conflict] = []
    for spec in specs:
        found = candidates.get(spec.name, [])
        if not found:
            continue
        # a guess never beats a value someone stated, wherever it stands
        best = next((c for c in found if c.source != "model"), found[0])
        states[spec.name] = SlotState(
            spec=spec, value=best.value, source=best.source, confidence=round(best.confidence, 3)
        )
        if spec.name in answered_by_card:
            continue
        conflict = situation_conflicts.conflict(spec, found)
        if conflict is not None:
            conflicts.append(conflict)

    context_text = "\n".join([request, goal, *chat, document])
    ambiguities = situation_conflicts.ambiguities(
        specs,
        states,
        answered_by_card,
        remembered,
        request=request,
        context_text=context_text,
        order=order,
        today=today,
    )
    for ambiguity in ambiguities:
        state = states.get(ambiguity.slot)
        if state is not None and state.answered:  # a guess until the person picks a reading
            states[ambiguity.slot] = SlotState(
                spec=state.spec, value=state.value, source="model", confidence=0.4
            )

    slots = tuple(states.get(spec.name, SlotState(spec=spec)) for spec in specs)
    unsure = {c.slot for c in conflicts} | {a.slot for a in ambiguities}
    signals, screened = screen_signals(signals, slots, unsure=unsure, today=today)
    if screened:
        log.info("model signals ignored: %s", "; ".join(screened))
    asked = asked_before(specs, agent_messages)
    return Situation(
        request=request,
        template=template.kind if template else None,
        slots=slots,
        signals=signals,
        ignored_signals=(*(f"extraction: {line}" for line in ignored), *screened),
        budget=budget or AskingBudget(),
        timed_out=timed_out,
        changes_in_episode=changes_in_episode,
        conflicts=tuple(conflicts),
        ambiguities=tuple(ambiguities),
        needs_slots=request_needs_slots(request) if needs_slots is None else needs_slots,
        asked_before=tuple(
            s.name for s in slots if s.name in asked and s.name not in answered_by_card
        ),
    )


def known_and_open(situation: Situation) -> tuple[tuple[SlotState, ...], tuple[SlotState, ...]]:
    """What a turn knows for its task and what is still open: the slots the request, chat,
    document or the requester's memory answered, in the template's order, and those nobody
    answered that are required (a guess or a default is not an answer). A value stated twice,
    differently, or with several readings is open, not known. Nothing required is open when
    the request needs none of the template's values."""
    unsure = {c.slot for c in situation.conflicts} | {a.slot for a in situation.ambiguities}
    known = tuple(s for s in situation.slots if s.answered and s.name not in unsure)
    still_open = tuple(
        s
        for s in situation.slots
        if s.name in unsure or (situation.needs_slots and s.spec.required and not s.answered)
    )
    return known, still_open
