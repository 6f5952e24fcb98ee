"""Build a `Situation` from a turn's raw context: slot detection over the request, the chat, the
document and memory, merged with the model's structured extraction.

Precedence for a slot (the first source that states it wins):

1. answers to the agent's own question card (slot-tagged, source "chat", confidence 1.0);
2. the request that triggered the turn (source "request");
3. earlier chat messages, newest first (source "chat");
4. the document, labelled values only ("Budget: 900 EUR"; source "document");
5. memory, explicit slot values or preference sentences that mention the slot (source "memory");
6. the model's structured extraction (source "request" when its quoted evidence is really in the
   request, else "model": a guess, never an answer).

A detection weaker than ANSWER_THRESHOLD (e.g. a request naming two conflicting choices) is kept
as a guess (source "model") so the policies may still ask about it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import date

from agents.policies.base import (
    AskingBudget,
    AskPreference,
    Signals,
    Situation,
    SlotSource,
    SlotSpec,
    SlotState,
)
from agents.policies.detect import Detection, detect, find_choices, find_labelled, normalise
from agents.policies.scoring import sampled_slot_names
from agents.policies.signals import SlotExtraction
from agents.policies.templates import TaskTemplate

ANSWER_THRESHOLD = 0.5
MEMORY_CONFIDENCE_CAP = 0.9
MODEL_CONFIDENCE_CAP = 0.9


def _state(spec: SlotSpec, value: str, source: SlotSource, confidence: float) -> SlotState:
    if source != "model" and confidence < ANSWER_THRESHOLD:
        source = "model"
    return SlotState(spec=spec, value=value, source=source, confidence=round(confidence, 3))


def _mentions_slot(text: str, spec: SlotSpec) -> bool:
    lowered = text.casefold()
    terms = [spec.name.replace("_", " "), spec.label, *spec.aliases, *spec.units]
    if any(re.search(rf"(?<!\w){re.escape(t.casefold())}(?!\w)", lowered) for t in terms if t):
        return True
    return spec.type == "choice" and bool(find_choices(text, spec))


def _match_spec(name: str, specs: Sequence[SlotSpec]) -> SlotSpec | None:
    key = name.casefold().replace(" ", "_").replace("-", "_")
    for spec in specs:
        names = {spec.name, spec.label.casefold().replace(" ", "_")}
        names |= {a.casefold().replace(" ", "_") for a in spec.aliases}
        if key in names:
            return spec
    return None


def _evidence_in(evidence: str, text: str) -> bool:
    squeeze = " ".join(evidence.casefold().split())
    return len(squeeze) >= 2 and squeeze in " ".join(text.casefold().split())


def build_situation(
    *,
    request: str,
    template: TaskTemplate | None = None,
    answers: Mapping[str, str] | None = None,
    chat: Sequence[str] = (),
    document: str = "",
    memory: Mapping[str, str] | Sequence[str] = (),
    extraction: SlotExtraction | None = None,
    signals: Signals | None = None,
    budget: AskingBudget | None = None,
    timed_out: bool = False,
    changes_in_episode: int = 0,
    today: date | None = None,
) -> Situation:
    """The Situation for one turn. `chat` is chronological (oldest first), human messages only;
    `memory` is either slot -> value or the person's preference sentences."""
    today = today or date.today()
    signals = signals or Signals()
    specs: list[SlotSpec] = list(template.slots) if template else []
    if template is None:  # free-form: the model names the slots
        names = [s.slot for s in extraction.slots] if extraction else []
        names += list(sampled_slot_names(signals.interpretations))
        specs = [SlotSpec(name=n, weight=0.6) for n in dict.fromkeys(names)]

    states: dict[str, SlotState] = {}

    def offer(spec: SlotSpec, value: str, source: SlotSource, confidence: float) -> None:
        if spec.name not in states:
            states[spec.name] = _state(spec, value, source, confidence)

    by_name = {s.name: s for s in specs}
    for name, raw in (answers or {}).items():
        spec = by_name.get(name) or _match_spec(name, specs)
        if spec is not None and raw.strip():
            offer(spec, normalise(raw, spec, today=today) or raw.strip()[:120], "chat", 1.0)

    def offer_detections(found: Mapping[str, Detection], source: SlotSource) -> None:
        for name, detection in found.items():
            offer(by_name[name], detection.value, source, detection.confidence)

    offer_detections(detect(request, specs, today=today), "request")
    for message in reversed(chat):
        offer_detections(detect(message, specs, today=today), "chat")
    if document:
        for spec in specs:
            if spec.name in states:
                continue
            labelled = find_labelled(document, spec, today=today)  # labelled values only
            if labelled:
                offer(spec, labelled[0].value, "document", labelled[0].confidence)
    if isinstance(memory, Mapping):
        for name, raw in memory.items():
            spec = by_name.get(name) or _match_spec(name, specs)
            if spec is not None and raw.strip():
                value = normalise(raw, spec, today=today) or raw.strip()[:120]
                offer(spec, value, "memory", MEMORY_CONFIDENCE_CAP)
    else:
        for item in memory:
            relevant = [s for s in specs if _mentions_slot(item, s)]
            for name, detection in detect(item, relevant, today=today).items():
                confidence = min(detection.confidence, MEMORY_CONFIDENCE_CAP)
                offer(by_name[name], detection.value, "memory", confidence)
    if extraction is not None:
        for extracted in extraction.slots:
            spec = by_name.get(extracted.slot) or _match_spec(extracted.slot, specs)
            if spec is None or not extracted.value.strip():
                continue
            extracted_value = normalise(extracted.value, spec, today=today)
            if extracted_value is None:
                continue
            confidence = min(extracted.confidence, MODEL_CONFIDENCE_CAP)
            stated = bool(extracted.evidence) and _evidence_in(extracted.evidence, request)
            offer(spec, extracted_value, "request" if stated else "model", confidence)

    slots = tuple(states.get(spec.name, SlotState(spec=spec)) for spec in specs)
    return Situation(
        request=request,
        template=template.kind if template else None,
        slots=slots,
        signals=signals,
        budget=budget or AskingBudget(),
        timed_out=timed_out,
        changes_in_episode=changes_in_episode,
    )


_LESS = re.compile(
    r"\b(?:ask(?:s|ing)?\s+(?:me\s+)?(?:fewer|less)|fewer\s+questions|don'?t\s+ask|stop\s+asking"
    r"|(?:just|rather)\s+(?:guess|go ahead)|less\s+questions)\b",
    re.IGNORECASE,
)
_MORE = re.compile(
    r"\b(?:ask(?:s|ing)?\s+(?:me\s+)?more|more\s+questions|always\s+ask|check\s+with\s+me"
    r"|ask\s+before)\b",
    re.IGNORECASE,
)


def asking_preference(memory: Sequence[str]) -> AskPreference:
    """ "Ask me less / more" from the person's memory items; the newest (last) mention wins."""
    preference: AskPreference = "normal"
    for item in memory:
        if _LESS.search(item):
            preference = "less"
        elif _MORE.search(item):
            preference = "more"
    return preference
