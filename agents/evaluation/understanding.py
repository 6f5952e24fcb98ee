"""How well the reader understands text that no generator of ours wrote (issue 26).

Two corpora, both read by the product's own reader (`agents.policies.situation.build_situation`)
and decided on by the product's own policies, with no scenario label handed to either:

- **SGD**: a fixed sample of the Schema-Guided Dialogue dataset (crowd-paraphrased dialogues,
  CC BY-SA 4.0, bench/data/sgd/). The reader is given each service's slots with their schema
  descriptions (no aliases made for SGD); its readings of each user turn are scored against the
  annotated INFORM acts, and the ask decision at each system turn against the annotated REQUEST
  acts for the intent's required slots.
- **Blind requests**: requests of Collab's own kinds written by a helper that never saw the code
  (bench/data/understanding/), each labelled with the values it states and whether a question
  is needed.

Every figure is printed beside trivial policies (never ask, always ask, ask on the first turn
only) so a reader sees what the reader adds; nothing here is tuned on a test split.
Pure Python (no Django), like the policies it measures.
"""

from __future__ import annotations

import json
import math
import random
import re
import statistics
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from agents.memory import local_embeddings
from agents.memory.extractors import structure
from agents.policies import meaning
from agents.policies.base import ANSWERING_SOURCES, Decision, Situation, SlotType
from agents.policies.memory_facts import MemoryFact
from agents.policies.registry import get_policy
from agents.policies.situation import build_situation
from agents.policies.templates import TaskTemplate, get_template

# The reader as the app runs it: with the shipped embedding (agents/hooks.py installs it there).
meaning.install(local_embeddings.similarities)

TYPED: frozenset[str] = frozenset({"date", "number", "money", "choice"})

# --- value matching -------------------------------------------------------------------------

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_STOP = frozenset(
    "a an the of for to in on at and or my our your with by from".split()  # noqa: SIM905
)


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.casefold()) if w not in _STOP}


def _number(text: str) -> float | None:
    found = re.search(r"-?\d+(?:[.,]\d+)?", text.replace("'", "").replace("\u2019", ""))
    if not found:
        return None
    try:
        return float(found.group().replace(",", "."))
    except ValueError:  # pragma: no cover - the pattern only admits numbers
        return None


def _money(text: str) -> tuple[float | None, str]:
    currency = re.search(r"\b[A-Z]{3}\b", text)
    amount = re.sub(r"(?<=\d)[,'\u2019 ](?=\d{3}\b)", "", text)
    return _number(amount), currency.group() if currency else ""


def same_value(kind: SlotType | str, predicted: str, gold: Sequence[str]) -> bool:
    """True when a predicted value means one of the gold values (canonical or as written)."""
    for g in gold:
        if not g:
            continue
        if kind == "date" or kind == "choice":
            if predicted.strip().casefold() == g.strip().casefold():
                return True
        elif kind == "number":
            p, q = _number(predicted), _number(g)
            if p is not None and q is not None and math.isclose(p, q):
                return True
        elif kind == "money":
            (pa, pc), (ga, gc) = _money(predicted), _money(g)
            if pa is not None and ga is not None and math.isclose(pa, ga) and pc == gc:
                return True
        elif kind == "person":
            if _words(predicted) == _words(g) and _words(g):
                return True
        else:  # text, place: the same words, or most of them
            ours, theirs = _words(predicted), _words(g)
            if ours and theirs and len(ours & theirs) / len(ours | theirs) >= 0.5:
                return True
    return False


# --- counting -------------------------------------------------------------------------------


@dataclass
class Tally:
    """Readings of one group of values: right, misread (a different value), missed, and
    spurious (a value read where none was stated)."""

    right: int = 0
    misread: int = 0
    missed: int = 0
    spurious: int = 0

    @property
    def stated(self) -> int:
        return self.right + self.misread + self.missed

    def scores(self) -> dict[str, float | None]:
        predicted = self.right + self.misread + self.spurious
        precision = self.right / predicted if predicted else None
        recall = self.right / self.stated if self.stated else None
        f1 = (
            2 * precision * recall / (precision + recall)
            if precision is not None and recall is not None and precision + recall
            else (0.0 if precision is not None and recall is not None else None)
        )
        return {
            "stated": float(self.stated),
            "right": self.right / self.stated if self.stated else None,
            "misread": self.misread / self.stated if self.stated else None,
            "missed": self.missed / self.stated if self.stated else None,
            "precision": precision,
            "recall": recall,
            "f1": f1,
            "spurious": float(self.spurious),
        }


def mcc(pairs: Sequence[tuple[bool, bool]]) -> float | None:
    """Matthews correlation of (gold, predicted) pairs; None when either side never varies."""
    tp = sum(1 for g, p in pairs if g and p)
    tn = sum(1 for g, p in pairs if not g and not p)
    fp = sum(1 for g, p in pairs if not g and p)
    fn = sum(1 for g, p in pairs if g and not p)
    denominator = math.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    return (tp * tn - fp * fn) / denominator if denominator else None


def mcc_interval(
    pairs: Sequence[tuple[bool, bool]], *, rounds: int = 400, seed: int = 0
) -> tuple[float, float] | None:
    """A 95 % bootstrap interval of the MCC (a constant prediction's MCC counts as 0)."""
    if not pairs:
        return None
    rng = random.Random(seed)
    values = sorted(
        mcc([pairs[rng.randrange(len(pairs))] for _ in pairs]) or 0.0 for _ in range(rounds)
    )
    return values[int(0.025 * rounds)], values[int(0.975 * rounds) - 1]


@dataclass
class AskTally:
    pairs: list[tuple[bool, bool]] = field(default_factory=list)
    targets: int = 0  # slots asked about
    redundant: int = 0  # of them, slots the text had already stated
    blocked: int = 0  # items that needed a question
    blocked_hit: int = 0  # of them, asked about at least one value that blocked

    def scores(self) -> dict[str, Any]:
        negatives = [p for g, p in self.pairs if not g]
        return {
            "n": len(self.pairs),
            "mcc": mcc(self.pairs),
            "mcc_interval": mcc_interval(self.pairs),
            "over_asking": sum(negatives) / len(negatives) if negatives else None,
            "asked": sum(p for _, p in self.pairs) / len(self.pairs) if self.pairs else None,
            "redundant": self.redundant / self.targets if self.targets else None,
            "blocker_recall": self.blocked_hit / self.blocked if self.blocked else None,
        }


# --- trivial policies beside the product's --------------------------------------------------

# A trivial policy sees only the position of the turn, never the text: what the reader adds is
# the product's figure minus these.
TRIVIAL: Mapping[str, Callable[[int], bool]] = {
    "never ask": lambda index: False,
    "always ask": lambda index: True,
    "ask on the first turn only": lambda index: index == 0,
}


# --- reading -------------------------------------------------------------------------------


# The reader under measure: the product's by default; the tests hand in a fixed one to check
# that the figures themselves can fail.
Reader = Callable[..., Situation]


def read(
    *, request: str, template: TaskTemplate, today: date, reader: Reader, **context: Any
) -> tuple[Situation, float]:
    """The reader's Situation for one request, and the time it took (ms)."""
    started = time.perf_counter()
    situation = reader(request=request, template=template, today=today, **context)
    return situation, (time.perf_counter() - started) * 1000


def answered(situation: Situation, source: str | None = None) -> dict[str, tuple[str, str]]:
    """Slot -> (value, source) for the values the reader took as given (not guesses)."""
    return {
        s.name: (s.value or "", s.source or "")
        for s in situation.slots
        if s.value is not None
        and s.source in ANSWERING_SOURCES
        and (source is None or s.source == source)
    }


# --- the blind requests ---------------------------------------------------------------------

SOURCE_GROUPS = {
    "request": "request",
    "title": "goal",
    "goal": "goal",
    "chat": "chat",
    "document": "document",
    "memory": "memory",
}


def load_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _memory_facts(lines: Iterable[str], requester: str) -> list[MemoryFact]:
    # The product's own extractor, as the memory store keys a stated preference; a line it
    # keys nothing for is kept as its text, as a person's own memory item is.
    facts = []
    for n, line in enumerate(lines):
        found = structure(line)
        key, value, kinds = (found.key, found.value, found.kinds) if found else ("", line, ())
        facts.append(MemoryFact(n, 1, requester, key, value, "global", kinds, line))
    return facts


@dataclass
class BlindReport:
    by_source: dict[str, Tally]
    inferable: Tally
    inferred_marked: int
    invented: int
    unstated: int
    ask: dict[str, AskTally]
    by_category: dict[str, AskTally]
    read_ms: list[float]
    misreadings: Counter[tuple[str, str, str]]


def measure_blind(
    items: Sequence[Mapping[str, Any]],
    *,
    policy: str = "ask_when_blocked",
    reader: Reader = build_situation,
) -> BlindReport:
    """Values read by where they were stated, values invented, and the ask decision, for the
    blind requests (bench/data/understanding/*.jsonl)."""
    by_source: dict[str, Tally] = defaultdict(Tally)
    inferable = Tally()
    inferred_marked = invented = unstated = 0
    ask: dict[str, AskTally] = defaultdict(AskTally)
    by_category: dict[str, AskTally] = defaultdict(AskTally)
    read_ms: list[float] = []
    misreadings: Counter[tuple[str, str, str]] = Counter()
    decider = get_policy(policy)
    for item in items:
        template = get_template(item["kind"])
        task = item.get("task", {})
        today = date.fromisoformat(str(task.get("created", "2027-01-01"))[:10])
        chat = item.get("chat", [])
        people = [item.get("requester", "")] + [m.get("author", "") for m in chat]
        situation, ms = read(
            reader=reader,
            request=item["request"],
            template=template,
            today=today,
            chat=tuple(m["text"] for m in chat),
            document=item.get("document", ""),
            memory=_memory_facts(item.get("memory", []), item.get("requester", "")),
            goal="\n".join(x for x in (task.get("title", ""), task.get("goal", "")) if x),
            people=tuple(p for p in people if p),
        )
        read_ms.append(ms)
        states = {s.name: s for s in situation.slots}
        labels: Mapping[str, Mapping[str, Any]] = item.get("values", {})
        for spec in template.slots:
            state = states.get(spec.name)
            label = labels.get(spec.name)
            answered = state is not None and state.value is not None and state.answered
            if label is None:
                unstated += 1
                if answered and state is not None:
                    invented += 1
                    misreadings[(spec.type, "invented", state.source or "")] += 1
                continue
            gold = [str(label.get("value", "")), str(label.get("span", ""))]
            read_value = state.value if state is not None and state.value is not None else None
            if label.get("inferred"):
                if read_value is not None and same_value(spec.type, read_value, gold):
                    inferable.right += 1
                    inferred_marked += int(not answered)
                elif read_value is None:
                    inferable.missed += 1
                else:
                    inferable.misread += 1
                continue
            tally = by_source[SOURCE_GROUPS.get(str(label.get("source")), "request")]
            if not answered or read_value is None:
                tally.missed += 1
                misreadings[(spec.type, "missed", str(label.get("source")))] += 1
            elif same_value(spec.type, read_value, gold):
                tally.right += 1
            else:
                tally.misread += 1
                misreadings[(spec.type, "misread", str(label.get("source")))] += 1
        decision = decider.decide(situation)
        gold_ask = bool(item.get("needs_question"))
        stated = {n for n, v in labels.items() if not v.get("inferred")}
        targets = set(item.get("question_targets", [])) | set(item.get("contested", []))
        for asking in (ask[policy], by_category[str(item.get("category", ""))]):
            asking.pairs.append((gold_ask, decision.action == "ask"))
            if decision.action == "ask":
                asked = set(decision.ask_slots)
                asking.targets += len(asked)
                asking.redundant += len(asked & (stated - set(item.get("contested", []))))
            if gold_ask:
                asking.blocked += 1
                asking.blocked_hit += int(bool(asked_slots(decision) & targets))
        for trivial, rule in TRIVIAL.items():
            if trivial == "ask on the first turn only":
                continue  # every request is a first turn here: the same as always ask
            ask[trivial].pairs.append((gold_ask, rule(0)))
    return BlindReport(
        dict(by_source),
        inferable,
        inferred_marked,
        invented,
        unstated,
        dict(ask),
        dict(by_category),
        read_ms,
        misreadings,
    )


def asked_slots(decision: Decision) -> set[str]:
    return set(decision.ask_slots) if decision.action == "ask" else set()


def percentile(values: Sequence[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def median(values: Sequence[float]) -> float | None:
    return statistics.median(values) if values else None
