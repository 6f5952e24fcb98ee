"""Key numbers in bold: the output pass's rule (`bold_numbers`) and the words that ask for it
(`bold_numbers_wish`, read by the memory extractor and by the output pass for an item that
carries no structured key).

A *key number* is a quantity: an amount with its currency ("€1,500", "CHF 1'200", "250 Swiss
francs", "$2k"), a percentage, or a number with the unit or count it measures ("45 minutes",
"12 travelers", "10km"); a bare number after a label ("Servings: 4") counts too, and so does a
date that is a labelled line's whole value ("Meeting date: 2027-04-14"). Left alone: digits
inside a word ("SEV3", "Q3", "COVID-19"), ordinals ("12th"), dates and times in a sentence
("4 March 2027", "2027-03-04", "03/04", "15:30"), a year on its own, an identifier after its
name ("Day 1", "version 8.6", "Python 3"), list markers, headings, code, links and text
already in bold or italics, so running the pass twice changes nothing. Pure Python.
"""

from __future__ import annotations

import re
from functools import cache

from agents.policies.parse_money import currency_code, currency_terms

# --- the words that ask for it -----------------------------------------------------------------

_FIGURES = (
    r"(?:numbers?|figures?|amounts?|totals?|prices?|costs?|sums?|values?|quantit(?:y|ies)"
    r"|numerals?|digits|stats|statistics|percentages?|metrics?|budgets?|counts?)"
)
_WHICH = (
    r"(?:(?:the|all|any|every|each|key|important|main|big|relevant|critical|core|crucial"
    r"|headline|money|monetary|numeric(?:al)?|those|these|my|our)\s+){0,3}"
)
_BOLD = r"(?:bold(?:ed|face|faced)?|embolden(?:ed)?)"
_WISH = re.compile(
    "|".join(
        (
            # "bold the numbers", "bolded key figures", "embolden the totals"
            rf"\b{_BOLD}\s+{_WHICH}{_FIGURES}\b",
            # "key numbers in bold", "figures in bold type", "amounts stand out in bold"
            rf"\b{_FIGURES}\s+(?:[^\W\d_]+\s+){{0,3}}?(?:in|as|with|using)\s+(?:a\s+)?{_BOLD}\b",
            # "make amounts bold", "put the numbers in bold", "highlight key figures in bold"
            rf"\b(?:make|put|set|have|keep|mark|show|write|print|format|render|highlight"
            rf"|display|emphasi[sz]e|type)\s+{_WHICH}{_FIGURES}\s+(?:[^\W\d_]+\s+){{0,2}}?"
            rf"{_BOLD}\b",
            # "use bold for numbers", "bold font for the key figures"
            rf"\b{_BOLD}\s+(?:font\s+|type\s+|text\s+|formatting\s+)?(?:for|on)\s+{_WHICH}"
            rf"{_FIGURES}\b",
            # "numbers should be bold", "figures always bolded"
            rf"\b{_FIGURES}\s+(?:should|must|need\s+to|have\s+to|to|always|are|be|is)"
            rf"(?:\s+(?:always|be|been|get|in))*\s+{_BOLD}\b",
        )
    ),
    re.IGNORECASE,
)
_NEGATION = re.compile(
    r"\b(?:don'?t|do\s+not|doesn'?t|never|no\s+longer|stop|not|without|no|nothing)\b", re.I
)
_CLAUSE_END = re.compile(r"[.;:!?,\n]")


def bold_numbers_wish(text: str) -> str | None:
    """ "yes" when the text asks for the key numbers in bold ("bold the numbers", "put figures
    in bold", "make amounts bold"), "no" when it asks for them not to be ("don't bold the
    numbers"), None when it says neither."""
    for match in _WISH.finditer(text):
        ends = [m.end() for m in _CLAUSE_END.finditer(text, 0, match.start())]
        clause = text[ends[-1] if ends else 0 : match.end()]
        return "no" if _NEGATION.search(clause) else "yes"
    return None


# --- the rule ----------------------------------------------------------------------------------

_PROTECTED = re.compile(
    r"`[^`\n]*`|\[[^\]\n]*\]\([^)\n]*\)|https?://\S+|\S+@\S+\.\w+|\+\d[\d ()./-]{5,}\d"
    r"|\*\*[^\n]+?\*\*|__[^\n]+?__|(?<![*\w])\*[^*\n]+\*(?![*\w])|(?<![_\w])_[^_\n]+_(?![_\w])"
)
_MONTH = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?"
    r"|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?"
)
_ORD = r"(?:st|nd|rd|th)?"
_DATES = re.compile(
    "|".join(
        (
            r"\b\d{4}-\d{1,2}-\d{1,2}\b",  # 2027-03-04
            r"\b\d{1,2}[/.]\d{1,2}[/.]\d{2,4}\b|\b\d{1,2}/\d{1,2}\b",  # 4/3/2027, 4.3.2027, 03/04
            rf"\b\d{{1,2}}{_ORD}(?:\s*[\u2013-]\s*\d{{1,2}}{_ORD})?\s+(?:of\s+)?{_MONTH}"
            r"(?:,?\s+\d{4})?(?![^\W\d_])",  # 4 March 2027, 4-9 May
            rf"\b{_MONTH}\s+\d{{1,2}}{_ORD}(?:\s*[\u2013-]\s*\d{{1,2}}{_ORD})?(?:,?\s+\d{{4}})?\b",
            rf"\b{_MONTH}\s+\d{{4}}\b",  # March 2027
            r"\b\d{1,2}:\d{2}(?::\d{2})?(?:\s*[AaPp]\.?[Mm]\b\.?)?",  # 15:30, 9:30am
            r"\b\d{1,2}\.\d{2}\s*[AaPp]\.?[Mm]\b\.?",  # 9.30am
            r"\b\d{1,2}\s*[AaPp]\.?[Mm]\b\.?",  # 3pm
        )
    )
)
_HEADING = re.compile(r"^\s{0,3}#{1,6}(?:\s|$)")
_LIST_MARKER = re.compile(r"^\s*(?:\d{1,3}[.)]|[-*+])\s+")
_NUMBER = (
    r"\d{1,3}(?:[,.'\u2019\u00a0\u202f\u2009 ]\d{3}(?!\d))+(?:[.,]\d+)?(?![.,]?\d)|\d+(?:[.,]\d+)?"
)
_SCALE = r"(?:\s?(?:k|K|bn|mio|thousand|million|billion)(?![^\W\d_]))"
# Units written onto the number ("10km", "15%", "2h").
_ATTACHED = (
    r"(?:%|k|K|bn|km|kg|mg|g|ml|cl|l|cm|mm|m²|m|h|hrs?|mins?|s|ms|GB|MB|TB|kB|kW|kWh|°C|°F)"
    r"(?![^\W\d_])"
)
# Words after which a bare number names a thing rather than measures it ("Day 1", "step 2").
_IDENTIFIERS = frozenset({
    "day", "week", "year", "grade", "step", "phase", "stage", "part", "chapter", "section",
    "page", "room", "floor", "level", "round", "sprint", "version", "v", "release", "issue",
    "ticket", "table", "figure", "fig", "item", "line", "lesson", "unit", "module", "session",
    "episode", "season", "no", "nr", "number", "gate", "platform", "terminal", "seat", "route",
    "flight", "class", "term", "quarter", "q", "track", "slide", "appendix", "article", "rule"
})  # fmt: skip
# Words that are not what a number measures ("12 for", "3 and").
_NOT_UNITS = frozenset({
    "a", "an", "the", "and", "or", "but", "nor", "for", "to", "of", "in", "on", "at", "by",
    "with", "from", "into", "onto", "per", "via", "than", "then", "as", "if", "so", "is", "are",
    "was", "were", "be", "been", "am", "it", "its", "this", "that", "these", "those", "each",
    "every", "any", "all", "some", "no", "not", "more", "most", "less", "least", "very", "too",
    "also", "just", "only", "about", "around", "over", "under", "after", "before", "until",
    "till", "since", "while", "when", "where", "which", "who", "whom", "whose", "what", "why",
    "how", "here", "there", "always", "across", "towards", "besides", "perhaps", "unless",
    "plus", "minus", "thus", "does"
})  # fmt: skip
_UNIT_WORDS = frozenset({
    "person", "adult", "child", "kid", "guest", "attendee", "participant", "traveler",
    "traveller", "student", "pupil", "learner", "serving", "portion", "seat", "room", "ticket",
    "member", "user", "employee", "people", "children", "minute", "hour", "day", "week",
    "month", "year", "night", "weekend", "second", "km", "kilometre", "kilometer", "mile",
    "metre", "meter", "kg", "kilo", "gram", "litre", "liter", "cup", "tablespoon", "teaspoon",
    "tbsp", "tsp", "page", "slide", "word", "point", "step", "percent"
})  # fmt: skip


@cache
def _quantity() -> re.Pattern[str]:
    symbols, names = currency_terms()
    sym = "|".join(re.escape(s) for s in sorted(symbols, key=len, reverse=True))
    name = "|".join(
        r"\s+".join(re.escape(p) for p in n.split()) for n in sorted(names, key=len, reverse=True)
    )
    before = rf"(?:(?P<cb>(?i:{sym})|[A-Z]{{3}})\s?)"
    after = rf"(?:\s?(?P<ca>(?i:{sym})|[A-Z]{{3}}(?![^\W\d_])|(?i:{name})(?![^\W\d_])))"
    return re.compile(
        rf"(?<![\w.,/#:+'\u2019*-]){before}?"
        rf"(?P<n>(?:{_NUMBER})(?:\s?[\u2013-]\s?(?:{_NUMBER}))?)"
        rf"(?P<scale>{_SCALE})?"
        rf"(?:{after}|(?P<attached>{_ATTACHED})|(?P<pct>\s?%|\s(?:percent|per\s+cent)\b)"
        r"|\s(?P<unit>[^\W\d_]+))?"
        r"(?![^\W_])"
    )


def _is_unit(word: str) -> bool:
    low = word.casefold()
    if word[0].isupper() or low in _NOT_UNITS or len(low) < 2:
        return False
    if low in _UNIT_WORDS or low.removesuffix("s") in _UNIT_WORDS:
        return True
    return low.endswith("s") and not low.endswith("ss") and len(low) > 3  # a count of things


def _word_before(line: str, start: int) -> tuple[str, bool]:
    """The word just before `start` (one space between) and whether it opens the line or a
    sentence."""
    m = re.search(r"(?P<word>[^\W\d_]+)\.?\s$", line[:start])
    if m is None:
        return "", False
    head = line[: m.start("word")].rstrip()
    opens = (
        not head or head.endswith((".", "!", "?", ":")) or bool(_LIST_MARKER.fullmatch(head + " "))
    )
    return m["word"], opens


def _span(line: str, m: re.Match[str]) -> tuple[int, int] | None:
    """Where the bold goes for this match, or None when it is not a key number."""
    start = m.start()
    money = bool(m["cb"]) and bool(currency_code(m["cb"]))
    if m["cb"] and not money:
        start = m.start("n")
        if line[start - 1].isalnum():
            return None  # "SEV3": digits inside a word
    end = m.end("scale") if m["scale"] else m.end("n")
    if m["ca"] and (money or currency_code(m["ca"])):
        money, end = True, m.end("ca")
    elif m["attached"] or m["pct"]:
        end = m.end("attached") if m["attached"] else m.end("pct")
    measured = money or bool(m["scale"] or m["attached"] or m["pct"])
    counted = m["unit"] is not None and _is_unit(m["unit"])
    if counted and not m["ca"]:
        end = m.end("unit")
    if measured:
        return start, end
    if re.fullmatch(r"(?:19|20)\d{2}", m["n"]) and not counted:
        return None  # a year on its own
    word, opens = _word_before(line, start)
    if word.casefold() in _IDENTIFIERS or (word[:1].isupper() and not opens and not counted):
        return None  # "Day 1", "Year 9 class", "Python 3": a name, not a quantity
    return start, end


# A line whose whole value is a date ("- Meeting date: 2027-04-14", "When: 4 March 2027"): that
# date is a key figure of the document, as "Servings: 4" is; a date in a sentence is not.
_LABELLED = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])?\s*[^\W\d_][^:\n*]{0,40}:\s+")


def _labelled_date(line: str) -> str | None:
    label = _LABELLED.match(line)
    if label is None:
        return None
    value = line[label.end() :].rstrip()
    date = value if _DATES.fullmatch(value) else value.removesuffix(".")
    if not date or _DATES.fullmatch(date) is None:
        return None
    return f"{line[: label.end()]}**{date}**{value[len(date) :]}"


def _bold_line(line: str) -> str:
    dated = _labelled_date(line)
    if dated is not None:
        return dated
    blocked = [m.span() for m in _PROTECTED.finditer(line)]
    blocked += [m.span() for m in _DATES.finditer(line)]
    marker = _LIST_MARKER.match(line)
    if marker:
        blocked.append((0, marker.end()))
    spans: list[tuple[int, int]] = []
    for m in _quantity().finditer(line):
        if any(s < m.end() and m.start() < e for s, e in blocked):
            continue
        span = _span(line, m)
        if span is not None:
            spans.append(span)
    for start, end in reversed(spans):
        line = f"{line[:start]}**{line[start:end]}**{line[end:]}"
    return line


def bold_numbers(text: str) -> str:
    """The text with its key numbers in bold (``**€1,500**``, ``**12 travelers**``); headings,
    fenced code and what is already emphasised are left as they are."""
    out: list[str] = []
    fenced = False
    for line in text.split("\n"):
        if line.strip().startswith("```"):
            fenced = not fenced
            out.append(line)
            continue
        out.append(line if fenced or _HEADING.match(line) else _bold_line(line))
    return "\n".join(out)
