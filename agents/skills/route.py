"""Which skill a request asks for, with what is on the machine: the request's own words read by
patterns (how many items, "in one line"), then the offline WordLlama embedding
(``agents/memory/local_embeddings.py``) against labelled examples per skill, the nearest
example winning when it is near enough (``THRESHOLD``). So "sum up", "in one line", "tl;dr" and
"what's this about?" reach the same skill. A request nothing covers routes to no skill
(``Route.skill == ""``): the caller answers it with what the agent can do.
"""

from __future__ import annotations

import logging
import re
import threading
from dataclasses import dataclass
from functools import cache
from typing import Any

from agents.memory.local_embeddings import LocalEmbeddingError, model
from agents.policies.parse_numbers import digits_for_words
from agents.skills.preferences import stated_preferences
from agents.skills.quote import is_question

log = logging.getLogger(__name__)

# Labelled examples per skill: what people say when they want it (not the bench's requests).
EXAMPLES: dict[str, tuple[str, ...]] = {
    "draft": (
        "draft the document",
        "write a first draft",
        "write it up for me",
        "fill in the document",
        "start the document",
        "draft an agenda",
        "write the plan",
        "put together a first version",
        "can you write this",
        "make a plan for it",
        "write the post",
        "draft the email",
        "prepare the brief",
        "outline it",
    ),
    "open_questions": (
        "what is missing",
        "what's still open",
        "what do you need from me",
        "what don't we know yet",
        "any questions for me",
        "what information is missing",
        "what are the open questions",
        "what do I still have to tell you",
        "which details are missing",
        "what gaps are there",
    ),
    "decide_first": (
        "what should we decide first",
        "what is most urgent to decide",
        "what's the biggest blocker",
        "what do we need to settle before anything else",
        "which decision matters most",
        "what should I prioritise",
    ),
    "next_step": (
        "what's next",
        "what should I do next",
        "next step",
        "where do we go from here",
        "what now",
        "how do I move this forward",
    ),
    "summary": (
        "sum up",
        "summarise this",
        "tl;dr",
        "in one line",
        "what's this about",
        "give me the gist",
        "recap the task",
        "short summary please",
        "overview of the task",
        "what are we doing here",
        "explain the task briefly",
    ),
    "title": (
        "suggest a title",
        "give it a name",
        "a short title",
        "headline for this",
        "what should we call it",
        "subject line",
        "name the document",
    ),
    "rephrase": (
        "rephrase the goal",
        "reword this",
        "say it more clearly",
        "rewrite the goal in plain words",
        "make the description clearer",
        "put it another way",
    ),
    "checklist": (
        "make a checklist",
        "to-do list",
        "what do I need to do",
        "list the steps",
        "list of tasks",
        "action items",
        "what has to be done",
        "break it down into tasks",
    ),
    "risks": (
        "what could go wrong",
        "list the risks",
        "any pitfalls",
        "what are the dangers",
        "risks and mitigations",
        "what should I watch out for",
    ),
    "effort": (
        "how long will this take",
        "rough estimate of the effort",
        "how much work is it",
        "how many hours",
        "time estimate",
        "how big is this job",
    ),
    "answer_when": (
        "when is it due",
        "what's the deadline",
        "when is it",
        "what date",
        "by when",
    ),
    "answer_who": (
        "who is involved",
        "who is coming",
        "who attends",
        "who are the people",
        "who is it for",
    ),
    "answer_where": ("where is it", "where will it be held", "what's the venue", "which place"),
    "answer_budget": ("what's the budget", "how much can we spend", "how much money", "cost limit"),
}

_DOCUMENT_WORDS = (
    r"document|doc|plan|brief|agenda|post|email|e-mail|announcement|report|proposal|posting|"
    r"newsletter|runbook|itinerary|lesson|section|outline|programme|program|memo|ad|invite|"
    r"invitation|schedule|page|it|this|one|flyer|poster|letter|message|text|blurb|notice|"
    r"trip|offsite|event|meeting|lesson|party|workshop|move|launch|visit|holiday|day|week"
)
_DRAFT = (
    r"\bdraft\b|\bfirst (?:version|cut|pass)\b|\bfill (?:it |this )?(?:in|out)\b|\boutline\b|"
    r"\bwrite (?:it|this) up\b|\bwrite up\b|\b(?:write|prepare|put together|plan|start|"
    rf"make|create|build)\b(?:\s+\w+){{0,3}}?\s+(?:{_DOCUMENT_WORDS})\b"
)
# Requests read by their words before any embedding (the surest cues).
_RULES: tuple[tuple[str, str], ...] = (
    (
        "summary",
        r"\b(?:tl;?dr|sum(?:marise|marize|mary)?\s*(?:it\s+)?up|summar(?:y|ise|ize)|recap|gist|"
        r"in one (?:line|sentence)|what'?s (?:this|it) (?:all )?about|status|key points|"
        r"main points)\b",
    ),
    (  # "5 starter questions", "4 interview questions", "an FAQ", "survey questions"
        "questions",
        r"\b(?:interview|starter|discussion|icebreaker|ice-breaker|warm-?up|survey|feedback|"
        r"quiz|reflection|screening|conversation|exit|poll)\s+(?:questions?|prompts?)\b|"
        r"\bfaqs?\b|\bfrequently asked\b|\bquestions? (?:to|that) (?:get|start|spark|open)\b|"
        r"\bquestions?\s+(?:\w+\s+)?(?:to|i should|we should)\s+ask\b|"
        r"\bquestions?\s+(?:should|could|can|do)\s+(?:i|we)\s+ask\b|"
        r"\b(?:discussion|talking|conversation) (?:prompts?|starters?)\b",
    ),
    ("title", r"\b(?:title|headline|subject line|name for (?:it|this))\b"),
    ("risks", r"\b(?:risks?|pitfalls?|go wrong|watch out)\b"),
    # "options for day 2", "what are our options?", "list 3 reminders" (before the checklist)
    ("options", r"\b(?:options?|alternatives?)\b(?! (?:for|in) the (?:document|doc)\b)"),
    ("reminders", r"\breminders?\b"),
    (  # "packing list", "what should I bring?", "list of supplies", "what needs doing"
        "checklist",
        r"\b(?:check ?list|to-?do|todo|to do list|action items|steps|run ?sheet)\b|"
        r"\b(?:packing|pack|shopping|prep|preparation|kit|supplies|supply|equipment|gear)\s+list\b|"
        r"\bthings (?:to|we should|i should) (?:pack|bring)\b|"
        r"\blist (?:of )?(?:the )?(?:things|everything|supplies|items|what)\b|"
        r"\bwhat (?:should|do|must|shall) (?:i|we) (?:\w+ )?(?:bring|pack|buy|prepare|prep)\b|"
        r"\bwhat (?:still )?needs? (?:doing|to be done)\b",
    ),
    (  # "what's the budget per laptop?", "does €3,200 actually cover this?"
        "answer_budget",
        r"\bbudget (?:is )?per \w+|"
        r"(?=.*(?:budget|[€$£]|\bmoney\b|\bspend\b)).*\b(?:cover|covers|afford|enough)\b",
    ),
    (  # "weekly gross pay at full hours?", "what do 3 nights cost in total?"
        "rate",
        r"(?=.*\b(?:pay|wages?|salary|earn|earnings|costs?|price|bill|how much|gross|net)\b)"
        r"(?=.*\b(?:weekly|monthly|daily|nightly|(?:per|a|each) (?:week|month|day|night)|"
        r"in total|total)\b)",
    ),
    (  # "how much per head if all 32 come?", "the Airbnb each?", "target per volunteer?"
        "share",
        r"(?=.*(?:\bhow much\b|\bcost|\btarget\b|\bprice\b|\bpay\b|\bbudget\b|[€$£]|\bspend))"
        r".*(?:\bper\s+\w+|\beach\b|\bsplit\b|\ba head\b|\bapiece\b)|"
        r"^\s*(?:\w+\s+){0,2}per\s+(?:head|person|volunteer|member|guest|\w+)\s*\??\s*$",
    ),
    (  # "how long will it take?" is effort; "how long do we have the van?" is in the task
        "effort",
        r"\bhow long (?:will|would|does|do|should|might) (?:it|this|that|the work|the job)\b|"
        r"\b(?:effort|estimate|how many hours|how much (?:work|time))\b|"
        r"^\s*how long\s*\??\s*$",
    ),
    ("decide_first", r"\b(?:decide|settle|prioriti[sz]e)\b.*\bfirst\b|\bblock(?:er|ing)\b"),
    ("next_step", r"\bnext step|\bwhat(?:'s| is) next\b|\bwhat now\b|\bdo next\b"),
    (
        "open_questions",
        r"\b(?:missing|open questions?|still open|questions?\b.*\bask|need from me|"
        r"gaps?(?! between)|unresolved|outstanding|undecided|left to (?:sort|decide|do|settle)|"
        r"to sort|loose ends|"
        r"(?:haven'?t|have not|not yet|still to)(?: \w+)? (?:been )?decided?|undecided)\b",
    ),
    ("rephrase", r"\b(?:rephrase|reword|rewrite the goal|put it another way|clearer)\b"),
    (  # "when is it?", "whats the closing date for applications", "release date?"
        "answer_when",
        r"^\s*(?:when\b|by when|what'?s? (?:is )?the (?:\w+ )?(?:deadline|date|due date))|"
        r"^\s*(?:the )?(?:\w+ )?(?:date|deadline)\s*\??\s*$",
    ),
    ("answer_who", r"^\s*who\b"),
    ("answer_where", r"^\s*where\b|\bwhat(?:'s| is) the venue\b"),
    (
        "answer_budget",
        r"\bwhat(?:'s| is) the budget\b|^\s*how much (?:money|can we spend|is the budget)",
    ),
    ("draft", _DRAFT),
    (  # "brief pls", "short invite email for members", "itinerary draft", "volunteer rota"
        "draft",
        r"^\s*(?:an?\s+|the\s+|my\s+|our\s+)?(?:short\s+|quick\s+|brief\s+|first\s+)?"
        r"(?:[\w-]+\s+){0,2}(?:email|e-mail|invite|invitation|brief|agenda|itinerary|flyer|rota|"
        r"schedule|post|announcement|newsletter|letter|advert|ad|plan|outline|memo|notice|"
        r"blurb|poster|message)\b(?:\s+(?:for|to|about|in|with|pls|please|draft)\b.*)?\s*[.!]?\s*$",
    ),
)

THRESHOLD = 0.7  # cosine similarity to the nearest example (WordLlama, unit vectors)
_COUNT = re.compile(
    r"\b(\d{1,2})\s+(?:\w+\s+){0,2}?(?:questions?|risks?|items?|things?|points?|steps?|ideas?|"
    r"titles?|bullets?|options?|tasks?|reminders?|objections?|examples?|tips?|names?|shifts?|"
    r"prompts?|starters?)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Route:
    skill: str  # "" when no skill covers the request
    count: int | None = None  # "three risks": 3
    one_line: bool = False
    score: float = 0.0  # 1.0 for a rule; the nearest example's similarity otherwise
    by: str = ""  # "rule" | "examples" | ""


def clean(request: str) -> str:
    text = re.sub(r"(?<!\w)@[\w.-]+[,:]?\s*", "", request)
    return " ".join(text.split())


def count_in(request: str) -> int | None:
    m = _COUNT.search(digits_for_words(request))
    return int(m[1]) if m and 0 < int(m[1]) <= 20 else None


def one_line(request: str) -> bool:
    return bool(re.search(r"(?i)\b(?:one|1|single)\s+(?:line|sentence)\b|\btl;?dr\b", request))


_LOCK = threading.Lock()


@cache
def _example_vectors() -> tuple[tuple[str, ...], Any, Any] | None:
    try:
        wordllama = model()
    except LocalEmbeddingError as exc:
        log.info("skills routing without embeddings: %s", exc)
        return None
    labels: list[str] = []
    texts: list[str] = []
    for skill, examples in EXAMPLES.items():
        for example in examples:
            labels.append(skill)
            texts.append(example)
    return tuple(labels), wordllama, wordllama.embed(texts, norm=True)


def nearest(request: str) -> tuple[str, float]:
    """The skill of the nearest labelled example and its similarity ("", 0.0 without the
    embedding)."""
    with _LOCK:
        loaded = _example_vectors()
    if loaded is None or not request.strip():
        return "", 0.0
    labels, wordllama, vectors = loaded
    query = wordllama.embed([request], norm=True)[0]
    scores = vectors @ query
    best = int(scores.argmax())
    return labels[best], float(scores[best])


def route(request: str) -> Route:
    text = clean(request)
    lowered = text.casefold()
    count = count_in(text)
    line = one_line(text)
    for skill, pattern in _RULES:
        if re.search(pattern, lowered):
            return Route(skill, count, line, 1.0, "rule")
    if stated_preferences(text):  # "I prefer bullet points and British spelling"
        return Route("preferences", count, line, 1.0, "preference")
    skill, score = nearest(text)
    if skill and score >= THRESHOLD:
        return Route(skill, count, line, score, "examples")
    if is_question(text):  # a question about the task: the task's own words answer it
        return Route("answer_text", count, line, score, "question")
    return Route("", count, line, score, "")
