"""Rule-based checks on a document: the preference checkers and success checks of a scenario.

Each check is a JSON object with a "type" (see scenario.schema.json) and returns True when the
document satisfies it. Pure Python, no Django.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from typing import Any

CHECK_TYPES = (
    "regex",
    "contains",
    "not_contains",
    "word_limit",
    "heading_present",
    "spelling_variant",
    "list_style",
)

# American -> British spellings the spelling checker and the oracle writer know.
SPELLINGS: dict[str, str] = {
    "color": "colour",
    "colors": "colours",
    "favorite": "favourite",
    "favorites": "favourites",
    "organize": "organise",
    "organized": "organised",
    "organizing": "organising",
    "center": "centre",
    "centers": "centres",
    "analyze": "analyse",
    "analyzed": "analysed",
    "behavior": "behaviour",
    "behaviors": "behaviours",
    "neighborhood": "neighbourhood",
    "neighborhoods": "neighbourhoods",
    "summarize": "summarise",
    "summarizes": "summarises",
    "prioritize": "prioritise",
    "traveling": "travelling",
    "program": "programme",
    "labeled": "labelled",
    "catalog": "catalogue",
    "practice": "practise",
}
_AMERICAN = re.compile(r"\b(" + "|".join(sorted(SPELLINGS, key=len, reverse=True)) + r")\b", re.I)
_BRITISH = re.compile(
    r"\b("
    + "|".join(sorted(set(SPELLINGS.values()) - {"practise"}, key=len, reverse=True))
    + r")\b",
    re.I,
)

#: Checks on the form of what the agent writes (a style preference: list style, spelling
#: variant). A preference check of one of these types judges only the lines the agent wrote
#: (`adheres`); every other type (a value, a phrase, a heading, a line, a length) judges the
#: whole document, since its type cannot tell content from form.
STYLE_CHECKS = frozenset({"list_style", "spelling_variant"})

_BULLET = re.compile(r"^\s*[-*+]\s+\S", re.M)
_NUMBERED = re.compile(r"^\s*\d+[.)]\s+\S", re.M)
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$", re.M)


class CheckError(ValueError):
    pass


def words(text: str) -> int:
    """Words as a person counts them: runs of letters or digits (markdown marks don't count)."""
    return len(re.findall(r"[\w'\u2019-]*\w", text))


def american_words(text: str) -> list[str]:
    return [m.group(0) for m in _AMERICAN.finditer(text)]


def british_words(text: str) -> list[str]:
    return [m.group(0) for m in _BRITISH.finditer(text)]


def list_style(text: str) -> str:
    """The list style a document uses: "bullets", "numbered", "mixed" or "none"."""
    bullets, numbered = bool(_BULLET.search(text)), bool(_NUMBERED.search(text))
    if bullets and numbered:
        return "mixed"
    return "bullets" if bullets else "numbered" if numbered else "none"


def headings(text: str) -> list[str]:
    return [m.group(1).strip() for m in _HEADING.finditer(text)]


def passes(check: Mapping[str, Any], document: str) -> bool:
    """True when `document` satisfies `check`."""
    kind = check.get("type")
    if kind == "regex":
        return re.search(str(check["pattern"]), document, re.M) is not None
    if kind == "contains":
        return str(check["text"]).casefold() in document.casefold()
    if kind == "not_contains":
        return str(check["text"]).casefold() not in document.casefold()
    if kind == "word_limit":
        return words(document) <= int(check["max_words"])
    if kind == "heading_present":
        wanted = str(check["heading"]).casefold()
        return any(h.casefold() == wanted for h in headings(document))
    if kind == "spelling_variant":
        if check["variant"] == "british":
            return not american_words(document)
        return not british_words(document)
    if kind == "list_style":
        return list_style(document) == check["style"]
    raise CheckError(f"unknown check type {kind!r}")


def written_lines(before: str, after: str) -> str:
    """The lines of `after` the agent wrote: `after` without the lines preserved from `before`
    (the document as it was before the agent's turn). Each line of `before` accounts for one
    identical line of `after` (spaces aside); blank lines are dropped; the order is kept."""
    kept = Counter(_key(line) for line in before.splitlines() if line.strip())
    out = []
    for line in after.splitlines():
        if not line.strip():
            continue
        if kept[_key(line)] > 0:
            kept[_key(line)] -= 1
            continue
        out.append(line)
    return "\n".join(out) + ("\n" if out else "")


def _key(line: str) -> str:
    return " ".join(line.split())


def adheres(check: Mapping[str, Any], document: str, *, before: str = "") -> bool:
    """True when `document` satisfies a preference's `check`: a style check (`STYLE_CHECKS`)
    on the lines the agent wrote since `before` (the person's own lines it kept are theirs, not
    its style), any other check on the whole document."""
    if check.get("type") in STYLE_CHECKS:
        return passes(check, written_lines(before, document))
    return passes(check, document)


def describe(check: Mapping[str, Any]) -> str:
    """A short human description of a check (for reports)."""
    kind = check.get("type")
    if kind == "regex":
        return f"matches /{check['pattern']}/"
    if kind in ("contains", "not_contains"):
        return f"{'does not contain' if kind == 'not_contains' else 'contains'} {check['text']!r}"
    if kind == "word_limit":
        return f"at most {check['max_words']} words"
    if kind == "heading_present":
        return f"has a heading {check['heading']!r}"
    if kind == "spelling_variant":
        return f"{check['variant']} spelling"
    if kind == "list_style":
        return f"list style {check['style']}"
    raise CheckError(f"unknown check type {kind!r}")
