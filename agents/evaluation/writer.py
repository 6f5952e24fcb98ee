"""The oracle writer: a deterministic stand-in for the model's document in offline runs.

It writes the task's slot values as labelled lines, a body of fixed advice per template (American
spelling, bullet lists, an exclamation mark, about 110 words: a default that breaks most
preferences), and follows whichever preferences it is told to follow, through the check each
preference carries. Offline runs measure the policies' decisions and memory, not writing skill.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from agents.evaluation.checks import SPELLINGS, words
from agents.evaluation.scenario import Preference

BODY: dict[str, tuple[str, ...]] = {
    "travel_plan": (
        "Day 1: organize a slow walk through the old town center and a favorite local cafe.",
        "Day 2: explore two neighborhoods on foot and book one guided program.",
        "Day 3: keep a free afternoon and prioritize what you enjoyed most so far.",
        "Pack light layers in a neutral color for changing weather.",
        "Keep a shared catalog of bookings and tickets, labeled by day.",
        "Summarize spending each evening against the budget.",
    ),
    "blog_post": (
        "Hook: open with a familiar behavior the reader knows well.",
        "Core idea: explain it in plain words with one color diagram.",
        "Example: walk through a real case and analyze what changed.",
        "Mistakes: list the common ones and how to prioritize fixes.",
        "Next step: point to a favorite tool or program to try.",
        "Close: summarize the three key takeaways in one short paragraph.",
    ),
    "meeting_brief": (
        "Goal: agree on the decision and who owns each follow-up.",
        "Context: summarize where things stand and what changed since last time.",
        "Open questions to prioritize, each labeled with an owner.",
        "Risks: analyze what could slip and the fallback for each.",
        "Materials: the shared catalog of documents, color coded by status.",
        "Wrap-up: organize next steps and the date of the next check-in.",
    ),
    "related_work": (
        "Early rule-based systems and their behavior on real data.",
        "Learned models: analyze how evaluation practice changed over time.",
        "Recent work that we prioritize as closest to ours.",
        "Organize each theme around a favorite representative paper.",
        "Summarize the gap our work fills at the end of the section.",
        "Keep citations labeled consistently in the chosen style.",
    ),
    "lesson_plan": (
        "Warm-up: a question on the board to center attention.",
        "Direct teaching: explain the key idea with a color example.",
        "Guided practice in pairs: analyze one worked problem together.",
        "Independent practice with a short program of exercises.",
        "Check understanding: students summarize the idea in one sentence.",
        "Homework: organize it around a favorite real-world example.",
    ),
}
GENERIC_BODY = (
    "Organize the work into three short steps with a clear owner.",
    "Start with the part you prioritize most and check it early.",
    "Analyze what went well and summarize it for the team.",
    "Keep a catalog of decisions, labeled by date.",
)
CLOSING = "Let me know what to change!"


@dataclass(frozen=True)
class SlotLine:
    label: str
    value: str


def _british(text: str) -> str:
    def swap(match: re.Match[str]) -> str:
        word = match.group(0)
        british = SPELLINGS[word.casefold()]
        return british.capitalize() if word[0].isupper() else british

    pattern = r"\b(" + "|".join(sorted(SPELLINGS, key=len, reverse=True)) + r")\b"
    return re.sub(pattern, swap, text, flags=re.IGNORECASE)


def _list(items: Sequence[str], style: str) -> list[str]:
    if style == "numbered":
        return [f"{i}. {item}" for i, item in enumerate(items, start=1)]
    if style == "none":
        return [" ".join(items)] if items else []
    return [f"- {item}" for item in items]


def _compose(
    title: str,
    lines: Sequence[SlotLine],
    body: Sequence[str],
    prefs: dict[str, Preference],
    *,
    closing: bool,
) -> str:
    checks = [p.check for p in prefs.values()]
    style = next((c["style"] for c in checks if c["type"] == "list_style"), "bullets")
    out = [f"# {title}", ""]
    summary = f"{title}: " + (", ".join(line.value for line in lines[:3]) or "a first draft") + "."
    if any(c["type"] == "contains" and c["text"].startswith("TL;DR") for c in checks):
        out += [f"TL;DR: {summary}", ""]
    if any(c["type"] == "heading_present" for c in checks):
        heading = next(c["heading"] for c in checks if c["type"] == "heading_present")
        out += [f"## {heading}", "", summary, ""]
    if lines:
        details = [f"{line.label}: {line.value}" for line in lines]
        out += ["## Details", "", *(details if style == "none" else _list(details, style)), ""]
    if body:
        out += ["## Plan", "", *_list(list(body), style), ""]
    if closing:
        out += [CLOSING, ""]
    for check in checks:
        if check["type"] == "regex" and check.get("example"):
            out += [str(check["example"]), ""]
        elif check["type"] == "contains" and not check["text"].startswith("TL;DR"):
            out += [str(check["text"]), ""]
    text = "\n".join(out).strip() + "\n"
    for check in checks:
        if check["type"] == "not_contains":
            text = text.replace(str(check["text"]), "." if check["text"] == "!" else "")
        if check["type"] == "spelling_variant" and check["variant"] == "british":
            text = _british(text)
    return text


def write_document(
    *,
    title: str,
    template: str | None,
    lines: Sequence[SlotLine],
    follow: Iterable[Preference] = (),
) -> str:
    """The document for these slot values, following `follow` (the last one per key wins)."""
    prefs: dict[str, Preference] = {}
    for pref in follow:
        prefs[pref.key] = pref
    body = list(BODY.get(template or "", GENERIC_BODY))
    limit = next(
        (int(p.check["max_words"]) for p in prefs.values() if p.check["type"] == "word_limit"),
        None,
    )
    text = _compose(title, lines, body, prefs, closing=True)
    if limit is None:
        return text
    for keep in range(len(body), -1, -1):
        text = _compose(title, lines, body[:keep], prefs, closing=False)
        if words(text) <= limit:
            break
    return text
