"""Is an answer useful? Rules that need no model, for the usefulness benchmark (issue 27).

A request from the blind corpus (bench/data/usefulness/, written by a helper that never saw the
code) says what a useful answer must have: a ``shape`` (a draft of the document, a list, a
checklist, one sentence, a title, an estimate, an answer), sometimes a ``count`` ("3 risks"),
the task's own values it must carry (``must_mention``: groups of spellings, any one of a group
counts) and values it must not (``must_not_mention``: a superseded figure, a tone word). An
answer is what the agent's turn produced: its chat reply, the new text of its document change,
whether it asked instead.

``judge`` says useful when the shape is right, every value group is carried, nothing forbidden
is said, no filler is, the reply is not a disclaimer alone, and (a draft) no number, month or
weekday in it is of unknown origin (not in the task, not a value the labeller accepted, not on
a line that says it is an assumption or still to confirm). ``TRIVIAL`` answers (a disclaimer, the
goal echoed, the whole task pasted back) are judged by the same rules beside the product's, so a
reader sees what the rules let through. Pure Python.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any

SHAPES = ("draft", "list", "checklist", "sentence", "title", "estimate", "answer")

# Words that carry no work: a reply made of them helps nobody (issue 27 lists those seen).
FILLER = (
    "that's always exciting",
    "that is always exciting",
    "setting the scene",
    "please go ahead",
    "could not do this well",
    "as an ai",
    "great question",
    "happy to help",
    "i hope this helps",
    "let me know if you need anything",
    "feel free to",
    "exciting journey",
)
_DISCLAIMER = re.compile(
    r"\b(can't|cannot|can not|unable|not able|could not|couldn't|don't have|do not have)\b", re.I
)
_ITEM = re.compile(r"^\s*(?:[-*+•]|\d{1,2}[.)]|\[[ xX]\])\s+\S")
_ITEM_MARK = re.compile(r"^\s*(?:[-*+\u2022]|\d{1,2}[.)]|\[[ xX]\]|#+)\s*")
_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")
_MONTHS = tuple(
    "january february march april may june july august september october november december".split()  # noqa: SIM905
)
_DAYS = tuple("monday tuesday wednesday thursday friday saturday sunday".split())  # noqa: SIM905
_TIME_UNIT = re.compile(
    r"\d[\d.,]*\s*(?:-|\u2013|to)?\s*\d*[\d.,]*\s*"
    r"(?:h\b|hrs?\b|hours?|days?|weeks?|wks?\b|minutes?|mins?\b|months?|person-days?)",
    re.I,
)
_MONEY = re.compile(
    r"(?:[£$€¥]\s?\d|\d[\d.,]*\s?(?:k\b|gbp|eur|usd|chf|sek|nok|dkk|pln|jpy))", re.I
)
_ASSUMED = re.compile(r"assum|to confirm|to decide|tbc|tbd|\?|not (?:yet )?(?:known|set)", re.I)
_QUOTES = " *_#\"'\u201c\u201d\u2018\u2019"
_LABEL = re.compile(r"^\s*(?:[#>*_\-\s]*)?(?:[\w ]{1,20}:\s+)?")


@dataclass(frozen=True)
class Answer:
    """What a turn produced for one request."""

    reply: str = ""  # everything the agent said in the chat for this turn
    change: str = ""  # the new text of its document change (suggested or made), "" if none
    asked: bool = False  # it asked a question instead of doing the work


@dataclass(frozen=True)
class Verdict:
    useful: bool
    shape_ok: bool
    missing: tuple[str, ...] = ()  # value groups not carried (their first spelling)
    forbidden: tuple[str, ...] = ()  # forbidden values said
    filler: tuple[str, ...] = ()
    disclaimer_alone: bool = False
    invented: tuple[str, ...] = ()  # a draft's tokens of unknown origin
    copied: bool = False  # mostly the task's own lines pasted back
    reasons: tuple[str, ...] = field(default=())


def normal(text: str) -> str:
    """Casefolded, NFKC, dashes and spaces made plain: how values are compared."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = re.sub("[\u2010-\u2015\u2212]", "-", text)
    return re.sub(r"\s+", " ", text)


def items(text: str) -> list[str]:
    """The list items of ``text`` (bullets, numbers, check boxes), one per line."""
    return [line for line in text.splitlines() if _ITEM.match(line)]


def sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+", text.strip()) if s.strip()]


def _words(text: str) -> list[str]:
    return re.findall("[^\\W_]+(?:['\u2019-][^\\W_]+)*", text)


def shape_ok(shape: str, count: int | None, answer: Answer) -> tuple[bool, str]:
    """Whether ``answer`` has the form asked for, and why not."""
    reply, change = answer.reply.strip(), answer.change.strip()
    if answer.asked:  # a question put back to the person did not do what they asked
        return False, "asked a question instead"
    if shape == "draft":
        lines = [line for line in change.splitlines() if line.strip()]
        return (len(lines) >= 3, "" if len(lines) >= 3 else "no document change of 3+ lines")
    if shape in ("list", "checklist"):
        found = max((items(reply), items(change)), key=len)
        if len(found) < 2:
            return False, "no list"
        if count is not None and len(found) != count:
            return False, f"{len(found)} items, {count} asked"
        return True, ""
    if shape == "sentence":
        if not reply or items(reply):
            return False, "no sentence (empty or a list)"
        ok = len(sentences(reply)) <= 3 and len(_words(reply)) <= 70
        return ok, "" if ok else "more than a sentence or two"
    if shape == "title":
        lines = [_LABEL.sub("", line).strip(_QUOTES) for line in reply.splitlines()]
        short = [line for line in lines if 2 <= len(_words(line)) <= 14]
        ok = bool(short) and len(_words(reply)) <= 40
        return ok, "" if ok else "no short title line"
    if shape == "estimate":
        ok = bool(_TIME_UNIT.search(reply) or _MONEY.search(reply))
        return ok, "" if ok else "no figure with a unit"
    if shape == "answer":
        ok = bool(reply) and len(_words(reply)) <= 120
        return ok, "" if ok else "no short answer"
    raise ValueError(f"unknown shape {shape!r}")


def _said(spelling: str, text: str) -> bool:
    wanted = normal(spelling)
    if not wanted:
        return False
    # From the start of a word ("8" is not in "18", "glove" is in "gloves"); a number to its end
    # too ("12" is not in "12.5").
    end = r"(?![\w.,]\d|\d)" if wanted[-1:].isdigit() else ""
    return re.search(rf"(?<!\w){re.escape(wanted)}{end}", text) is not None


def source_tokens(task: Mapping[str, Any], request: Mapping[str, Any]) -> set[str]:
    """Numbers, months and weekdays the task and the request state (and the labeller's
    accepted values, which may be derived: a per-item budget)."""
    texts = [
        str(task.get("title", "")),
        str(task.get("goal", "")),
        str(task.get("document", "")),
        str(task.get("created", "")),
        str(request.get("text", "")),
        *(str(m.get("text", "")) for m in task.get("chat", ())),
        *(s for group in request.get("expect", {}).get("must_mention", ()) for s in group),
    ]
    return {token for text in texts for token in _tokens(text)}


def _tokens(text: str) -> set[str]:
    text = normal(text)
    out = {n.replace(",", "") for n in _NUMBER.findall(text)}
    for n in list(out):  # "10:00" also states 10; "3.5" states 3.5
        out |= set(re.split(r"[:.]", n))
    words = set(re.findall(r"[a-z]+", text))
    out |= {m for m in _MONTHS if m in words or m[:3] in words}
    out |= {d for d in _DAYS if d in words or d[:3] in words}
    return out


_DAY_MONTH = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+([a-z]{3,9})(?:\s+(\d{4}))?\b")


def _weekdays_of_dates(line: str, year: int) -> set[str]:
    """The weekdays of the dates a line states ("31 March 2027" -> wednesday): a weekday worked
    out from a stated date is not invented."""
    out: set[str] = set()
    for day, month, stated in _DAY_MONTH.findall(normal(line)):
        names = [m for m in _MONTHS if month in (m, m[:3])]
        if not names:
            continue
        try:
            when = date(int(stated or year), _MONTHS.index(names[0]) + 1, int(day))
        except ValueError:
            continue
        out.add(_DAYS[when.weekday()])
    return out


def invented(change: str, known: set[str], *, year: int = 2026) -> list[str]:
    """Numbers, months and weekdays in ``change`` nobody gave: not in ``known``, not the weekday
    of a date on the same line, and not on a line that marks them as an assumption or still
    open; list numbering and years do not count."""
    out: list[str] = []
    for line in change.splitlines():
        if _ASSUMED.search(line):
            continue
        body = re.sub(r"^\s*(?:\d{1,2}[.)]\s+)", "", line)
        derived = _weekdays_of_dates(body, year)
        for token in sorted(_tokens(body)):
            if token in known or token in derived or re.fullmatch(r"20\d\d", token):
                continue
            out.append(token)
    return out


def source_text(task: Mapping[str, Any]) -> str:
    """What the task already says, normalised: title, goal, document, chat."""
    chat = "\n".join(str(m.get("text", "")) for m in task.get("chat", ()))
    return normal(
        f"{task.get('title', '')}\n{task.get('goal', '')}\n{task.get('document', '')}\n{chat}"
    )


def copied(text: str, source: str) -> bool:
    """Whether ``text`` is mostly the task's own lines again: two or more lines of three words
    or more, at least 80 % of them found word for word in the task."""
    lines = [_ITEM_MARK.sub("", line).strip(" .") for line in text.splitlines()]
    long = [normal(line) for line in lines if len(_words(line)) >= 3]
    again = [line for line in long if line in source]
    return len(again) >= 2 and len(again) >= 0.8 * len(long)


def judge(task: Mapping[str, Any], request: Mapping[str, Any], answer: Answer) -> Verdict:
    expect = request["expect"]
    shape = str(expect["shape"])
    ok, why = shape_ok(shape, expect.get("count"), answer)
    said = normal(f"{answer.reply}\n{answer.change}")
    missing = tuple(
        group[0]
        for group in expect.get("must_mention", ())
        if not any(_said(s, said) for s in group)
    )
    forbidden = tuple(s for s in expect.get("must_not_mention", ()) if _said(s, said))
    filler = tuple(f for f in FILLER if f in normal(answer.reply))
    alone = bool(_DISCLAIMER.search(answer.reply)) and not answer.change.strip() and bool(missing)
    year = int(str(task.get("created", "2026"))[:4] or 2026)
    made_up = (
        tuple(invented(answer.change, source_tokens(task, request), year=year))
        if shape == "draft"
        else ()
    )
    reasons = [r for r in (why,) if r]
    if (
        not answer.asked
        and shape in ("answer", "sentence", "estimate")
        and answer.reply.rstrip().endswith("?")
    ):
        reasons.append("ends in a question, not an answer")
    source = source_text(task)
    pasted = copied(answer.reply, source) or copied(answer.change, source)
    if pasted:
        reasons.append("copies the task back")
    reasons += [f"missing {m!r}" for m in missing]
    reasons += [f"said {f!r}" for f in forbidden]
    reasons += [f"filler {f!r}" for f in filler]
    reasons += ["a disclaimer alone"] if alone else []
    reasons += [f"invented {', '.join(made_up)}"] if made_up else []
    return Verdict(
        useful=not reasons,
        shape_ok=ok,
        missing=missing,
        forbidden=forbidden,
        filler=filler,
        disclaimer_alone=alone,
        invented=made_up,
        copied=pasted,
        reasons=tuple(reasons),
    )


def _dump(task: Mapping[str, Any], request: Mapping[str, Any]) -> Answer:
    """Everything the task says, pasted back as the reply and as the draft."""
    chat = "\n".join(f"- {m.get('text', '')}" for m in task.get("chat", ()))
    text = f"{task.get('title', '')}. {task.get('goal', '')}\n{task.get('document', '')}\n{chat}"
    return Answer(reply=text, change=text)


# Answers anyone could give without doing the work, judged beside the product's.
TRIVIAL: dict[str, Callable[[Mapping[str, Any], Mapping[str, Any]], Answer]] = {
    "disclaimer": lambda task, request: Answer(reply="Sorry, I can't do that here."),
    "echo the goal": lambda task, request: Answer(reply=str(task.get("goal", ""))),
    "paste the task back": _dump,
    "ask": lambda task, request: Answer(reply="What should I know first?", asked=True),
}


@dataclass
class Tally:
    """Figures over many verdicts."""

    verdicts: list[tuple[str, Verdict]] = field(default_factory=list)

    def add(self, shape: str, verdict: Verdict) -> None:
        self.verdicts.append((shape, verdict))

    @property
    def n(self) -> int:
        return len(self.verdicts)

    def useful(self) -> float:
        return _share(v.useful for _, v in self.verdicts)

    def by_shape(self) -> dict[str, tuple[int, int]]:
        out: dict[str, tuple[int, int]] = {}
        for shape, v in self.verdicts:
            good, total = out.get(shape, (0, 0))
            out[shape] = (good + v.useful, total + 1)
        return out

    def drafts_clean(self) -> tuple[int, int]:
        """(drafts written with nothing invented, drafts written: a change of three lines or
        more that is not the task pasted back)."""
        drafts = [v for s, v in self.verdicts if s == "draft" and v.shape_ok and not v.copied]
        return sum(not v.invented for v in drafts), len(drafts)

    def filler(self) -> int:
        return sum(bool(v.filler) for _, v in self.verdicts)


def _share(flags: Iterable[bool]) -> float:
    values = list(flags)
    return sum(values) / len(values) if values else 0.0


def tally(
    cases: Sequence[tuple[Mapping[str, Any], Mapping[str, Any], Answer]],
) -> Tally:
    out = Tally()
    for task, request, answer in cases:
        out.add(str(request["expect"]["shape"]), judge(task, request, answer))
    return out
