"""Money with its currency in running text: ``price-parser`` reads the amount (1,500 /
1.500,00 / 1'200), the currency comes from its symbol, its ISO code or its name (``babel``'s
names). The regular expressions here only find *where* an amount may be (a currency next to a
number); the packages read *what* it is. Pure Python, no I/O besides the packages' own data
files, loaded once on first use.
"""

from __future__ import annotations

import re
from functools import cache

import babel.numbers
from price_parser import Price

from agents.policies.parse_numbers import Found, digits_for_words, format_number

# --- money -------------------------------------------------------------------------------------

# Symbols and short words; "$" and "dollars" alone are read as US dollars, a little less sure.
_SYMBOLS: dict[str, tuple[str, float]] = {
    "€": ("EUR", 0.95),
    "£": ("GBP", 0.95),
    "¥": ("JPY", 0.85),
    "₹": ("INR", 0.95),
    "₩": ("KRW", 0.95),
    "₽": ("RUB", 0.95),
    "₺": ("TRY", 0.95),
    "₪": ("ILS", 0.95),
    "₴": ("UAH", 0.95),
    "₱": ("PHP", 0.95),
    "฿": ("THB", 0.95),
    "zł": ("PLN", 0.95),
    "kč": ("CZK", 0.95),
    "r$": ("BRL", 0.95),
    "us$": ("USD", 0.95),
    "a$": ("AUD", 0.95),
    "au$": ("AUD", 0.95),
    "c$": ("CAD", 0.95),
    "ca$": ("CAD", 0.95),
    "nz$": ("NZD", 0.95),
    "hk$": ("HKD", 0.95),
    "s$": ("SGD", 0.95),
    "$": ("USD", 0.85),
    "euro": ("EUR", 0.95),
    "euros": ("EUR", 0.95),
    "pound": ("GBP", 0.9),
    "pounds": ("GBP", 0.9),
    "quid": ("GBP", 0.9),
    "yen": ("JPY", 0.95),
    "dollar": ("USD", 0.8),
    "dollars": ("USD", 0.8),
    "bucks": ("USD", 0.7),
    "francs": ("CHF", 0.8),
    "rupees": ("INR", 0.85),
    "yuan": ("CNY", 0.95),
    "renminbi": ("CNY", 0.95),
    "zloty": ("PLN", 0.95),
    "złoty": ("PLN", 0.95),
    "zlotys": ("PLN", 0.95),
    "złotych": ("PLN", 0.95),
    "reais": ("BRL", 0.95),
    "won": ("KRW", 0.7),
}


@cache
def _currency_names() -> dict[str, tuple[str, float]]:
    """ISO codes and the English names babel knows ("Swiss francs", "Polish zlotys")."""
    names: dict[str, tuple[str, float]] = {}
    for code in babel.numbers.list_currencies():
        names[code.casefold()] = (code, 0.95)
        for count in (1, 2):
            name = babel.numbers.get_currency_name(code, count=count, locale="en")
            if name and name.upper() != code and len(name) > 3:
                names.setdefault(name.casefold(), (code, 0.95))
    names.update(_SYMBOLS)
    return names


def currency_code(term: str) -> str:
    """The ISO code a currency symbol, code or English name stands for ("€" -> "EUR", "chf"
    -> "CHF", "Swiss francs" -> "CHF"), or "" when it is none."""
    return _currency_names().get(" ".join(term.casefold().split()), ("", 0.0))[0]


@cache
def currency_terms() -> tuple[frozenset[str], frozenset[str]]:
    """How a currency is written next to an amount, apart from its ISO code: (symbols and
    short marks such as "€", "R$", "zł"; names such as "euros", "Swiss francs"), casefolded."""
    codes = {c.casefold() for c in babel.numbers.list_currencies()}
    terms = [t for t in _currency_names() if t not in codes]
    symbols = frozenset(t for t in terms if len(t) <= 2 or not t.replace(" ", "").isalpha())
    return symbols, frozenset(terms) - symbols


@cache
def _money_res() -> tuple[re.Pattern[str], re.Pattern[str]]:
    words = sorted(_currency_names(), key=len, reverse=True)
    codes = {c.casefold() for c in babel.numbers.list_currencies()}

    def term(w: str) -> str:
        escaped = r"\s+".join(re.escape(part) for part in w.split())
        # Codes and names are words; symbols stand anywhere.
        return rf"(?<!\w){escaped}(?!\w)" if w[-1].isalpha() or w in codes else escaped

    cur = "|".join(term(w) for w in words)
    amount = r"\d[\d.,'\u202f\u00a0 ]*\d|\d"
    scale = r"(?:\s*(?P<k>k|thousand|million|m|mio)\b)?"
    before = re.compile(rf"(?P<cur>{cur})\s?(?P<n>{amount}){scale}", re.IGNORECASE)
    after = re.compile(rf"(?<![\w.,])(?P<n>{amount}){scale}\s?(?P<cur>{cur})", re.IGNORECASE)
    return before, after


_SCALES = {"k": 1000, "thousand": 1000, "m": 1_000_000, "million": 1_000_000, "mio": 1_000_000}


# Codes people write in lower case too; any other code only in capitals ("all 32" is not 32
# Albanian lek, "top 5" not 5 Tongan pa'anga).
_LOWER_CASE_CODES = frozenset(
    ["eur", "usd", "gbp", "chf", "jpy", "cad", "aud", "nzd", "sek", "nok", "dkk", "pln", "czk"]
)


def _a_word_not_a_code(written: str) -> bool:
    return (
        len(written) == 3
        and written.isalpha()
        and not written.isupper()
        and written.casefold() not in _LOWER_CASE_CODES
        and written.casefold() in {c.casefold() for c in babel.numbers.list_currencies()}
    )


def find_money(text: str) -> list[Found]:
    """Amounts with their currency: "€1,500", "1.500,00 €", "CHF 1'200", "2k USD",
    "3 thousand pounds", "250 Swiss francs", "1 200 zł". Values read "EUR 1500"."""
    text = digits_for_words(text)
    names = _currency_names()
    found: list[Found] = []
    taken: list[tuple[int, int]] = []
    for pattern in _money_res():
        for m in pattern.finditer(text):
            if any(s < m.end() and m.start() < e for s, e in taken):
                continue
            raw = m["n"].strip(" \u00a0\u202f")
            amount = Price.fromstring(raw).amount
            if amount is None:
                continue
            scale = _SCALES.get((m["k"] or "").casefold(), 1)
            code, confidence = names.get(" ".join(m["cur"].casefold().split()), ("", 0.0))
            if not code or _a_word_not_a_code(m["cur"]):
                continue
            taken.append((m.start(), m.end()))
            value = f"{code} {format_number(amount * scale)}"
            found.append(Found(value, confidence, m.start(), m.end(), m[0]))
    found.sort(key=lambda f: f.start)
    return found


def parse_amount(text: str) -> str | None:
    """A money value ("EUR 900") or, without a currency, the bare amount ("900")."""
    money = find_money(text)
    if money:
        return money[0].value
    text = digits_for_words(text)
    m = re.search(r"\d[\d.,']*\s*(?:k|thousand)?\b", text, re.IGNORECASE)
    if m is None:
        return None
    scale = 1000 if re.search(r"(?:k|thousand)$", m[0].strip(), re.IGNORECASE) else 1
    amount = Price.fromstring(re.sub(r"(?i)k|thousand", "", m[0])).amount
    return None if amount is None else format_number(amount * scale)
