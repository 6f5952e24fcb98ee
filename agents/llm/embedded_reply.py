"""What the small embedded model writes, kept to what it does reliably (pure Python, no Django).

SmolLM2-135M writes one short line of text well enough; it does not write JSON well, it loops,
it stops mid-word when it runs out of tokens, it greets the wrong person and it copies the
document it was shown. So the embedded model (``agents/llm/embedded.py``) asks it for plain text
only (a grammar keeps control characters out), with the short prompt of
``agents/llm/embedded_prompt.py``, watches the text as it streams, and this module:

* stops the stream early (``should_stop``): a repetition loop, a stop sequence (the model
  starting a new chat line), or enough sentences;
* turns what was written into the reply people see (``finish``): the loop cut off, trimmed to
  its last whole sentence, addressed to the person who asked, never a copy of the document; and
  when nothing usable is left, an honest short answer saying what this model could not do and
  what a stronger one would (``could_not``), rather than a retry that would fail the same way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from difflib import SequenceMatcher

from agents.llm.embedded_prompt import spoken_list
from agents.policies.parse_numbers import digits_for_words

MAX_SENTENCES = 3
MAX_CHARS = 420
# A reply sharing this much text in one piece with the document is a copy, not an answer.
COPY_CHARS = 60
COPY_SHARE = 0.5
# The model starting the next line of the chat or of the prompt.
STOP_MARKERS = (" - ", "Reply to ", "Chat:", "<<<", ">>>", "Task:", "Document:")

_SENTENCE_END = re.compile(r"[.!?](?=\s|$)")
# A sentence: up to a stop followed by a space or the end, so "1.5 million" and "9.30" stay whole.
_SENTENCE = re.compile(r"\S.*?(?:[.!?]+(?=\s|$)|$)")


def _sentences(text: str) -> list[str]:
    return [m.group().strip() for m in _SENTENCE.finditer(text) if m.group().strip()]


_WORD = re.compile(r"[\w'\u2019-]+")


@dataclass(frozen=True)
class TurnFacts:
    """What the reply is checked against: who asked, who else is in the chat, the document."""

    requester: str = ""
    people: tuple[str, ...] = ()
    document: str = ""
    request: str = ""
    agent: str = ""
    # What the turn already knows, for the grounded first sentence (``grounded``): the task's
    # title and goal, the values the clarification policy read from the request, chat, document
    # or the asker's memory ((label, value) pairs, as people say them), and what is still open.
    title: str = ""
    goal: str = ""
    known: tuple[tuple[str, str], ...] = ()
    still_open: tuple[str, ...] = ()
    # What this agent already said in the chat: a grounded sentence it said before is not
    # said again (every free-form reply would otherwise open with the same goal sentence).
    said_before: tuple[str, ...] = ()
    # What people said in the recent chat: a number the reply states must come from somewhere
    # the turn was shown (``unsupported_numbers``).
    heard: tuple[str, ...] = ()


@dataclass
class Reply:
    kind: str  # "reply" or "ask"
    text: str
    problems: list[str] = field(default_factory=list)  # what was cut or replaced, for the log


# --- While streaming --------------------------------------------------------------------------


def loop_start(text: str) -> int | None:
    """Where a repetition loop starts in ``text`` (None: no loop). Three kinds:
    a short unit repeated at the end ("Ben Ben Ben", "10.10.10."), a sentence said twice, and
    a run of seven words said twice."""
    for unit in range(1, 41):
        reps = 1
        end = len(text)
        while end - unit * (reps + 1) >= 0 and (
            text[end - unit * (reps + 1) : end - unit * reps] == text[end - unit :]
        ):
            reps += 1
        if text[end - unit :].strip() and reps >= (3 if unit > 2 else 6) and unit * reps >= 9:
            return end - unit * (reps - 1)
    seen: dict[str, int] = {}
    for match in re.finditer(r"[^.!?]+[.!?]", text):
        key = " ".join(_WORD.findall(match.group().lower()))
        if len(key) >= 12 and key in seen:
            return match.start()
        seen.setdefault(key, match.start())
    words = list(_WORD.finditer(text.lower()))
    grams: dict[tuple[str, ...], int] = {}
    for i in range(len(words) - 6):
        gram = tuple(w.group() for w in words[i : i + 7])
        if gram in grams and i >= grams[gram] + 7:
            return words[i].start()
        grams.setdefault(gram, i)
    return None


def should_stop(text: str, facts: TurnFacts) -> bool:
    """Whether the stream should end now (its text is then passed to ``finish``)."""
    if len(text) >= MAX_CHARS or loop_start(text) is not None:
        return True
    if _stop_at(text, facts) is not None:
        return True
    return len(_SENTENCE_END.findall(text)) >= MAX_SENTENCES


def _markers(facts: TurnFacts) -> list[str]:
    return [*STOP_MARKERS, *(f" {name}:" for name in facts.people if name)]


def _stop_at(text: str, facts: TurnFacts) -> int | None:
    found = [text.find(marker) for marker in _markers(facts) if marker in text]
    return min(found) if found else None


def shown_so_far(text: str, facts: TurnFacts) -> int:
    """How much of the streaming ``text`` the card may show now: its whole words, but never a
    tail that may be the start of a stop sequence (it would be cut from the reply)."""
    end = len(text) if text.endswith(" ") else max(0, text.rfind(" "))
    for marker in _markers(facts):
        for size in range(len(marker) - 1, 0, -1):
            if text.endswith(marker[:size]):
                end = min(end, len(text) - size)
                break
    return end


# --- The finished reply -----------------------------------------------------------------------


def whole_sentences(text: str) -> str:
    """``text`` up to its last sentence end ('' when it has none)."""
    ends = [m.end() for m in _SENTENCE_END.finditer(text)]
    return (
        text[: ends[MAX_SENTENCES - 1] if len(ends) >= MAX_SENTENCES else ends[-1]] if ends else ""
    )


def is_copy(text: str, document: str) -> bool:
    """Whether ``text`` is mostly a piece of the document."""
    a, b = " ".join(text.lower().split()), " ".join(document.lower().split())
    if not a or not b:
        return False
    match = SequenceMatcher(None, a, b, autojunk=False).find_longest_match(0, len(a), 0, len(b))
    return match.size >= COPY_CHARS or match.size >= len(a) * COPY_SHARE >= 12


def _address(text: str, facts: TurnFacts) -> str:
    """Greet the person who asked: a reply that opens with someone else's name gets theirs."""
    who = facts.requester
    if not who:
        return text
    opening = re.match(r"^(?:(?:hi|hello|hey|dear)\s+)?@?([\w.-]+)\s*[,:!]\s*", text, re.I)
    if opening:
        name = opening.group(1).lower()
        if name == who.lower():
            return text
        others = {p.lower() for p in facts.people} | {facts.agent.lower()}
        if name in others:
            rest = text[opening.end() :]
            return f"{who}, {rest}" if rest else text
    if re.search(rf"(?<![\w@]){re.escape(who)}(?!\w)", text, re.I):
        return text
    first = text.split(" ", 1)[0]
    # "The hotel ..." -> "bob, the hotel ...", but "Porto is ..." keeps its capital: only a
    # word that is capitalised for opening the sentence is lowered.
    lower = re.split(r"['\u2019]", first.strip(",.;:!?").lower())[0] in _SENTENCE_OPENERS
    return f"{who}, {text[:1].lower() + text[1:] if lower else text}"


_SENTENCE_OPENERS = frozenset(
    """a an the this that these those it its there here we you they he she our your their my
    yes no sure maybe perhaps if when while for to in on at as after before so and but or
    what which where how why who one two three some many most all each every let please
    try consider start book stay go take use ask check visit choose pick keep make get bring
    plan add""".split()  # noqa: SIM905 (a word list reads better as words)
)


SMALL_MODEL_NOTE = (
    "I am a small local model and could not do more with this; a stronger one (an "
    "administrator can add one on the Models page) would."
)


# --- What the turn knows, stated first ---------------------------------------------------------

GOAL_SENTENCE_CHARS = 200
KNOWN_ITEMS = 5
OPEN_ITEMS = 3


def _goal_sentence(goal: str) -> str:
    """The goal's first sentence, whole (or its words up to ``GOAL_SENTENCE_CHARS``), without
    its closing stop."""
    goal = " ".join(goal.split())
    end = _SENTENCE_END.search(goal)
    first = goal[: end.start()] if end else goal
    if len(first) > GOAL_SENTENCE_CHARS:
        first = first[:GOAL_SENTENCE_CHARS].rsplit(" ", 1)[0]
    return first.rstrip(" ,;:.!?")


def grounded(facts: TurnFacts) -> str:
    """One sentence saying what the turn actually knows, built only from data it has (never
    from what the model wrote): the values read from the request, chat, document or the asker's
    memory and what is still open, for the task's goal; without any, the goal itself. Addressed
    to the person who asked; '' when the task has neither values nor a goal, or when the agent
    already said this sentence in the chat (to anybody)."""
    sentence = _grounded_sentence(facts)
    if not sentence:
        return ""
    said = [" ".join(body.split()).lower() for body in facts.said_before]
    if any(sentence.lower() in body for body in said):
        return ""
    who = f"{facts.requester}, " if facts.requester else ""
    return who + sentence


def _grounded_sentence(facts: TurnFacts) -> str:
    """``grounded``'s sentence without its addressee."""
    subject = _goal_sentence(facts.goal) or " ".join(facts.title.split())
    if subject[1:2].islower():  # "for two days in Lisbon", but "for EU grants"
        subject = subject[:1].lower() + subject[1:]
    known = [f"{label} {value}".strip() for label, value in facts.known[:KNOWN_ITEMS] if value]
    still_open = [label for label in facts.still_open[:OPEN_ITEMS] if label]
    if not known and not still_open:
        goal = _goal_sentence(facts.goal)
        return f"the goal I am working from is: {goal}." if goal else ""
    text = "here is what I have"
    if subject:
        text += f" for {subject}"
    if known:
        text += f": {', '.join(known)}"
        if still_open:
            text += f"; still open: {spoken_list(still_open)}"
    else:
        text += f": still open: {spoken_list(still_open)}"
    return text + "."


# Openings of the small model that carry nothing: a greeting of someone ("Hello alice,"), a
# name with a colon ("Alice:"), and whole sentences of pleasantry.
_GREETING = re.compile(
    r"^(?:(?:hi|hello|hey|dear|greetings)(?:\s+(?:there|team|everyone|all|@?[\w.-]+))?\s*[,!.:]\s*"
    r"|(?:hi|hello|hey|dear)\s+)",
    re.I,
)
_PLEASANTRY = re.compile(
    r"^(?:(?:i['\u2019]m|i am|we['\u2019]re|we are)\s+(?:so\s+|really\s+|very\s+)?"
    r"(?:glad|happy|pleased|excited|thrilled|delighted|sorry|here to help)\b"
    r"|(?:thank you|thanks)\b(?!.*\?)"
    r"|(?:(?:what|that['\u2019]?s|such|a|an)\s+)*(?:a |an )?(?:(?:really|very)\s+)?"
    r"(?:great|good|excellent|wonderful|fantastic|lovely|interesting|brilliant) "
    r"(?:question|idea|point)(?:\s+(?:you\s+have|you\s+asked|to\s+ask))?\s*[.!?,]*$"
    r"|(?:sure|of course|absolutely|certainly|no problem)\s*[.!,]?$"
    r"|it['\u2019]?s (?:a |my )?(?:pleasure|great to)\b"
    r"|(?:nice|good) to (?:meet|hear|see)\b)",
    re.I,
)


def without_pleasantries(text: str, facts: TurnFacts) -> str:
    """``text`` without the greetings and pleasantries the small model opens with, nor any
    sentence that is only a pleasantry ("I'm glad you're excited about ...")."""
    names = [n for n in (*facts.people, facts.requester, facts.agent) if n]
    name_opening = (
        re.compile(rf"^@?(?:{'|'.join(re.escape(n) for n in names)})\s*[,:!]\s*", re.I)
        if names
        else None
    )
    previous = None
    while text != previous:
        previous = text
        text = _GREETING.sub("", text, count=1)
        if name_opening is not None:
            text = name_opening.sub("", text, count=1)
    sentences = _sentences(text)
    kept = [s for s in sentences if s and not _PLEASANTRY.match(s)]
    text = " ".join(kept)
    return text[:1].upper() + text[1:] if text else ""


# A number in digits, with thousands separators or decimals ("6,000", "1.5", "12").
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def _numbers(text: str) -> set[str]:
    """The numbers ``text`` states, words included ("twelve" -> "12"), as plain digits: "6,000"
    and "6000" are the same number; "1.5" keeps its decimals."""
    found = set()
    for match in _NUMBER.finditer(digits_for_words(text)):
        token = match.group()
        if re.fullmatch(r"\d{1,3}(?:[.,]\d{3})+", token):  # 6,000 or 6.000
            token = re.sub(r"[.,]", "", token)
        found.add(token.replace(",", ".").lstrip("0") or "0")
    return found


def unsupported_numbers(sentence: str, facts: TurnFacts) -> set[str]:
    """The numbers ``sentence`` states that appear nowhere the turn was shown (title, goal,
    request, document, people's recent chat, the values it read): what a small model makes up
    ("a 3-day training with 20 people" for a two-day training of 8, "600 euros" for 6000)."""
    shown = " \n ".join(
        [
            facts.title,
            facts.goal,
            facts.request,
            facts.document,
            *facts.heard,
            *(f"{label} {value}" for label, value in facts.known),
        ]
    )
    return _numbers(sentence) - _numbers(shown)


def without_invented_numbers(text: str, facts: TurnFacts) -> str:
    """``text`` without the sentences that state a number the turn was never shown."""
    sentences = _sentences(text)
    return " ".join(s for s in sentences if s and not unsupported_numbers(s, facts))


def could_not(facts: TurnFacts, *, reason: str = "") -> Reply:
    """The honest answer when the small model produced nothing usable (never retried: the same
    prompt fails the same way)."""
    request = facts.request.lower()
    if re.search(r"\b(draft|write|edit|add|plan|list|fill|rewrite|summari[sz]e|update)\b", request):
        stronger = "draft that in the document for you to accept"
    elif "?" in request or re.search(r"\b(what|which|where|when|how|who|why)\b", request):
        stronger = "answer that properly from the task and the document"
    else:
        stronger = "do this properly"
    who = f"{facts.requester}, " if facts.requester else ""
    text = (
        f"Sorry {who}I could not do this well: I am a small local model that only manages short "
        f"replies. A stronger model (an administrator can add one on the Models page) would "
        f"{stronger}."
    )
    return Reply(kind="reply", text=text[:MAX_CHARS], problems=[reason or "nothing usable"])


def _fit(first: str, text: str) -> str:
    """``first`` then as many whole sentences of ``text`` as fit in ``MAX_CHARS``."""
    out = first
    for sentence in _sentences(text):
        if len(out) + 1 + len(sentence) > MAX_CHARS:
            break
        out = f"{out} {sentence}" if out else sentence
    return out


def finish(raw: str, facts: TurnFacts) -> Reply:
    """The reply people see, made from what the model wrote: it opens with what the turn
    actually knows (``grounded``) when the turn knows anything, then the model's own whole
    sentences, if usable, without greetings or pleasantries. When the model wrote nothing
    usable, the grounded sentence alone, with a short honest word about the small model; with
    nothing grounded either, ``could_not``."""
    problems: list[str] = []
    text = " ".join(raw.replace("\\n", " ").split())
    cut = _stop_at(text, facts)
    if cut is not None:
        text = text[:cut].rstrip()
        problems.append("stop sequence")
    start = loop_start(text)
    while start is not None:
        text = text[:start].rstrip()
        problems.append("repetition loop cut")
        start = loop_start(text)
    sentences = whole_sentences(text)
    if sentences != text:
        problems.append("trimmed to the last whole sentence")
    text = sentences.strip()
    plain = without_pleasantries(text, facts)
    if plain != text:
        problems.append("greetings or pleasantries removed")
    text = plain
    checked = without_invented_numbers(text, facts)
    if checked != text:
        problems.append("sentences with numbers the task never gave removed")
    text = checked
    unusable = ""
    if len(_WORD.findall(text)) < 2:  # "Try Alfama." is an answer; "Sure." is not
        unusable = "no whole sentence"
    elif is_copy(text, facts.document):
        unusable = "a copy of the document"
    first = grounded(facts)
    if unusable:
        if not first:
            return could_not(facts, reason="; ".join([*problems, unusable]))
        problems.append(f"{unusable}: the grounded sentence alone")
        text = _fit(first, SMALL_MODEL_NOTE)
        return Reply(kind="reply", text=text, problems=problems)
    if not first:
        text = _address(text, facts)
        kind = "ask" if text.endswith("?") else "reply"
        return Reply(kind=kind, text=text[:MAX_CHARS], problems=problems)
    text = _fit(first, text)
    kind = "ask" if text.endswith("?") else "reply"
    return Reply(kind=kind, text=text, problems=problems)
