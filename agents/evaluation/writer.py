"""The offline writer: a deterministic stand-in for the model's document, that never sees a check.

It writes from what the agent knows: the task (title, template), the slot values the agent
decided on (what the person gave, the policy's assumptions), the preferences the agent knows of
(memory items handed to the turn, and what the person said in this episode's chat: their key,
value and text, as a memory store extracts them), and the document as it is. Its own habits
are those of a plain assistant (American spelling, bullet lists, ISO dates as the agent holds
them, a friendly closing line with an exclamation mark, about 110 words), so a preference the
agent did not know, or a kind of preference the writer cannot read, shows as a failure. Every
piece it writes then goes through the product's own output pass (``agents.policies.style``),
with the preferences the product reads from the same items, as a model's edits do in the app.

An existing document is kept: values already written on a labelled line are updated in place,
missing ones are added in a "Details" section, everything else stays as it was.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date

from agents.evaluation.checks import SPELLINGS, words
from agents.policies.memory_facts import MemoryFact
from agents.policies.style import enforce, preferences

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
    "Set a check-in to review the behavior of the plan after a week.",
)
CLOSING = "Let me know what to change!"
WORD_LIMITS = {"short": 80, "medium": 160}
_MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")


@dataclass(frozen=True)
class SlotLine:
    label: str
    value: str
    aliases: tuple[str, ...] = ()
    is_date: bool = False


@dataclass(frozen=True)
class Known:
    """A preference the agent knows of: its key, value and text (never its check)."""

    key: str
    value: str = ""
    text: str = ""


@dataclass
class Style:
    """How to write, as read from the known preferences (the last one per key wins)."""

    spelling: str = "american"
    list_style: str = "bullets"
    word_limit: int | None = None
    date_format: str = ""
    tone: str = ""
    tldr: bool = False
    summary_heading: str = ""
    no_exclamation: bool = False
    sign_off: str = ""
    headings: bool = True
    # What the product's output pass reads from the same preferences (agents.policies.style):
    # it runs over every piece the writer writes, as it runs over a model's edits in the app.
    output: dict[str, str] = field(default_factory=dict)


_LIMIT = re.compile(r"(\d+)\s*words")


def read_style(known: Iterable[Known], *, person: str = "") -> Style:
    """The writer's reading of preferences: the structured keys of SHARED_CONTRACTS.md by value,
    and a few kinds of free-text wish by their words (what a capable model would follow)."""
    known = list(known)
    style = Style(output=output_preferences(known))
    for pref in known:
        key, value, text = pref.key, pref.value.casefold(), pref.text
        low = text.casefold()
        if key == "spelling" or "spelling" in low or "british english" in low:
            if "british" in value or "british" in low:
                style.spelling = "british"
            elif "american" in value or "american" in low:
                style.spelling = "american"
        if key in ("list_style", "lists") or "list" in low or "bullet" in low:
            if value in ("numbered", "bullets", "prose"):
                style.list_style = "none" if value == "prose" else value
            elif "numbered" in low:
                style.list_style = "numbered"
            elif "no lists" in low or "paragraph" in low or "prose" in low:
                style.list_style = "none"
            elif "bullet" in low:
                style.list_style = "bullets"
        if key == "length" or "words at most" in low or "short" in low:
            found = _LIMIT.search(low) or _LIMIT.search(value)
            if found:
                style.word_limit = int(found.group(1))
            elif value in WORD_LIMITS:
                style.word_limit = WORD_LIMITS[value]
            elif value == "long":
                style.word_limit = None
        if key == "date_format" and value in ("iso", "day_month_year", "month_day_year"):
            style.date_format = value
        if key == "tone" and value:
            style.tone = value
        if key == "headings" and value in ("yes", "no"):
            style.headings = value == "yes"
        if "tl;dr" in low:
            style.tldr = True
        heading = re.search(r"\b(?:an?|the)\s+['\"]?(\w+)['\"]?\s+heading\b", text, re.I)
        if heading:
            style.summary_heading = heading.group(1).capitalize()
        if "exclamation" in low:
            style.no_exclamation = True
        if "owner:" in low or "owner line" in low:
            style.sign_off = f"Owner: {person}" if person else ""
    return style


def output_preferences(known: Iterable[Known]) -> dict[str, str]:
    """The preferences the product's output pass follows among these (its own reading of
    them: ``agents.policies.style.preferences``)."""
    return preferences(
        MemoryFact(None, None, "", key=k.key, value=k.value, scope="task", text=k.text)
        for k in known
    )


def _spell(text: str, variant: str) -> str:
    if variant != "british":
        return text

    def swap(match: re.Match[str]) -> str:
        word = match.group(0)
        british = SPELLINGS[word.casefold()]
        return british.capitalize() if word[0].isupper() else british

    pattern = r"\b(" + "|".join(sorted(SPELLINGS, key=len, reverse=True)) + r")\b"
    return re.sub(pattern, swap, text, flags=re.IGNORECASE)


def format_dates(text: str, date_format: str) -> str:
    """ISO dates in `text` written the preferred way (day_month_year: 4 March 2027,
    month_day_year: March 4, 2027); unchanged otherwise."""
    if date_format not in ("day_month_year", "month_day_year"):
        return text

    def swap(match: re.Match[str]) -> str:
        try:
            day = date(int(match[1]), int(match[2]), int(match[3]))
        except ValueError:
            return match.group(0)
        month = _MONTHS[day.month - 1]
        if date_format == "day_month_year":
            return f"{day.day} {month} {day.year}"
        return f"{month} {day.day}, {day.year}"

    return _ISO.sub(swap, text)


def _list(items: Sequence[str], style: str) -> list[str]:
    if style == "numbered":
        return [f"{i}. {item}" for i, item in enumerate(items, start=1)]
    if style == "none":
        return [" ".join(items)] if items else []
    return [f"- {item}" for item in items]


def _finish(text: str, style: Style) -> str:
    text = format_dates(text, style.date_format)
    if style.no_exclamation or style.tone == "formal":
        text = text.replace("!", ".")
    return enforce(_spell(text, style.spelling), style.output)


def _fresh(
    title: str, lines: Sequence[SlotLine], body: Sequence[str], style: Style, *, closing: bool
) -> str:
    out = [f"# {title}", ""]
    summary = f"{title}: " + (", ".join(line.value for line in lines[:3]) or "a first draft") + "."
    if style.tldr:
        out += [f"TL;DR: {summary}", ""]
    if style.summary_heading:
        out += [f"## {style.summary_heading}", "", summary, ""]
    if lines:
        details = [f"{line.label}: {line.value}" for line in lines]
        if style.headings:
            out += ["## Details", ""]
        out += [*(details if style.list_style == "none" else _list(details, style.list_style)), ""]
    if body:
        if style.headings:
            out += ["## Plan", ""]
        out += [*_list(list(body), style.list_style), ""]
    if closing and style.tone != "formal":
        out += [CLOSING, ""]
    if style.sign_off:
        out += [style.sign_off, ""]
    return _finish("\n".join(out).strip() + "\n", style)


def _label_re(line: SlotLine) -> str:
    names = [line.label, *line.aliases]
    return "|".join(re.escape(n) for n in sorted({n for n in names if n}, key=len, reverse=True))


def _edit(document: str, lines: Sequence[SlotLine], style: Style) -> str:
    """Update labelled values in place, add the missing ones; keep every other line."""
    text = document.rstrip("\n")
    missing: list[SlotLine] = []
    for line in lines:
        pattern = re.compile(
            rf"^(?P<lead>\s*(?:[-*+]|\d+[.)])?\s*\**(?:{_label_re(line)})\**\s*(?::|=|\bis\b)\s*)"
            r"(?P<value>[^\n]*)$",
            re.IGNORECASE | re.MULTILINE,
        )
        found = pattern.search(text)
        if found:
            value = enforce(format_dates(line.value, style.date_format), style.output)
            text = text[: found.start("value")] + value + text[found.end("value") :]
        else:
            missing.append(line)
    if missing:
        details = [f"{line.label}: {line.value}" for line in missing]
        added = details if style.list_style == "none" else _list(details, style.list_style)
        block = (["## Details", ""] if style.headings else []) + added
        text += "\n\n" + _finish("\n".join(block), style)
    head, _, rest = text.partition("\n") if text.lstrip().startswith("#") else ("", "", text)
    extra = []
    if style.tldr and "tl;dr" not in text.casefold():
        summary = ", ".join(line.value for line in lines[:3]) or "see below"
        extra.append(f"TL;DR: {summary}.")
    if style.summary_heading and style.summary_heading.casefold() not in text.casefold():
        extra.append(
            f"## {style.summary_heading}\n\n"
            + (", ".join(x.value for x in lines[:3]) or "See below")
            + "."
        )
    if extra:
        lead = _finish("\n\n".join(extra), style)
        text = f"{head}\n\n{lead}\n{rest}" if head else f"{lead}\n\n{rest}"
    if style.sign_off and style.sign_off not in text:
        text += f"\n\n{style.sign_off}"
    return text + "\n"


def write_document(
    *,
    title: str,
    template: str | None,
    lines: Sequence[SlotLine],
    known: Iterable[Known] = (),
    document: str = "",
    person: str = "",
) -> str:
    """The document the agent writes: a first draft when the document is empty (or only the
    template's headings), else the existing document with the values updated."""
    style = read_style(list(known), person=person)
    existing = [x for x in document.splitlines() if x.strip() and not x.lstrip().startswith("#")]
    if existing:
        return _edit(document, lines, style)
    body = list(BODY.get(template or "", GENERIC_BODY))
    text = _fresh(title, lines, body, style, closing=True)
    if style.word_limit is None:
        return text
    for keep in range(len(body), -1, -1):
        text = _fresh(title, lines, body[:keep], style, closing=False)
        if words(text) <= style.word_limit:
            break
    return text


def known_from(items: Iterable[Mapping[str, str]]) -> list[Known]:
    return [
        Known(key=i.get("key", ""), value=i.get("value", ""), text=i.get("text", "")) for i in items
    ]
