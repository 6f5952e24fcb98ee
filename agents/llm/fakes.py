"""Fake chat models for tests and benchmarks: langchain-core's ``GenericFakeChatModel`` answering
from a named behaviour (``ModelProfile.model`` of a ``fake`` profile). The built-in behaviours are
below; tests add theirs with ``register_fake_behaviour``.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from pydantic import Field

from agents.llm.errors import ModelConfigError, ModelError

FakeBehaviour = Callable[[list[BaseMessage]], str]
_FAKE_BEHAVIOURS: dict[str, FakeBehaviour] = {}


def register_fake_behaviour(name: str, behaviour: FakeBehaviour) -> None:
    """Tests add scripted answers under a name and set ``ModelProfile.model`` to it."""
    _FAKE_BEHAVIOURS[name] = behaviour


def prompt_text(messages: list[Any]) -> str:
    """The text of a prompt's last message (the engine's context), for fake models."""
    return messages[-1].text if messages else ""


def _last_human_text(messages: list[BaseMessage]) -> str:
    """The newest chat line in the prompt (the engine lists chat as ``name: text`` lines)."""
    prompt = prompt_text(messages)
    lines = [line for line in prompt.splitlines() if line.startswith("- ")]
    return lines[-1][2:].split(": ", 1)[-1] if lines else ""


def _decision(*actions: dict[str, str]) -> str:
    return json.dumps({"actions": list(actions)})


def _echo(messages: list[BaseMessage]) -> str:
    said = _last_human_text(messages)[:200]
    return _decision({"kind": "reply", "text": f"Noted: {said}" if said else "Hello."})


def _checklist_line(kind: str, said: str, line: str) -> str:
    """A reply and one appended checklist line, as a suggestion or a direct edit."""
    return _decision(
        {"kind": "reply", "text": said},
        {"kind": kind, "text": "Adds a checklist line.", "find": "", "replace": f"\n- [ ] {line}"},
    )


def _suggest(messages: list[BaseMessage]) -> str:
    return _checklist_line(
        "suggest", "I propose adding a line to the document.", "Agreed next step"
    )


def _ask(messages: list[BaseMessage]) -> str:
    return _decision({"kind": "ask", "text": "Which part should I start with?"})


def _edit(messages: list[BaseMessage]) -> str:
    return _checklist_line("edit", "I added a line to the document.", "Book the venue")


_PREFERENCES_HEADING = "What the people involved prefer:"
_STRUCTURED = re.compile(r"\[(?P<key>[a-z_]+)=(?P<value>[^\]]+)\]$")
_DRAFT_POINTS = (
    "Colour-code the milestones on one page",
    "Organise the review with everyone involved",
    "Summarise the open questions for the next meeting",
)
_AMERICAN = (("Colour", "Color"), ("Organise", "Organize"), ("Summarise", "Summarize"))


def prompt_preferences(messages: list[BaseMessage]) -> dict[str, str]:
    """The structured ``[key=value]`` preferences listed in the prompt's "What the people
    involved prefer" section (the first line of a key wins: the engine lists the best first)."""
    prompt = prompt_text(messages)
    _, found, rest = prompt.partition(_PREFERENCES_HEADING + "\n")
    preferences: dict[str, str] = {}
    for line in rest.split("\n\n", 1)[0].splitlines() if found else []:
        match = _STRUCTURED.search(line.strip())
        if line.startswith("* ") and match:
            preferences.setdefault(match["key"], match["value"])
    return preferences


def _draft(messages: list[BaseMessage]) -> str:
    """A first draft appended as a direct edit, shaped only by what the prompt says.

    Tests plumbing, not a model's skill: it reads the ``[lists=…]`` and ``[spelling=…]`` tags of
    the prompt's preference section and nothing else (no hidden knowledge of who asks), so a
    draft in bullets and British spelling shows that the stored preferences reached the model.
    Without tags it writes prose in American spelling.
    """
    prompt = prompt_text(messages)
    title = next((line[6:] for line in prompt.splitlines() if line.startswith("Task: ")), "")
    preferences = prompt_preferences(messages)
    # The memory keys of SHARED_CONTRACTS.md (list_style, spelling=british), and the old ones.
    spelling = "en-GB" if preferences.get("spelling") in ("british", "en-GB") else "en-US"
    lists = preferences.get("list_style") or preferences.get("lists", "prose")
    points = list(_DRAFT_POINTS)
    for british, american in _AMERICAN if spelling == "en-US" else ():
        points = [point.replace(british, american) for point in points]
    if lists == "bullets":
        body = "\n".join(f"- {point}" for point in points)
    elif lists == "numbered":
        body = "\n".join(f"{n}. {point}" for n, point in enumerate(points, start=1))
    else:
        body = " ".join(f"{point}." for point in points)
    form = {"bullets": "bullet points", "numbered": "a numbered list"}.get(lists, "prose")
    return _decision(
        {"kind": "reply", "text": f"I drafted {title or 'the document'} ({form}, {spelling})."},
        {
            "kind": "edit",
            "text": "A first draft.",
            "find": "",
            "replace": f"\n## {title or 'Draft'}\n\n{body}\n",
        },
    )


def _everything(messages: list[BaseMessage]) -> str:
    return _decision(
        {"kind": "reply", "text": "Working on it."},
        {"kind": "note", "text": "People asked for a summary."},
        {"kind": "suggest", "text": "Adds a summary.", "find": "", "replace": "\nSummary: tbd"},
    )


_ME = re.compile(r"You are (\w+),")
_ASKS = re.compile(r"^(\w+) asks you:", re.MULTILINE)
_AT = re.compile(r"(?<![\w@])@([A-Za-z][A-Za-z0-9_-]{0,31})")


def _relay(messages: list[BaseMessage]) -> str:
    """Hands the work straight back, for chain tests (issue 30): "@<X> please have another
    look.", X being the agent that asked (``X asks you:``), else the first other @name of the
    newest chat line, else its author. Two relay agents loop until a guard stops them."""
    me = _ME.search(str(messages[0].content)) if messages else None
    asked = _ASKS.search(prompt_text(messages))
    if asked:
        return _decision({"kind": "reply", "text": f"@{asked[1]} please have another look."})
    lines = [line for line in prompt_text(messages).splitlines() if line.startswith("- ")]
    author, _, text = lines[-1][2:].partition(": ") if lines else ("", "", "")
    others = [n for n in _AT.findall(text) if not me or n.lower() != me[1].lower()]
    partner = others[0] if others else author.split(" ")[0]
    return _decision({"kind": "reply", "text": f"@{partner} please have another look."})


def _fail(messages: list[BaseMessage]) -> str:
    raise ModelError("The fake model was told to fail.")


def _invalid(messages: list[BaseMessage]) -> str:
    return '{"actions": [{"kind": "dance"}]}'


_BUILTIN_BEHAVIOURS: dict[str, FakeBehaviour] = {
    "echo": _echo,
    "suggest": _suggest,
    "ask": _ask,
    "edit": _edit,
    "draft": _draft,
    "everything": _everything,
    "fail": _fail,
    "invalid": _invalid,
    "relay": _relay,
}


def fake_behaviour(name: str) -> tuple[FakeBehaviour, float]:
    """``name`` or ``name@delay_ms`` (a pause between streamed chunks, for cancel tests)."""
    base, _, delay = name.partition("@")
    behaviour = _FAKE_BEHAVIOURS.get(base) or _BUILTIN_BEHAVIOURS.get(base)
    if behaviour is None:
        raise ModelConfigError(f"Unknown fake behaviour {base!r}.")
    try:
        seconds = int(delay) / 1000 if delay else 0.0
    except ValueError as exc:
        raise ModelConfigError(f"Bad delay in fake behaviour {name!r}.") from exc
    return behaviour, seconds


class BehaviourFakeChatModel(GenericFakeChatModel):
    """langchain-core's ``GenericFakeChatModel`` answering from a named behaviour.

    The answer is computed from the prompt, streamed in whitespace-separated chunks.
    """

    messages: Iterator[AIMessage | str] = Field(default_factory=lambda: iter(()))
    behaviour: str = "echo"

    @property
    def _llm_type(self) -> str:
        return "collab-fake"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        behaviour, _ = fake_behaviour(self.behaviour)
        message = AIMessage(content=behaviour(messages))
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        _, delay = fake_behaviour(self.behaviour)
        for chunk in super()._stream(messages, stop=stop, run_manager=run_manager, **kwargs):
            if delay:
                time.sleep(delay)
            yield chunk
