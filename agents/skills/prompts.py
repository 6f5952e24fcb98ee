"""Questions for people to answer: discussion starters, interview questions, feedback or survey
questions and an FAQ (pure Python, no Django).

Without a model the agent knows nothing about the world beyond the task, so each question is a
plain, open pattern filled with the task's own words: its subject ("climate change"), its
learning goal, the skills its document asks for ("Must: SQL basics"), its known values (an
FAQ answers "When is it?" with the date the task gives). No pattern holds a number, a date or a
name of its own: what the questions say comes from the task, and nothing is invented.
"""

from __future__ import annotations

import re

from agents.skills.facts import TaskFacts
from agents.skills.notes import note_lines, noted
from agents.skills.work import SkillAnswer, _cap, _title_subject, phrase
from agents.skills.write import as_list, finish, lower_first, say

# Which set of questions a request asks for, by its words (casefolded); discussion otherwise.
_SORTS: tuple[tuple[str, re.Pattern[str]], ...] = (
    # "five questions to ask Karen", "what should I ask the supplier?": for a meeting
    (
        "meeting",
        re.compile(
            r"\b(?:questions?\s+(?:\w+\s+)?(?:to|i should|we should)\s+ask|"
            r"(?:should|could|can) (?:i|we) ask)\b"
        ),
    ),
    ("interview", re.compile(r"\b(?:interview|candidates?|applicants?|hiring|screening)\b")),
    ("faq", re.compile(r"\bfaqs?\b|\bfrequently asked\b|\bq ?& ?a\b")),
    (
        "feedback",
        re.compile(r"\b(?:survey|feedback|questionnaire|poll|evaluation|satisfaction|exit)\b"),
    ),
)
# "Introduction to climate change": what a discussion is about is "climate change".
_LEAD_IN = re.compile(
    r"^(?:an?\s+)?(?:introduction|intro|basics|overview|primer|fundamentals)\s+(?:to|of|on)\s+",
    re.IGNORECASE,
)
# Document lines that list what a role asks for ("Must: SQL basics", "Skills: Python, Django").
_SKILL_LABEL = re.compile(
    r"^(?:must(?:-haves?)?|requirements?|required|skills?|nice to have|bonus|stack|"
    r"experience|you have|you bring|we use|tech)$"
)
DEFAULT_COUNT = 5


def sort_of(request: str) -> str:
    lowered = request.casefold()
    return next((name for name, pattern in _SORTS if pattern.search(lowered)), "discussion")


def topic(facts: TaskFacts) -> str:
    """What the questions are about: the task's title without its kind's words, else the
    goal's first part, else the title as written."""
    subject = facts.value("subject") or facts.value("topic") or facts.value("role")
    text = subject.raw if subject is not None and not subject.assumed else ""
    text = text or _title_subject(facts) or (facts.parts[0] if facts.parts else facts.title)
    text = _LEAD_IN.sub("", " ".join(text.split())).strip(" .")
    return lower_first(text) if text[:2] != text[:2].upper() else text


def skills_asked(document: str) -> list[str]:
    """The skills a document's labelled lines ask for, one per comma or "and"."""
    found: list[str] = []
    for line in note_lines(document):
        head, colon, rest = line.partition(":")
        if not colon or not _SKILL_LABEL.match(head.strip().casefold()):
            continue
        for piece in re.split(r",|;|\band\b|/", rest):
            piece = piece.strip(" .()")
            if piece and len(piece.split()) <= 5:
                found.append(piece)
    return list(dict.fromkeys(found))


def _discussion(facts: TaskFacts) -> list[str]:
    about = topic(facts)
    goal = facts.value("learning_goal")
    aim = goal.raw.strip().rstrip(".") if goal is not None and not goal.assumed else ""
    out = [
        f"What do you already know about {about}?",
        f"Where have you come across {about}: at home, online or in the news?",
        f"How might {about} affect you, your family or the place you live?",
        f"What questions do you have about {about}?",
    ]
    if aim:
        out.append(f"What would you need to find out to {lower_first(aim)}?")
    out += [
        f"If you had to explain {about} to a friend in one sentence, what would you say?",
        f"What do you think people most often get wrong about {about}?",
        f"What would you like to do or change after learning about {about}?",
    ]
    return out


def _interview(facts: TaskFacts) -> list[str]:
    role = topic(facts)
    skills = skills_asked(facts.document)
    out = [f"What draws you to the {role} role?"] if role else []
    out += [f"Tell us about something you built, fixed or learned using {s}." for s in skills]
    out += [
        "Tell us about a time you were stuck on a problem. What did you do next?",
        "How do you like to work with a team, and how do you ask for help?",
        "How do you go about learning a tool or skill you have not used before?",
        "What would you want to learn first in this role?",
        "What questions do you have for us?",
    ]
    return out


def _feedback(facts: TaskFacts) -> list[str]:
    about = topic(facts)
    return [
        f"How would you rate {about} overall, and why?",
        f"What did you like most about {about}?",
        "What should we change or drop next time?",
        "Was anything missing, unclear or hard to find?",
        f"Would you recommend {about} to someone else? Why or why not?",
        "Is there anything else you would like to tell us?",
    ]


def _faq(facts: TaskFacts) -> list[str]:
    """Questions answered with what the task says; a question it cannot answer yet says so."""
    about = topic(facts)
    out = [f"What is it? {_cap(facts.goal.strip().rstrip('.'))}." if facts.goal.strip() else ""]
    for types, question in (
        (("date",), "When is it?"),
        (("place",), "Where is it?"),
        (("money",), "What does it cost?"),
        (("person",), "Who is involved?"),
    ):
        value = next(iter(facts.of_type(*types)), None)
        if value is None:
            out.append(f"{question} Not decided yet: we will say here.")
        else:
            said = say(value, facts.prefs) if value.type != "person" else phrase(value, facts)
            assumed = " (assumed; to confirm)" if value.assumed else ""
            out.append(f"{question} {_cap(said)}{assumed}.")
    out.append(f"Who do I ask about {about}? Reply in this task's chat.")
    return [line for line in out if line]


# Lines that say when, where or who a meeting is, not what it is about.
_META_LABEL = re.compile(
    r"^(?:meeting|date|time|when|where|venue|place|location|attendees|who|people|room|call|"
    r"agenda|owner|status)$"
)
_OUR_ASK = re.compile(r"^(?:our ask|ask|we want|we need|proposal|our proposal|request)$")


def _meeting(facts: TaskFacts) -> list[str]:
    """Questions for the other side of a meeting, one per note the task holds on it: what it
    flags as a risk, what it leaves open, what it asks for; said with the note's own words."""
    risky = set(noted(facts.document, facts.chat, "risk"))
    out: list[str] = []
    for note in note_lines(facts.document) + [n for n in noted("", facts.chat, "open")]:
        head, colon, rest = (part.strip() for part in note.partition(":"))
        label = head.casefold() if colon else ""
        if _META_LABEL.match(label):
            continue
        if re.search(r"\b(?:not decided|undecided|to decide|tbd|tbc)\b", note.casefold()):
            continue  # a decision for the team, not a question for the other side
        if "?" in note:
            out.append(_cap(note))
        elif _OUR_ASK.match(label):
            out.append(f"Would you agree to {lower_first(head)}: {rest.rstrip('.?')}?")
        elif note in risky and colon:
            out.append(f"What will you do about the {lower_first(head)} ({rest.rstrip('.')})?")
        elif note in risky:
            out.append(f"What will you do about “{note.rstrip('.')}”?")
        elif not colon:  # "Dates: 10-13 Sept", "Stay: Airbnb in Ribeira": facts, not points
            out.append(f"Can we go through “{note.rstrip('.')}”?")
    out += ["What do you need from us?", "What happens next, and by when?"]
    return out


_BUILD = {
    "meeting": _meeting,
    "discussion": _discussion,
    "interview": _interview,
    "feedback": _feedback,
    "faq": _faq,
}
_LEAD = {
    "meeting": "Questions to ask, from the task's notes:",
    "discussion": "Questions to get people talking about {about}:",
    "interview": "Interview questions for the {about} role:",
    "feedback": "Feedback questions about {about}:",
    "faq": "Frequently asked questions about {about}:",
}


def questions(facts: TaskFacts, request: str, count: int | None = None) -> SkillAnswer:
    """``count`` questions (five when the request gives no number) of the sort it asks for."""
    sort = sort_of(request)
    items = list(dict.fromkeys(_BUILD[sort](facts)))[: count or DEFAULT_COUNT]
    lead = _LEAD[sort].format(about=topic(facts) or "the task")
    text = f"{lead}\n{as_list(items, facts.prefs, ordered=True)}"
    if count and len(items) < count:
        text += f"\nThat is {len(items)}: the task does not say enough for more."
    return SkillAnswer("questions", finish(text, facts.prefs))
