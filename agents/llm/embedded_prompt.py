"""What the small embedded model is shown and what the agents panel says it can do (pure Python,
no Django).

* ``prompt``: the short (system, user) prompt for SmolLM2-135M, the constant part first so
  llama.cpp's prefix cache reuses it across turns;
* ``describe_capabilities``: the panel's sentences about what the model does reliably, from
  bench/embedded_kinds.py's figures.

What it writes back is vetted by ``agents/llm/embedded_reply.py``.
"""

from __future__ import annotations

import re
from typing import Any

# What the embedded model can do, in the panel's words, when it was never measured; otherwise
# ``describe_capabilities`` says it from bench/embedded_kinds.py's figures.
CAPABILITIES = (
    "It manages short replies and questions in the chat; it does not edit the document, "
    "make suggestions or remember preferences."
)
KIND_WORDS = {
    "reply": "short replies in the chat",
    "ask": "questions",
    "suggest": "document suggestions",
    "edit": "direct document edits",
}
# What the turn engine lets it do whatever the figures: one reply or one question a turn.
NEVER_ASKED = (
    "It is never asked to edit the document, make suggestions or remember preferences: drafts, "
    "checklists and open questions come from built-in skills that read what the task says."
)


def spoken_list(items: list[str], word: str = "and") -> str:
    """``["a", "b", "c"]`` as people say it: "a, b and c"."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} {word} {items[-1]}"


def describe_capabilities(figures: dict[str, Any] | None) -> str:
    """What the embedded model can do, in whole sentences for the agents panel, from the
    measured figures (``agents/llm/embedded_capabilities.json``, written by
    bench/embedded_kinds.py): the kinds it did reliably and those it did not, each with its
    count. Without figures, ``CAPABILITIES``."""
    kinds = (figures or {}).get("kinds")
    if not isinstance(kinds, dict) or not kinds:
        return CAPABILITIES
    good: list[str] = []
    poor: list[str] = []
    for kind, words in KIND_WORDS.items():
        row = kinds.get(kind)
        if not isinstance(row, dict) or not row.get("of"):
            continue
        said = f"{words} ({row['usable']} of {row['of']} usable)"
        (good if row.get("reliable") else poor).append(said)
    measured = "Measured on varied requests"
    if good:
        text = f"{measured}, it manages {spoken_list(good)}"
        text += f"; it is unreliable at {spoken_list(poor)}." if poor else "."
    else:
        text = f"{measured}, it manages no kind of work reliably: {spoken_list(poor)}."
    return f"{text} {NEVER_ASKED}"


# --- The prompt -------------------------------------------------------------------------------

# The same for every turn of every agent, so that llama.cpp's prefix cache (warmed when the
# worker starts, agents/engine/warmup.py) never evaluates it again: names come after it.
SYSTEM = (
    "You are a helpful teammate in a team chat. Answer the person who asks in one to three "
    "short sentences, using only facts from the task, goal and chat. If you need one fact to "
    "answer, ask one short question ending with '?'. Never copy the document."
)
GOAL_CHARS = 300
DOCUMENT_CHARS = 700
# Each turn's chat lines differ from the last turn's (the window moves): they are what llama.cpp
# evaluates anew every turn, with the request, so they are few and short.
CHAT_LINES = 2
LINE_CHARS = 160
REQUEST_CHARS = 400


def prompt(
    *,
    agent: str,
    requester: str,
    title: str,
    goal: str,
    document: str,
    chat: list[tuple[str, str]],
    request: str,
    instructions: str = "",
) -> tuple[str, str]:
    """(system, user) messages: short enough for a 135M model, and ordered from the most
    stable part to the least, for the prefix cache: the constant instructions, the agent's
    name and its owner's instructions, then the task, its goal and document (the same for
    every turn of the task), the last chat lines, and the request, last."""
    who = requester or "the team"
    system = f"{SYSTEM} Your name is {agent}." if agent else SYSTEM
    if instructions:
        system += f" {instructions.strip()[:300]}"
    parts = [f"Task: {title}"]
    if goal:
        parts.append(f"Goal: {goal[:GOAL_CHARS]}")
    if document.strip():
        parts.append(f"Document:\n<<<\n{document[:DOCUMENT_CHARS]}\n>>>")
    lines = [
        f"- {author}: {' '.join(body.split())[:LINE_CHARS]}" for author, body in chat[-CHAT_LINES:]
    ]
    if lines:
        parts.append("Chat:\n" + "\n".join(lines))
    request = (
        re.sub(rf"@{re.escape(agent)}\b[,:]?\s*", "", request, flags=re.I) if agent else request
    )
    if request.strip():
        parts.append(f"{who} asks you: {' '.join(request.split())[:REQUEST_CHARS]}")
    parts.append(f"Reply to {who}.")
    return system, "\n\n".join(parts)
