"""Chat models for the harness (real signals, the LLM user): built by agents/llm/ from a model
profile; "fake" gives langchain-core's fake chat model with canned structured answers (tests and
dry runs)."""

from __future__ import annotations

import json
from typing import Any

from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import BaseMessage

from agents import llm
from agents.llm.fakes import prompt_text
from agents.models import ModelProfile

# The canned answer for each signal schema, found by the schema's title in the prompt.
FAKE_ANSWERS = {
    "SlotExtraction": json.dumps({"slots": []}),
    "AmbiguityRating": json.dumps(
        {"ambiguity": 0.5, "reason": "fake", "unclear_slots": [], "question": ""}
    ),
    "Interpretations": json.dumps({"interpretations": [{"summary": "fake reading", "values": []}]}),
}


class FakeSignalsChatModel(FakeListChatModel):
    """langchain-core's fake chat model, answering each signal call with the canned object of
    the schema the prompt carries (so answers stay right when the harness reuses some calls)."""

    def _call(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> str:
        prompt = prompt_text(messages)
        for title, answer in FAKE_ANSWERS.items():
            if f'"title": "{title}"' in prompt or f'"title":"{title}"' in prompt:
                return answer
        return super()._call(messages, *args, **kwargs)


def fake_chat_model() -> FakeListChatModel:
    """The fake model for dry runs and tests of the real-signal path."""
    return FakeSignalsChatModel(responses=list(FAKE_ANSWERS.values()))


def chat_model_for_profile(name: str) -> tuple[Any, float]:
    """(chat model, price per 1000 tokens) for a model profile name."""
    if name in ("", "fake"):
        return fake_chat_model(), 0.0
    profile = ModelProfile.objects.filter(name=name).first()
    if profile is None and name == "embedded":
        profile = llm.embedded_profile()
    if profile is None:
        raise LookupError(f"no model profile named {name!r}")
    # One price per 1000 tokens for the harness: the mean of the input and output prices.
    price = float(profile.price_in_per_1k + profile.price_out_per_1k) / 2
    return llm.build_chat_model(profile), price


def profile_endpoint(name: str) -> str:
    """Where a model profile's model answers, for error messages and reports."""
    if name in ("", "fake"):
        return "fake (in process)"
    profile = ModelProfile.objects.filter(name=name).first()
    if profile is None:
        return "embedded (in process)" if name == "embedded" else "(unknown)"
    where = profile.base_url or f"{profile.provider} default endpoint"
    return f"{profile.provider} {profile.model} at {where}"


def _section(prompt: str, start: str) -> list[str]:
    lines = prompt.splitlines()
    for index, line in enumerate(lines):
        if line.startswith(start):
            return [x for x in lines[index + 1 :] if x.startswith(("- ", "* "))]
    return []


def scribe_behaviour(messages: list[Any]) -> str:
    """A fake model for end-to-end runs: it edits the document into the task title followed by
    every request, answer and chat line it was shown (so the values people gave end up in the
    document), replacing the document it read. Tests structure, not writing."""
    prompt = prompt_text(messages)
    title = next((x[6:] for x in prompt.splitlines() if x.startswith("Task: ")), "Task")
    document = ""
    if "<<<\n" in prompt:
        document = prompt.split("<<<\n", 1)[1].split("\n>>>", 1)[0]
    lines = [x[2:] for x in _section(prompt, "Your questions and the answers:")]
    lines += [x for x in prompt.splitlines() if " asks you: " in x]
    lines += [x[2:] for x in _section(prompt, "Chat, oldest first:")]
    body = "\n".join(f"- {line}" for line in dict.fromkeys(lines))
    new = f"# {title}\n\n{body}\n"
    if new == document:
        return json.dumps(
            {"actions": [{"kind": "reply", "text": "Done: the document is current."}]}
        )
    edit = {"kind": "edit", "text": "Wrote it up.", "find": document, "replace": new}
    return json.dumps({"actions": [edit]})
