"""Write the shipped scenario set (default.json) deterministically.

    python -m agents.evaluation.scenarios.generate

20 people x 5 sessions, one episode per person per session (100 episodes), cycling through the
five shipped task templates; 40 % of the requests are clear (every required slot stated), the
others leave one or two required slots (the "blockers") unstated. Each person holds two or three
writing preferences; six of them change one preference from session 3 or 4 on. The requests are
written by hand below: this script only combines them, so the content stays reviewable.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent / "default.json"
TODAY = "2027-03-01"

# --- preferences -------------------------------------------------------------------------------

PREFS: dict[str, dict[str, Any]] = {
    "british": {
        "key": "spelling",
        "text": "I write British English: colour, organise, favourite.",
        "check": {"type": "spelling_variant", "variant": "british"},
    },
    "american": {
        "key": "spelling",
        "text": "Please use American spelling now: color, organize, favorite.",
        "check": {"type": "spelling_variant", "variant": "american"},
    },
    "numbered": {
        "key": "lists",
        "text": "I like numbered lists, not bullet points.",
        "check": {"type": "list_style", "style": "numbered"},
    },
    "bullets": {
        "key": "lists",
        "text": "Use plain bullet points for lists.",
        "check": {"type": "list_style", "style": "bullets"},
    },
    "prose": {
        "key": "lists",
        "text": "No lists please: write it as short paragraphs.",
        "check": {"type": "list_style", "style": "none"},
    },
    "short": {
        "key": "length",
        "text": "Keep documents short: 90 words at most.",
        "check": {"type": "word_limit", "max_words": 90},
    },
    "very_short": {
        "key": "length",
        "text": "Even shorter from now on: 60 words at most.",
        "check": {"type": "word_limit", "max_words": 60},
    },
    "summary": {
        "key": "summary",
        "text": "Start every document with a Summary heading.",
        "check": {"type": "heading_present", "heading": "Summary"},
    },
    "tldr": {
        "key": "tldr",
        "text": "Put a one-line TL;DR at the top.",
        "check": {"type": "contains", "text": "TL;DR:"},
    },
    "calm": {
        "key": "exclamations",
        "text": "No exclamation marks, please.",
        "check": {"type": "not_contains", "text": "!"},
    },
    "owner": {
        "key": "owner",
        "text": "Always add an 'Owner:' line with my name.",
        "check": {"type": "regex", "pattern": r"(?m)^Owner: {name}$", "example": "Owner: {name}"},
    },
}

USERS: list[dict[str, Any]] = [
    {
        "id": "ana",
        "name": "Ana",
        "persona": "Product manager in Lisbon; brisk, writes in British English.",
        "prefs": ["british", "short"],
    },
    {
        "id": "ben",
        "name": "Ben",
        "persona": "Secondary-school science teacher; likes step-by-step structure.",
        "prefs": ["numbered", "summary"],
        "change": (4, "bullets"),
    },
    {
        "id": "chloe",
        "name": "Chloe",
        "persona": "PhD student in NLP; precise, dislikes hype.",
        "prefs": ["calm", "tldr"],
    },
    {
        "id": "dev",
        "name": "Dev",
        "persona": "Engineering lead; skims everything.",
        "prefs": ["short", "owner"],
        "change": (3, "very_short"),
    },
    {
        "id": "elena",
        "name": "Elena",
        "persona": "Travel blogger from Madrid; warm but organised.",
        "prefs": ["british", "numbered"],
        "change": (4, "american"),
    },
    {
        "id": "farid",
        "name": "Farid",
        "persona": "Operations manager; wants owners on everything.",
        "prefs": ["owner", "summary"],
    },
    {
        "id": "greta",
        "name": "Greta",
        "persona": "University lecturer in history; prefers prose to lists.",
        "prefs": ["prose", "calm"],
    },
    {
        "id": "hiro",
        "name": "Hiro",
        "persona": "Freelance developer; terse.",
        "prefs": ["tldr", "short"],
    },
    {
        "id": "ines",
        "name": "Ines",
        "persona": "Primary-school teacher; friendly, structured.",
        "prefs": ["numbered", "calm"],
        "change": (3, "prose"),
    },
    {
        "id": "jonas",
        "name": "Jonas",
        "persona": "Research engineer; British spelling, no fluff.",
        "prefs": ["british", "tldr"],
    },
    {
        "id": "kemi",
        "name": "Kemi",
        "persona": "Startup founder; busy, reads on her phone.",
        "prefs": ["short", "summary"],
    },
    {
        "id": "liam",
        "name": "Liam",
        "persona": "Marketing writer; enthusiastic but edits hard.",
        "prefs": ["owner", "numbered"],
    },
    {
        "id": "mei",
        "name": "Mei",
        "persona": "Data scientist; likes a summary first.",
        "prefs": ["summary", "numbered"],
        "change": (4, "prose"),
    },
    {
        "id": "nora",
        "name": "Nora",
        "persona": "Team assistant organising meetings for others.",
        "prefs": ["owner", "british"],
    },
    {
        "id": "omar",
        "name": "Omar",
        "persona": "Graduate student; writes related-work sections.",
        "prefs": ["tldr", "numbered"],
    },
    {
        "id": "priya",
        "name": "Priya",
        "persona": "Head of people; formal, careful.",
        "prefs": ["calm", "summary", "british"],
    },
    {
        "id": "quinn",
        "name": "Quinn",
        "persona": "Outdoor-trip organiser for friends.",
        "prefs": ["prose", "short"],
        "change": (3, "bullets"),
    },
    {
        "id": "rosa",
        "name": "Rosa",
        "persona": "Adult-education tutor; plain language.",
        "prefs": ["short", "numbered"],
    },
    {
        "id": "sam",
        "name": "Sam",
        "persona": "Developer advocate; writes a weekly blog.",
        "prefs": ["tldr", "calm"],
    },
    {
        "id": "tara",
        "name": "Tara",
        "persona": "Conference organiser; many meetings, many trips.",
        "prefs": ["owner", "british"],
        "change": (4, "american"),
    },
]

# --- requests, per template: (request, slots, stated words, blockers) ---------------------------
# slots: the person's hidden values; stated: slot -> the words of the request that state it;
# blockers: required slots the request leaves open (clarification needed on them).


def ep(
    request: str, slots: dict[str, str], stated: dict[str, str], blockers: list[str]
) -> dict[str, Any]:
    return {"request": request, "slots": slots, "stated": stated, "blockers": blockers}


TRAVEL = [
    ep(
        "Plan a 5-night trip to Lisbon from 4 May 2027 for two people, budget €1,200, relaxed pace.",
        {
            "destination": "Lisbon",
            "start_date": "4 May 2027",
            "nights": "5",
            "travelers": "2",
            "budget": "€1,200",
            "pace": "relaxed",
        },
        {
            "destination": "Lisbon",
            "start_date": "4 May 2027",
            "nights": "5-night",
            "travelers": "two people",
            "budget": "€1,200",
            "pace": "relaxed",
        },
        [],
    ),
    ep(
        "I'd like a trip to Kyoto, leaving 10 April 2027, 6 nights, about $3,000 for the two of us.",
        {
            "destination": "Kyoto",
            "start_date": "10 April 2027",
            "nights": "6",
            "travelers": "2",
            "budget": "$3,000",
        },
        {
            "destination": "Kyoto",
            "start_date": "10 April 2027",
            "nights": "6 nights",
            "travelers": "two of us",
            "budget": "$3,000",
        },
        [],
    ),
    ep(
        "Plan a weekend in Edinburgh from 21 May 2027, budget £600.",
        {"destination": "Edinburgh", "start_date": "21 May 2027", "budget": "£600"},
        {"destination": "Edinburgh", "start_date": "21 May 2027", "budget": "£600"},
        [],
    ),
    ep(
        "Plan a trip to Porto for three people in June.",
        {
            "destination": "Porto",
            "travelers": "3",
            "start_date": "12 June 2027",
            "budget": "€1,500",
        },
        {"destination": "Porto", "travelers": "three people"},
        ["start_date", "budget"],
    ),
    ep(
        "Can you put together a holiday itinerary for us? Around €2,000, leaving 3 July 2027.",
        {"destination": "Seville", "budget": "€2,000", "start_date": "3 July 2027"},
        {"budget": "€2,000", "start_date": "3 July 2027"},
        ["destination"],
    ),
    ep(
        "Plan a trip to Vienna from 8 September 2027, four nights.",
        {
            "destination": "Vienna",
            "start_date": "8 September 2027",
            "nights": "4",
            "budget": "€900",
        },
        {"destination": "Vienna", "start_date": "8 September 2027", "nights": "four nights"},
        ["budget"],
    ),
    ep(
        "We need a trip plan somewhere warm, budget €1,000.",
        {"destination": "Malaga", "budget": "€1,000", "start_date": "15 October 2027"},
        {"budget": "€1,000"},
        ["destination", "start_date"],
    ),
    ep(
        "Help me plan travel to Oslo.",
        {"destination": "Oslo", "start_date": "2 August 2027", "budget": "€1,800"},
        {"destination": "Oslo"},
        ["start_date", "budget"],
    ),
]

BLOG = [
    ep(
        "Write a blog post about home composting for beginners, casual tone, about 600 words.",
        {
            "topic": "home composting",
            "audience": "beginners",
            "tone": "casual",
            "length_words": "600",
        },
        {
            "topic": "home composting",
            "audience": "beginners",
            "tone": "casual",
            "length_words": "600 words",
        },
        [],
    ),
    ep(
        "Draft a blog post on zero-downtime database migrations for engineers, technical tone.",
        {
            "topic": "zero-downtime database migrations",
            "audience": "practitioners",
            "tone": "technical",
        },
        {
            "topic": "zero-downtime database migrations",
            "audience": "engineers",
            "tone": "technical",
        },
        [],
    ),
    ep(
        "Write a post about our new accessibility features for the general public.",
        {"topic": "our new accessibility features", "audience": "general public"},
        {"topic": "our new accessibility features", "audience": "general public"},
        [],
    ),
    ep(
        "Write a blog post about home composting.",
        {"topic": "home composting", "audience": "beginners"},
        {"topic": "home composting"},
        ["audience"],
    ),
    ep(
        "Can you draft something for the newsletter?",
        {"topic": "the spring product update", "audience": "general public"},
        {},
        ["topic", "audience"],
    ),
    ep(
        "Write an article on observability for our blog.",
        {"topic": "observability", "audience": "experts", "tone": "technical"},
        {"topic": "observability"},
        ["audience"],
    ),
    ep(
        "I need a blog post for beginners, playful tone.",
        {"topic": "learning to code at forty", "audience": "beginners", "tone": "playful"},
        {"audience": "beginners", "tone": "playful"},
        ["topic"],
    ),
    ep(
        "Write a blog post about remote onboarding, 800 words.",
        {"topic": "remote onboarding", "audience": "practitioners", "length_words": "800"},
        {"topic": "remote onboarding", "length_words": "800 words"},
        ["audience"],
    ),
]

MEETING = [
    ep(
        "Prepare a brief for a meeting with Priya and Tom on 12 March 2027 about the Q2 hiring plan, 45 minutes, by video call.",
        {
            "attendees": "Priya, Tom",
            "meeting_date": "12 March 2027",
            "purpose": "the Q2 hiring plan",
            "duration_minutes": "45",
            "format": "video call",
        },
        {
            "attendees": "Priya and Tom",
            "meeting_date": "12 March 2027",
            "purpose": "the Q2 hiring plan",
            "duration_minutes": "45 minutes",
            "format": "video call",
        },
        [],
    ),
    ep(
        "Agenda for a meeting with Lena on 18 March 2027 to decide the launch date.",
        {"attendees": "Lena", "meeting_date": "18 March 2027", "purpose": "the launch date"},
        {"attendees": "Lena", "meeting_date": "18 March 2027", "purpose": "the launch date"},
        [],
    ),
    ep(
        "Brief for a meeting with Marco and Aisha on 9 April 2027 about the vendor contract, in person.",
        {
            "attendees": "Marco, Aisha",
            "meeting_date": "9 April 2027",
            "purpose": "the vendor contract",
            "format": "in person",
        },
        {
            "attendees": "Marco and Aisha",
            "meeting_date": "9 April 2027",
            "purpose": "the vendor contract",
            "format": "in person",
        },
        [],
    ),
    ep(
        "Prepare a brief for my meeting with Priya.",
        {"attendees": "Priya", "meeting_date": "16 March 2027", "purpose": "the budget review"},
        {"attendees": "Priya"},
        ["meeting_date", "purpose"],
    ),
    ep(
        "Set up an agenda for the call on 22 March 2027.",
        {"meeting_date": "22 March 2027", "attendees": "Jonas, Mei", "purpose": "the roadmap"},
        {"meeting_date": "22 March 2027"},
        ["attendees", "purpose"],
    ),
    ep(
        "Brief me for a meeting about the office move.",
        {"purpose": "the office move", "attendees": "Omar", "meeting_date": "25 March 2027"},
        {"purpose": "the office move"},
        ["attendees", "meeting_date"],
    ),
    ep(
        "Prepare a meeting brief with Ben on 30 March 2027.",
        {"attendees": "Ben", "meeting_date": "30 March 2027", "purpose": "his promotion case"},
        {"attendees": "Ben", "meeting_date": "30 March 2027"},
        ["purpose"],
    ),
    ep(
        "We need a brief for the standup.",
        {
            "attendees": "Sam, Hiro",
            "meeting_date": "3 March 2027",
            "purpose": "the release blockers",
        },
        {},
        ["attendees", "meeting_date", "purpose"],
    ),
]

RELATED = [
    ep(
        "Write a related work section on retrieval-augmented generation, organised by theme, IEEE style, 15 papers.",
        {
            "topic": "retrieval-augmented generation",
            "organisation": "by theme",
            "citation_style": "IEEE",
            "paper_count": "15",
        },
        {
            "topic": "retrieval-augmented generation",
            "organisation": "by theme",
            "citation_style": "IEEE",
            "paper_count": "15 papers",
        },
        [],
    ),
    ep(
        "Draft the related work on clarification questions in dialogue, chronological, APA.",
        {
            "topic": "clarification questions in dialogue",
            "organisation": "chronological",
            "citation_style": "APA",
        },
        {
            "topic": "clarification questions in dialogue",
            "organisation": "chronological",
            "citation_style": "APA",
        },
        [],
    ),
    ep(
        "Related work on CRDT-based collaborative editing, by method, ACM style.",
        {
            "topic": "CRDT-based collaborative editing",
            "organisation": "by method",
            "citation_style": "ACM",
        },
        {
            "topic": "CRDT-based collaborative editing",
            "organisation": "by method",
            "citation_style": "ACM",
        },
        [],
    ),
    ep(
        "Draft the related work section for my paper.",
        {"topic": "user simulators for dialogue evaluation"},
        {},
        ["topic"],
    ),
    ep(
        "Write a literature review, IEEE style.",
        {"topic": "preference learning from feedback", "citation_style": "IEEE"},
        {"citation_style": "IEEE"},
        ["topic"],
    ),
    ep(
        "Related work on multi-agent collaboration please.",
        {"topic": "multi-agent collaboration", "organisation": "chronological"},
        {"topic": "multi-agent collaboration"},
        ["organisation"],
    ),
    ep(
        "Write the prior work section, about 20 papers.",
        {"topic": "human-AI co-writing", "paper_count": "20"},
        {"paper_count": "20 papers"},
        ["topic"],
    ),
    ep(
        "Related work on tool-using language agents.",
        {"topic": "tool-using language agents", "organisation": "by method"},
        {"topic": "tool-using language agents"},
        ["organisation"],
    ),
]

LESSON = [
    ep(
        "Plan a 45-minute lesson on photosynthesis for secondary students.",
        {"subject": "photosynthesis", "duration_minutes": "45", "level": "secondary"},
        {"subject": "photosynthesis", "duration_minutes": "45-minute", "level": "secondary"},
        [],
    ),
    ep(
        "Plan a 60-minute university lecture on graph algorithms, 80 students.",
        {
            "subject": "graph algorithms",
            "duration_minutes": "60",
            "level": "university",
            "class_size": "80",
        },
        {
            "subject": "graph algorithms",
            "duration_minutes": "60-minute",
            "level": "university",
            "class_size": "80 students",
        },
        [],
    ),
    ep(
        "Lesson plan for primary pupils on the water cycle, 40 minutes.",
        {"subject": "the water cycle", "level": "primary", "duration_minutes": "40"},
        {"subject": "the water cycle", "level": "primary", "duration_minutes": "40 minutes"},
        [],
    ),
    ep(
        "Plan a lesson on fractions.",
        {"subject": "fractions", "level": "primary", "duration_minutes": "50"},
        {"subject": "fractions"},
        ["level"],
    ),
    ep(
        "I need a lesson plan for adult learners, 90 minutes.",
        {"subject": "budgeting basics", "level": "adult learners", "duration_minutes": "90"},
        {"level": "adult learners", "duration_minutes": "90 minutes"},
        ["subject"],
    ),
    ep(
        "Prepare a class on the French Revolution.",
        {"subject": "the French Revolution", "level": "secondary", "duration_minutes": "50"},
        {"subject": "the French Revolution"},
        ["level"],
    ),
    ep(
        "Can you plan my next lesson?",
        {"subject": "persuasive writing", "level": "secondary", "duration_minutes": "50"},
        {},
        ["subject", "level"],
    ),
    ep(
        "Plan a lesson on recycling for primary pupils.",
        {"subject": "recycling", "duration_minutes": "30", "level": "primary"},
        {"subject": "recycling", "level": "primary"},
        ["duration_minutes"],
    ),
]

TEMPLATES = [
    ("travel_plan", "Trip plan", TRAVEL),
    ("blog_post", "Blog post", BLOG),
    ("meeting_brief", "Meeting brief", MEETING),
    ("related_work", "Related work", RELATED),
    ("lesson_plan", "Lesson plan", LESSON),
]

# Pool order: the clear requests (indices 0-2) come up 8 times in 20 draws per template (40 %).
ORDER = [0, 3, 1, 4, 5, 2, 6, 7]

MONTH_NAMES = [
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
]


def value_pattern(slot: str, value: str) -> str:
    """A loose regex that finds `value` in a document however a writer formats it."""
    m = re.fullmatch(r"(\d{1,2}) (\w+) (\d{4})", value)
    if m:  # a date: "4 May 2027", "May 4", "2027-05-04"
        day, month, year = int(m[1]), m[2], int(m[3])
        number = MONTH_NAMES.index(month) + 1
        return (
            rf"(?i)({year}-{number:02d}-{day:02d}|\b{day}(st|nd|rd|th)? {month}\b"
            rf"|\b{month} {day}\b)"
        )
    m = re.fullmatch(r"([€$£])([\d,]+)", value)
    if m:
        digits = m[2].replace(",", "")
        return rf"(?i)({re.escape(m[2])}|{digits})"
    if slot == "attendees":
        return "(?s)" + "".join(rf"(?=.*\b{re.escape(n.strip())}\b)" for n in value.split(","))
    words = [w for w in re.findall(r"[\w-]+", value) if len(w) > 3 or w.isdigit()] or [value]
    return "(?is)" + "".join(rf"(?=.*{re.escape(w)})" for w in words[:3])


def preference(key: str, user: dict[str, Any], index: int) -> dict[str, Any]:
    raw = json.loads(json.dumps(PREFS[key]).replace("{name}", user["name"]))
    return {"id": f"{user['id']}-{key}", **raw}


def build() -> dict[str, Any]:
    users, episodes = [], []
    for u_index, user in enumerate(USERS):
        entry: dict[str, Any] = {
            "id": user["id"],
            "name": user["name"],
            "persona": user["persona"],
            "patience": 6,
            "preferences": [preference(k, user, i) for i, k in enumerate(user["prefs"])],
        }
        if "change" in user:
            session, key = user["change"]
            entry["changes"] = [{"from_session": session, "preference": preference(key, user, 9)}]
        users.append(entry)
        for session in range(1, 6):
            position = u_index * 5 + session - 1
            kind, title, pool = TEMPLATES[position % 5]
            item = pool[ORDER[(position // 5) % len(ORDER)]]
            success = [
                {"type": "regex", "pattern": value_pattern(slot, value), "slot": slot}
                for slot, value in item["slots"].items()
            ]
            episodes.append(
                {
                    "id": f"{user['id']}-s{session}-{kind}",
                    "user": user["id"],
                    "session": session,
                    "task": {
                        "template": kind,
                        "title": f"{title} for {user['name']}",
                        "document": "",
                    },
                    "request": item["request"],
                    "slots": item["slots"],
                    "stated": item["stated"],
                    "clarification": {"needed": bool(item["blockers"]), "slots": item["blockers"]},
                    "success": success,
                }
            )
    return {
        "name": "default",
        "version": 1,
        "description": (
            "The shipped scenario set: 20 people x 5 sessions over the five task templates, "
            "40 % clear requests, preference changes for six people (generated by generate.py)."
        ),
        "today": TODAY,
        "users": users,
        "episodes": episodes,
    }


def main() -> None:
    OUT.write_text(json.dumps(build(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
