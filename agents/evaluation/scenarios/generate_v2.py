"""Writes collab-v2.json, the shipped format-2 scenario set (docs/evaluation.md "The shipped
sets"). Deterministic: `python -m agents.evaluation.scenarios.generate_v2` rewrites the file and
a test checks the file is its output.

Four ways of writing a request, so no single phrasing dominates: a terse generator, a polite
one, a chatty one that buries the values in context, and a non-native / code-switching one; plus
hand-written requests (HAND) for every template and category. Ten kinds of work: the five shipped
templates and five defined in the file. Sixteen people, several with non-English names and
values with non-ASCII letters. People alternate between the dev and test splits (a person's
episodes stay in one split, so memory carries over inside a split): tune on dev only.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent / "collab-v2.json"
START = date(2027, 3, 1)
MONTHS = (
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

# --- templates defined in the file -----------------------------------------------------------

FILE_TEMPLATES: list[dict[str, Any]] = [
    {
        "kind": "job_posting",
        "title": "Job posting",
        "description": "A job advert: the role, where, pay, contract.",
        "keywords": ["job", "posting", "hiring", "vacancy", "role", "advert"],
        "slots": [
            {
                "name": "role",
                "type": "text",
                "question": "Which role are we hiring for?",
                "aliases": ["position", "job title"],
                "cues": ["for a", "hiring a", "hire a"],
            },
            {
                "name": "location",
                "type": "place",
                "question": "Where is the job based?",
                "aliases": ["based", "office", "city"],
                "cues": ["in", "based in"],
            },
            {
                "name": "salary",
                "type": "money",
                "question": "What is the salary range?",
                "aliases": ["pay", "compensation"],
            },
            {
                "name": "contract",
                "type": "choice",
                "required": False,
                "choices": ["full-time", "part-time", "contract"],
                "default": "full-time",
                "question": "Full-time, part-time or a contract?",
            },
        ],
    },
    {
        "kind": "incident_report",
        "title": "Incident report",
        "description": "A post-incident write-up: what broke, when, how bad, how long.",
        "keywords": ["incident", "outage", "postmortem", "post-mortem", "downtime"],
        "slots": [
            {
                "name": "incident_date",
                "label": "incident date",
                "type": "date",
                "question": "When did the incident happen?",
                "aliases": ["date", "when"],
            },
            {
                "name": "service",
                "type": "text",
                "question": "Which service was affected?",
                "aliases": ["system", "component"],
                "cues": ["of the", "in the", "on the"],
            },
            {
                "name": "severity",
                "type": "choice",
                "choices": ["SEV1", "SEV2", "SEV3"],
                "question": "What severity was it (SEV1, SEV2, SEV3)?",
                "choice_aliases": {
                    "SEV1": ["sev 1", "critical"],
                    "SEV2": ["sev 2", "major"],
                    "SEV3": ["sev 3", "minor"],
                },
            },
            {
                "name": "duration_minutes",
                "label": "duration",
                "type": "number",
                "question": "How long did it last?",
                "units": ["minutes", "minute", "min", "mins"],
            },
        ],
    },
    {
        "kind": "event_invite",
        "title": "Event invitation",
        "description": "An invitation: when, where, how many, what to wear.",
        "keywords": ["invite", "invitation", "party", "event", "celebration", "dinner"],
        "slots": [
            {
                "name": "event_date",
                "label": "event date",
                "type": "date",
                "question": "When is the event?",
                "aliases": ["date", "when"],
            },
            {
                "name": "venue",
                "type": "place",
                "question": "Where will it be?",
                "aliases": ["place", "location", "where"],
                "cues": ["at", "in"],
            },
            {
                "name": "guests",
                "type": "number",
                "question": "How many guests?",
                "units": ["guests", "people", "persons"],
            },
            {
                "name": "dress_code",
                "label": "dress code",
                "type": "choice",
                "required": False,
                "choices": ["casual", "smart casual", "formal"],
                "default": "smart casual",
                "question": "Is there a dress code?",
            },
        ],
    },
    {
        "kind": "release_notes",
        "title": "Release notes",
        "description": "What is new in a release, for whom.",
        "keywords": ["release", "changelog", "release notes", "version", "what's new"],
        "slots": [
            {
                "name": "product",
                "type": "text",
                "question": "Which product is this for?",
                "aliases": ["app"],
                "cues": ["for"],
            },
            {
                "name": "version",
                "type": "text",
                "question": "Which version is it?",
                "aliases": ["release number"],
            },
            {
                "name": "release_date",
                "label": "release date",
                "type": "date",
                "question": "When does it ship?",
                "aliases": ["date", "ships"],
            },
            {
                "name": "audience",
                "type": "choice",
                "choices": ["customers", "internal", "developers"],
                "question": "Who are the notes for: customers, the internal team or developers?",
                "choice_aliases": {
                    "developers": ["devs", "engineers"],
                    "internal": ["the team", "staff"],
                },
            },
        ],
    },
    {
        "kind": "recipe_card",
        "title": "Recipe card",
        "description": "A recipe: the dish, how many it serves, diet.",
        "keywords": ["recipe", "dish", "cook", "cooking", "bake"],
        "slots": [
            {
                "name": "dish",
                "type": "text",
                "question": "Which dish?",
                "aliases": ["recipe"],
                "cues": ["for", "recipe for"],
            },
            {
                "name": "servings",
                "type": "number",
                "question": "How many servings?",
                "units": ["servings", "people", "portions"],
            },
            {
                "name": "diet",
                "type": "choice",
                "required": False,
                "choices": ["none", "vegetarian", "vegan", "gluten-free"],
                "default": "none",
                "question": "Any dietary requirement?",
            },
        ],
    },
]

# --- people ------------------------------------------------------------------------------------

PEOPLE = [
    ("zoe", "Zoë Müller", "Product lead in Berlin; brisk, writes in short sentences."),
    ("soren", "Søren Åberg", "Researcher in Malmö; precise, likes structure."),
    ("chiara", "Chiara Rossi", "Teacher in Bologna; warm, chatty."),
    ("hiroshi", "Hiroshi Tanaka", "SRE lead in Osaka; terse, numbers first."),
    ("amara", "Amara Okafor", "Marketing manager in Lagos; friendly, fast."),
    ("jose", "José Martínez", "Event planner in Sevilla; enthusiastic."),
    ("lukasz", "Łukasz Wróbel", "Engineering manager in Kraków; dry humour."),
    ("mei", "Mei Lin 林美", "Recruiter in Taipei; polite, formal."),
    ("priya", "Priya Raman", "Chef and food writer in Chennai; vivid."),
    ("ines", "Inês Duarte", "Travel agent in Porto; practical."),
    ("olu", "Olúmìdé Bello", "Release manager in Abuja; checklist person."),
    ("bjorn", "Björn Eriksson", "History teacher in Uppsala; patient."),
    ("aroha", "Aroha Ngata", "Community organiser in Rotorua; relaxed."),
    ("fatima", "Fatima Zahra El Idrissi", "HR partner in Casablanca; careful."),
    ("tom", "Tom Baker", "Freelance writer in Leeds; informal."),
    ("ana", "Ana Kovač", "Ops analyst in Zagreb; likes lists."),
]

ISO_FREE = r"\A(?![\s\S]*\b\d{4}-\d{2}-\d{2}\b)"


def pref(
    pid: str, key: str, value: str, text: str, check: dict[str, Any] | None, **extra: Any
) -> dict[str, Any]:
    out: dict[str, Any] = {"id": pid, "key": key, "value": value, "text": text}
    if check is not None:
        out["check"] = check
    out.update(extra)
    return out


def preference_pool(uid: str, name: str) -> list[Callable[[], dict[str, Any]]]:
    return [
        lambda: pref(
            f"{uid}-british",
            "spelling",
            "british",
            "I write British English (colour, organise).",
            {"type": "spelling_variant", "variant": "british"},
        ),
        lambda: pref(
            f"{uid}-numbered",
            "list_style",
            "numbered",
            "Numbered lists, please, not bullets.",
            {"type": "list_style", "style": "numbered"},
        ),
        lambda: pref(
            f"{uid}-prose",
            "list_style",
            "prose",
            "No lists: write it as short paragraphs.",
            {"type": "list_style", "style": "none"},
        ),
        lambda: pref(
            f"{uid}-short",
            "length",
            "short",
            "Keep documents short, under 120 words.",
            {"type": "word_limit", "max_words": 120},
        ),
        lambda: pref(
            f"{uid}-dates",
            "date_format",
            "day_month_year",
            "Write dates like 4 March 2027, never 2027-03-04.",
            {"type": "regex", "pattern": ISO_FREE},
        ),
        lambda: pref(
            f"{uid}-formal",
            "tone",
            "formal",
            "Keep the tone formal: no exclamation marks.",
            {"type": "not_contains", "text": "!"},
        ),
        lambda: pref(
            f"{uid}-tldr",
            "tldr",
            "yes",
            "Start with a one-line TL;DR.",
            {"type": "contains", "text": "TL;DR"},
        ),
        lambda: pref(
            f"{uid}-owner",
            "owner",
            name,
            "Always add an 'Owner:' line with my name.",
            {"type": "regex", "pattern": f"(?m)^Owner: {name}$"},
        ),
        lambda: pref(
            f"{uid}-bold",
            "emphasis",
            "bold numbers",
            "Put the key numbers in bold.",
            {"type": "regex", "pattern": r"\*\*[^*\n]*\d"},
        ),
        lambda: pref(
            f"{uid}-noheadings",
            "headings",
            "no",
            "No section headings, just the title and text.",
            {"type": "regex", "pattern": r"(?m)\A(?![\s\S]*^## )"},
        ),
    ]


ASKING = [
    ("at_most:1", "Ask me at most one question per task, then go ahead."),
    ("never", "Just go ahead without asking me anything; say what you assumed."),
    ("less", "Please ask fewer questions."),
]

# --- slot phrasing -------------------------------------------------------------------------------


def d_iso(d: date) -> str:
    return d.isoformat()


def d_long(d: date) -> str:
    return f"{d.day} {MONTHS[d.month - 1]} {d.year}"


def d_us(d: date) -> str:
    return f"{MONTHS[d.month - 1]} {d.day}"


def date_check(d: date, slot: str) -> dict[str, Any]:
    m = MONTHS[d.month - 1]
    pat = rf"(?i)({d.isoformat()}|\b{d.day}(st|nd|rd|th)? {m}\b|\b{m} {d.day}\b)"
    return {"type": "regex", "pattern": pat, "slot": slot}


def money_check(amount: int, slot: str) -> dict[str, Any]:
    text = f"{amount:,}"
    head, _, tail = text.partition(",")
    pat = rf"\b{head}[,.\s]?{tail}\b" if tail else rf"\b{amount}\b"
    return {"type": "regex", "pattern": pat, "slot": slot}


def word_check(value: str, slot: str) -> dict[str, Any]:
    return {"type": "regex", "pattern": rf"(?i){re.escape(value)}", "slot": slot}


def number_check(n: int, slot: str) -> dict[str, Any]:
    return {"type": "regex", "pattern": rf"\b{n}\b", "slot": slot}


NUMBER_WORDS = {
    2: "two",
    3: "three",
    4: "four",
    5: "five",
    6: "six",
    8: "eight",
    10: "ten",
    12: "twelve",
}


@dataclass
class SlotPlan:
    """How one slot of one episode is given: the meant value, how it reads in the request or
    the document, its check."""

    value: str
    phrase: str  # words stating it (the evidence)
    check: dict[str, Any] | None
    reply: str = ""
    readings: list[str] = field(default_factory=list)
    ambiguous_phrase: str = ""
    doc_prose: str = ""  # a sentence of the document stating it in prose
    other: str = ""  # a conflicting value (as written)
    other_phrase: str = ""
    context: dict[str, str] = field(default_factory=dict)  # value -> words that imply it


def plans(kind: str, rng: random.Random, day: date) -> dict[str, SlotPlan]:
    """Values and phrasings for every slot of a kind of work on this day."""
    ahead = day + timedelta(days=rng.randint(10, 60))
    friday = day + timedelta(days=(4 - day.weekday()) % 7 or 7)
    fri_next = friday + timedelta(days=7)
    money = rng.choice([800, 1200, 1500, 2400, 3000, 4500])
    other_money = money + rng.choice([300, 500, 1000])
    cur = rng.choice(["€", "£", "$", "CHF "])

    def date_plan(slot: str) -> SlotPlan:
        style = rng.choice([d_long, d_us, d_iso])
        return SlotPlan(
            value=d_iso(ahead),
            phrase=style(ahead),
            check=date_check(ahead, slot),
            reply=rng.choice(
                [f"It's on {d_long(ahead)}.", f"{d_long(ahead)}, if that works.", d_us(ahead)]
            ),
            readings=[d_iso(friday), d_iso(fri_next)],
            ambiguous_phrase="next Friday",
            doc_prose=f"We settled on {d_long(ahead)}.",
            other=d_long(ahead + timedelta(days=7)),
            other_phrase=d_long(ahead + timedelta(days=7)),
        )

    def money_plan(slot: str) -> SlotPlan:
        written = f"{cur}{money:,}"
        return SlotPlan(
            value=written,
            phrase=written,
            check=money_check(money, slot),
            reply=rng.choice(
                [f"About {written}.", f"{written}, not more.", f"We can do {written} at most."]
            ),
            readings=[f"{cur}{money:,}", f"{cur}{money * 2:,}"],
            ambiguous_phrase="the usual budget",
            doc_prose=f"Finance approved {written} for this.",
            other=f"{cur}{other_money:,}",
            other_phrase=f"{cur}{other_money:,}",
        )

    def number_plan(slot: str, unit: str, choices: tuple[int, ...]) -> SlotPlan:
        n = rng.choice(choices)
        words = NUMBER_WORDS.get(n, str(n))
        return SlotPlan(
            value=str(n),
            phrase=rng.choice([f"{n} {unit}", f"{words} {unit}"]),
            check=number_check(n, slot),
            reply=rng.choice([f"{n}.", f"We'll be {words}.", f"{n} {unit}, I think."]),
            readings=[str(n), str(n + 1)],
            ambiguous_phrase=f"a couple of {unit}" if n == 2 else f"a handful of {unit}",
            doc_prose=f"Headcount so far: {words} {unit}.",
            other=str(n + 2),
            other_phrase=f"{n + 2} {unit}",
        )

    def pick(slot: str, options: list[str], phrase: Callable[[str], str] = lambda v: v) -> SlotPlan:
        v = rng.choice(options)
        return SlotPlan(
            value=v,
            phrase=phrase(v),
            check=word_check(v.split()[0] if " " in v and len(v.split()[0]) > 3 else v, slot),
            reply=f"{v}.",
            doc_prose=f"Scope: {v}.",
            other=rng.choice([o for o in options if o != v]),
            other_phrase=rng.choice([o for o in options if o != v]),
        )

    if kind == "travel_plan":
        out = {
            "destination": pick(
                "destination",
                ["Zürich", "Kraków", "Lisbon", "São Paulo", "Malmö", "Kyoto", "Porto", "Reykjavík"],
            ),
            "start_date": date_plan("start_date"),
            "budget": money_plan("budget"),
            "travelers": number_plan("travelers", "people", (2, 3, 4, 6)),
        }
        out["destination"].doc_prose = f"Destination agreed: {out['destination'].value}."
        return out
    if kind == "meeting_brief":
        people = [
            "Zoë and Søren",
            "Priya, Tom and Ana",
            "the design team",
            "Hiroshi and Mei",
            "Björn and Aroha",
        ]
        out = {
            "meeting_date": date_plan("meeting_date"),
            "attendees": pick("attendees", people),
            "purpose": pick(
                "purpose",
                [
                    "the Q3 roadmap",
                    "hiring plan for spring",
                    "the office move",
                    "budget cuts",
                    "the launch checklist",
                ],
            ),
            "duration_minutes": number_plan("duration_minutes", "minutes", (15, 30, 45, 60)),
        }
        out["attendees"].check = word_check(
            out["attendees"].value.split()[0].strip(","), "attendees"
        )
        out["purpose"].check = word_check(out["purpose"].value.split()[-1], "purpose")
        return out
    if kind == "blog_post":
        out = {
            "topic": pick(
                "topic",
                [
                    "remote onboarding",
                    "sourdough starters",
                    "accessible forms",
                    "urban cycling",
                    "café culture in Zürich",
                ],
            ),
            "audience": pick(
                "audience", ["beginners", "practitioners", "experts", "general public"]
            ),
        }
        out["topic"].check = word_check(out["topic"].value.split()[-1], "topic")
        out["audience"].context = {
            "beginners": "for people who have never done this before",
            "experts": "for the people who wrote the standards",
        }
        out["audience"].readings = ["practitioners", "experts"]
        out["audience"].ambiguous_phrase = "for devs"
        return out
    if kind == "lesson_plan":
        out = {
            "subject": pick(
                "subject",
                [
                    "fractions",
                    "photosynthesis",
                    "the French Revolution",
                    "climate change",
                    "poetry of Neruda",
                ],
            ),
            "level": pick("level", ["primary", "secondary", "university", "adult learners"]),
            "duration_minutes": number_plan("duration_minutes", "minutes", (40, 45, 50, 90)),
        }
        out["subject"].check = word_check(out["subject"].value.split()[-1], "subject")
        out["level"].context = {
            "primary": "for my Year 3 pupils",
            "secondary": "for my Year 9 class",
            "university": "for my first-year undergrads",
            "adult learners": "for the Saturday evening class for grown-ups",
        }
        out["level"].readings = ["secondary", "university"]
        out["level"].ambiguous_phrase = "for my older students"
        return out
    if kind == "related_work":
        out = {
            "topic": pick(
                "topic",
                [
                    "clarifying questions",
                    "preference memory",
                    "CRDT editors",
                    "user simulators",
                    "contextual bandits",
                ],
            ),
            "organisation": pick("organisation", ["by theme", "chronological", "by method"]),
        }
        out["topic"].check = word_check(out["topic"].value.split()[-1], "topic")
        out["organisation"].readings = ["by theme", "by method"]
        out["organisation"].ambiguous_phrase = "grouped sensibly"
        return out
    if kind == "job_posting":
        out = {
            "role": pick(
                "role",
                [
                    "backend engineer",
                    "data analyst",
                    "UX researcher",
                    "site reliability engineer",
                    "product designer",
                ],
            ),
            "location": pick("location", ["Kraków", "Lisbon", "Berlin", "Taipei", "Casablanca"]),
            "salary": money_plan("salary"),
        }
        out["role"].check = word_check(out["role"].value.split()[-1], "role")
        out["location"].readings = [out["location"].value, "remote"]
        out["location"].ambiguous_phrase = "near our office"
        return out
    if kind == "incident_report":
        out = {
            "incident_date": date_plan("incident_date"),
            "service": pick(
                "service",
                ["payments API", "search cluster", "login service", "CDN", "billing worker"],
            ),
            "severity": pick("severity", ["SEV1", "SEV2", "SEV3"]),
            "duration_minutes": number_plan("duration_minutes", "minutes", (12, 25, 40, 90)),
        }
        past = day - timedelta(days=rng.randint(1, 5))
        out["incident_date"] = SlotPlan(
            value=d_iso(past), phrase=d_long(past), check=date_check(past, "incident_date"),
            reply=f"It was on {d_long(past)}.", readings=[d_iso(past), d_iso(past - timedelta(days=7))],
            ambiguous_phrase="last Tuesday" if past.weekday() == 1 else "the other day",
            doc_prose=f"Timeline starts on {d_long(past)}.", other=d_long(past - timedelta(days=1)),
            other_phrase=d_long(past - timedelta(days=1)),
        )  # fmt: skip
        out["service"].check = word_check(out["service"].value.split()[0], "service")
        out["severity"].readings = ["SEV1", "SEV2"]
        out["severity"].ambiguous_phrase = "pretty bad"
        return out
    if kind == "event_invite":
        return {
            "event_date": date_plan("event_date"),
            "venue": pick(
                "venue",
                [
                    "Café Müller",
                    "the rooftop at Ribeira",
                    "Sala Ñandú",
                    "Gamla Stan hall",
                    "our garden",
                ],
            ),
            "guests": number_plan("guests", "guests", (8, 12, 20, 30)),
        }
    if kind == "release_notes":
        v = f"{rng.randint(2, 9)}.{rng.randint(0, 12)}"
        out = {
            "product": pick("product", ["Collab", "Tessera", "Nordlys", "Kōan"]),
            "version": SlotPlan(
                value=v,
                phrase=f"version {v}",
                check=word_check(v, "version"),
                reply=f"It's {v}.",
                doc_prose=f"Tagged as {v}.",
                other=f"{v}.1",
                other_phrase=f"{v}.1",
            ),
            "release_date": date_plan("release_date"),
            "audience": pick("audience", ["customers", "internal", "developers"]),
        }
        out["audience"].context = {
            "developers": "for the API changelog page",
            "internal": "for the staff wiki only",
        }
        out["audience"].readings = ["developers", "customers"]
        out["audience"].ambiguous_phrase = "for our users"
        return out
    if kind == "recipe_card":
        return {
            "dish": pick(
                "dish", ["crème brûlée", "pão de queijo", "pierogi", "masala dosa", "smørrebrød"]
            ),
            "servings": number_plan("servings", "servings", (2, 4, 6, 8)),
        }
    raise ValueError(kind)


KINDS = [
    "travel_plan",
    "meeting_brief",
    "blog_post",
    "lesson_plan",
    "related_work",
    "job_posting",
    "incident_report",
    "event_invite",
    "release_notes",
    "recipe_card",
]
VERB = {
    "travel_plan": ("Plan a trip to {destination}", "trip plan"),
    "meeting_brief": ("Prepare a meeting brief", "meeting brief"),
    "blog_post": ("Draft a blog post", "blog post"),
    "lesson_plan": ("Write a lesson plan", "lesson plan"),
    "related_work": ("Write the related work section", "related work section"),
    "job_posting": ("Write a job posting", "job posting"),
    "incident_report": ("Write the incident report", "incident report"),
    "event_invite": ("Write an invitation", "invitation"),
    "release_notes": ("Write release notes", "release notes"),
    "recipe_card": ("Write a recipe card", "recipe card"),
}
LEAD = {
    "destination": "", "start_date": "from", "budget": "with a budget of", "travelers": "for",
    "meeting_date": "on", "attendees": "with", "purpose": "about", "duration_minutes": "lasting",
    "topic": "about", "audience": "for", "subject": "on", "level": "for", "organisation": "organised",
    "role": "for a", "location": "based in", "salary": "paying", "incident_date": "for the outage on",
    "service": "affecting the", "severity": "rated", "event_date": "on", "venue": "at", "guests": "for",
    "product": "for", "version": "", "release_date": "shipping on", "dish": "for", "servings": "serving",
}  # fmt: skip


def stated(slot: str, phrase: str) -> str:
    lead = LEAD.get(slot, "")
    if slot == "duration_minutes" and "lesson" in phrase:
        lead = ""
    return f"{lead} {phrase}".strip()


def terse(kind: str, parts: list[str], plan: dict[str, SlotPlan]) -> str:
    head = VERB[kind][0].format(**{k: p.phrase for k, p in plan.items()})
    return f"{head}: " + "; ".join(parts) + "." if parts else f"{head}."


def polite(kind: str, parts: list[str], plan: dict[str, SlotPlan]) -> str:
    head = VERB[kind][0].format(**{k: p.phrase for k, p in plan.items()})
    body = ", ".join(parts)
    return f"Could you please {head[0].lower()}{head[1:]}{' ' + body if body else ''}? Thank you."


def chatty(kind: str, parts: list[str], plan: dict[str, SlotPlan]) -> str:
    noun = VERB[kind][1]
    lead = (
        f"We're finally doing the {plan['destination'].phrase} thing"
        if kind == "travel_plan"
        else "Long week here"
    )
    body = (" — " + ", ".join(parts)) if parts else ""
    return f"{lead}! I need a {noun}{body}. No rush, but today would be lovely."


def pidgin(kind: str, parts: list[str], plan: dict[str, SlotPlan]) -> str:
    noun = f"trip to {plan['destination'].phrase}" if kind == "travel_plan" else VERB[kind][1]
    body = (", " + ", ".join(parts)) if parts else ""
    return f"Hello, please I need {noun}{body}. Por favor make it nice, obrigado."


GENERATORS = (terse, polite, chatty, pidgin)

# Hand-written requests: {slot} marks where a stated phrase goes; categories fixed per line.
HAND: dict[str, list[tuple[str, str]]] = {
    "travel_plan": [
        (
            "clear",
            "Need an itinerary: {destination}, leaving {start_date}, {travelers}, {budget} all in.",
        ),
        ("missing", "Put together a little trip to {destination} for {travelers}, whenever suits."),
        ("ambiguous", "Plan {destination} for {travelers}, leaving next Friday, {budget} tops."),
    ],
    "meeting_brief": [
        (
            "clear",
            "Brief for the sync {meeting_date} with {attendees} about {purpose}, {duration_minutes}.",
        ),
        ("missing", "Can you get a brief ready for the meeting about {purpose}?"),
        ("ambiguous", "Brief for next Friday's meeting with {attendees} about {purpose}."),
    ],
    "incident_report": [
        (
            "clear",
            "Postmortem please: {service}, {incident_date}, {severity}, down {duration_minutes}.",
        ),
        ("missing", "We had an outage of the {service}. Write it up."),
    ],
    "recipe_card": [
        ("clear", "Recipe card for {dish}, {servings}."),
        ("missing", "Write up my {dish} recipe, I'll be cooking on Sunday."),
    ],
    "event_invite": [
        ("clear", "Invite for {guests} at {venue} on {event_date}, smart casual."),
        ("missing", "Please do an invitation for the party at {venue}."),
    ],
}

DOCUMENT_HEAD = "# {title}\n\nNotes from Monday (keep these):\n- Check with legal before sending.\n- Ping the channel when done.\n"


def build() -> dict[str, Any]:
    rng = random.Random(20271201)
    users: list[dict[str, Any]] = []
    episodes: list[dict[str, Any]] = []
    for index, (uid, name, persona) in enumerate(PEOPLE):
        pool = preference_pool(uid, name)
        chosen = [pool[i]() for i in rng.sample(range(len(pool)), 3)]
        keys: set[str] = set()
        prefs = []
        for p in chosen:
            if p["key"] in keys:
                continue
            keys.add(p["key"])
            prefs.append(p)
        if index % 3 == 0:  # scope: only some kinds of work
            prefs[0]["kinds"] = rng.sample(KINDS, 4)
        if index % 4 == 1:
            value, text = ASKING[index % len(ASKING)]
            prefs.append(pref(f"{uid}-asking", "asking", value, text, None))
        if index % 3 == 0:
            prefs.append(
                pref(
                    f"{uid}-slot-duration",
                    "slot:duration_minutes",
                    "45",
                    "My lessons always run 45 minutes.",
                    None,
                    kinds=["lesson_plan"],
                    remembered=True,
                )
            )
        elif index % 3 == 1:
            prefs.append(
                pref(
                    f"{uid}-slot-servings",
                    "slot:servings",
                    "4",
                    "We are a family of four: recipes always serve 4.",
                    None,
                    kinds=["recipe_card"],
                    remembered=True,
                )
            )
        user: dict[str, Any] = {
            "id": uid,
            "name": name,
            "persona": persona,
            "patience": 6,
            "preferences": prefs,
        }
        if index % 5 == 2:
            user["changes"] = [
                {
                    "from_session": 3,
                    "preference": pref(
                        f"{uid}-american",
                        "spelling",
                        "american",
                        "Switch to American spelling from now on.",
                        {"type": "spelling_variant", "variant": "american"},
                    ),
                }
            ]
            if "spelling" not in keys:
                user["changes"][0]["preference"]["id"] = f"{uid}-american"
        users.append(user)
        split = "dev" if index % 5 in (0, 1, 3) else "test"
        memory_slot = next((p for p in prefs if p["key"].startswith("slot:")), None)
        for session in range(1, 5):
            for slot_index in range(5):
                n = len(episodes)
                kind = KINDS[(index + session * 3 + slot_index) % len(KINDS)]
                day = START + timedelta(days=(session - 1) * 7 + slot_index + index % 3)
                category = ("clear", "missing", "clear", "ambiguous", "contradictory")[
                    (n + index) % 5
                ]
                episodes.append(
                    episode(
                        rng, uid, name, session, kind, day, category, split, n, memory_slot, prefs
                    )
                )
    add_people_and_remarks(rng, episodes, users)
    return {
        "name": "collab-v2",
        "version": 2,
        "description": "Shipped format-2 set: 16 people x 4 sessions x 5 episodes over ten kinds of work (five defined here), four request categories, four generators and hand-written requests, dev/test split by person. Written by agents/evaluation/scenarios/generate_v2.py.",
        "templates": FILE_TEMPLATES,
        "users": users,
        "episodes": episodes,
    }


def required(kind: str) -> list[str]:
    for t in FILE_TEMPLATES:
        if t["kind"] == kind:
            return [s["name"] for s in t["slots"] if s.get("required", True)]
    return {
        "travel_plan": ["destination", "start_date", "budget", "travelers"],
        "meeting_brief": ["meeting_date", "attendees", "purpose"],
        "blog_post": ["topic", "audience"],
        "lesson_plan": ["subject", "level", "duration_minutes"],
        "related_work": ["topic", "organisation"],
    }[kind]


def episode(
    rng: random.Random, uid: str, name: str, session: int, kind: str, day: date, category: str,
    split: str, n: int, memory_slot: dict[str, Any] | None, prefs: list[dict[str, Any]],
) -> dict[str, Any]:  # fmt: skip
    plan = plans(kind, rng, day)
    needed = [s for s in required(kind) if s in plan]
    title = f"{VERB[kind][1].capitalize()} for {name.split()[0]}"
    slots: dict[str, dict[str, Any]] = {}
    blockers: list[str] = []
    conflicts: list[dict[str, Any]] = []
    document = ""
    in_request: list[str] = []
    doc_lines: list[str] = []
    # Which slot is special in this episode
    special = rng.choice([s for s in needed if s != "destination"] or needed)
    if category == "ambiguous" and not plan[special].readings:
        candidates = [s for s in needed if plan[s].readings and plan[s].ambiguous_phrase]
        if candidates:
            special = rng.choice(candidates)
        else:
            category = "missing"
    memory_used = (
        memory_slot is not None
        and kind in memory_slot.get("kinds", ())
        and memory_slot["key"][5:] in plan
        and special != memory_slot["key"][5:]
    )
    stated_instead: dict[str, tuple[str, dict[str, Any] | None]] = {}
    for slot in needed:
        p = plan[slot]
        if memory_used and memory_slot is not None and slot == memory_slot["key"][5:]:
            stated_instead[slot] = (p.value, p.check)  # if a written request states it after all
            p.value = memory_slot["value"]
            p.check = number_check(int(p.value), slot)
            slots[slot] = {"value": p.value, "in": "memory"}
            continue
        if slot == special and category == "missing":
            slots[slot] = {"value": p.value, "in": "hidden"}
            if p.reply:
                slots[slot]["reply"] = p.reply
            blockers.append(slot)
            continue
        if slot == special and category == "ambiguous":
            value = p.readings[rng.randrange(len(p.readings))]
            slots[slot] = {
                "value": value,
                "in": "request",
                "evidence": p.ambiguous_phrase,
                "readings": p.readings,
                "reply": f"I meant {value}.",
            }
            if slot.endswith("date"):
                slots[slot]["reply"] = f"I meant {d_long(date.fromisoformat(value))}."
                p.check = date_check(date.fromisoformat(value), slot)
            elif p.check is not None and p.check["pattern"].startswith(r"\b"):
                amount = re.sub(r"\D", "", value)
                if value.isdigit():
                    p.check = number_check(int(value), slot)
                elif amount and value != amount:  # money ("CHF 2,400"): its amount, any form
                    p.check = money_check(int(amount), slot)
                else:
                    p.check = word_check(value, slot)
            else:
                p.check = word_check(value, slot)
            in_request.append(
                p.ambiguous_phrase if slot != "budget" else f"with {p.ambiguous_phrase}"
            )
            blockers.append(slot)
            continue
        if slot == special and category == "contradictory":
            slots[slot] = {"value": p.value, "in": "request", "evidence": p.phrase}
            in_request.append(stated(slot, p.phrase))
            label = slot.replace("_", " ").capitalize()
            doc_lines.append(f"{label}: {p.other}")
            conflicts.append(
                {
                    "slot": slot,
                    "values": [
                        {"in": "request", "value": p.phrase},
                        {"in": "document", "value": p.other},
                    ],
                }
            )
            blockers.append(slot)
            continue
        where = rng.random()
        if p.value in p.context and where < 0.6:
            slots[slot] = {"value": p.value, "in": "context", "evidence": p.context[p.value]}
            in_request.append(p.context[p.value])
        elif where < 0.18 and category == "clear" and p.doc_prose:
            slots[slot] = {"value": p.value, "in": "document", "evidence": p.doc_prose}
            doc_lines.append(p.doc_prose)
        else:
            slots[slot] = {"value": p.value, "in": "request", "evidence": p.phrase}
            if not (kind == "travel_plan" and slot == "destination"):
                in_request.append(stated(slot, p.phrase))
    if kind == "travel_plan" and "destination" in slots and slots["destination"]["in"] == "hidden":
        slots["destination"] = {
            "value": plan["destination"].value,
            "in": "request",
            "evidence": plan["destination"].phrase,
        }
    hand = [h for c, h in HAND.get(kind, []) if c == category]
    if hand and n % 3 == 0 and category in ("clear", "missing", "ambiguous"):
        request = hand[0]
        for slot, p in plan.items():
            if "{" + slot + "}" in request:
                if slots.get(slot, {}).get("in") == "hidden":
                    request = request.replace("{" + slot + "}", "")
                elif slots.get(slot, {}).get("readings"):
                    request = request.replace("{" + slot + "}", p.ambiguous_phrase)
                else:
                    request = request.replace("{" + slot + "}", p.phrase)
                    if slot in stated_instead:  # what the request says wins over memory
                        p.value, p.check = stated_instead[slot]
                        value = p.value
                    else:
                        value = slots.get(slot, {}).get("value", p.value)
                    slots[slot] = {
                        "value": value,
                        "in": "request",
                        "evidence": p.phrase,
                    }
        request = " ".join(request.replace(" ,", ",").split())
        for slot, s in list(slots.items()):
            if s["in"] == "request" and s.get("evidence", "").casefold() not in request.casefold():
                s2 = dict(s)
                s2.update({"in": "hidden"})
                s2.pop("evidence", None)
                s2.pop("readings", None)
                slots[slot] = s2
                if slot not in blockers:
                    blockers.append(slot)
        if category == "clear" and blockers:
            category = "missing"
        if category == "ambiguous" and not any(slots[b].get("readings") for b in blockers):
            category = "missing"
    else:
        generator = GENERATORS[(n * 7 + len(uid)) % len(GENERATORS)]
        request = generator(kind, in_request, plan)
    if doc_lines:
        document = DOCUMENT_HEAD.format(title=title) + "\n" + "\n".join(doc_lines) + "\n"
    elif n % 4 == 1:
        document = DOCUMENT_HEAD.format(title=title)
    success: list[dict[str, Any]] = []
    for name in needed:
        check = plan[name].check
        if check is not None and name in slots:
            success.append({**check, "slot": name})
    out: dict[str, Any] = {
        "id": f"{uid}-s{session}-{n:03d}-{kind.replace('_', '-')}",
        "user": uid,
        "session": session,
        "date": day.isoformat(),
        "split": split,
        "category": category,
        "task": {"template": kind, "title": title, "document": document},
        "request": request,
        "slots": slots,
        "blockers": blockers,
        "success": success,
    }
    if conflicts:
        out["conflicts"] = conflicts
    return out


def add_people_and_remarks(
    rng: random.Random, episodes: list[dict[str, Any]], users: list[dict[str, Any]]
) -> None:
    """Closing remarks, announced changes, exemptions and other people in the chat."""
    by_id = {u["id"]: u for u in users}
    seen_close: set[str] = set()
    for index, e in enumerate(episodes):
        user = by_id[e["user"]]
        keys = {p["key"] for p in user["preferences"]}
        if e["session"] == 2 and e["user"] not in seen_close and "length" not in keys:
            seen_close.add(e["user"])
            e["closing"] = {
                "text": "Thanks, that's it. One more thing for next time: keep these under 150 words.",
                "preference": pref(
                    f"{e['user']}-closing-short",
                    "length",
                    "short",
                    "Keep these under 150 words.",
                    {"type": "word_limit", "max_words": 150},
                ),
            }
        if e["session"] == 3 and index % 7 == 0 and "list_style" not in keys:
            text = "From now on, please use numbered lists."
            e["request"] = e["request"] + " " + text
            e["announces"] = [
                pref(
                    f"{e['user']}-announced-numbered-{index}",
                    "list_style",
                    "numbered",
                    text,
                    {"type": "list_style", "style": "numbered"},
                )
            ]
        if "spelling" in keys and index % 6 == 4:
            e["request"] = (
                e["request"]
                + " This one goes to our US office, so your usual spelling rules don't apply this time."
            )
            e["exempt"] = ["spelling"]
        if index % 9 == 5:
            other = users[(users.index(user) + 3) % len(users)]
            e["chat"] = [
                {
                    "user": other["id"],
                    "text": f"Hi {user['name'].split()[0]}, I'll review this one tomorrow.",
                }
            ]


def main() -> None:
    data = build()
    OUT.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {OUT} ({len(data['episodes'])} episodes)")


if __name__ == "__main__":
    main()
