"""The model producer (today's path, and the fallback for every turn no other producer takes):
the prompt made from the turn's context and the policy's decision, the agent's model streamed
through the one streamer, its answer parsed and validated, then restyled to the requester's
preferences."""

from __future__ import annotations

import time
from typing import Any

from agents import llm
from agents.engine.calls import log_call, measure
from agents.engine.context import messages_for_log, prompt_messages
from agents.engine.decide import Decision
from agents.engine.gather import TurnInput
from agents.engine.producers import Produced
from agents.engine.producers.skills import SKILL_TRIGGERS
from agents.engine.stream import Streamer
from agents.engine.unshared import unshared_of
from agents.models import ModelCall
from agents.models.records import TurnContext
from agents.policies.style import prompt_hints, restyle_actions
from agents.policies.understand import Understanding, grounding
from agents.schemas import DecisionOut
from agents.skills.produce import checked_actions, skill_actions


def policy_hint(inp: TurnInput, understanding: Understanding, decision: Decision) -> str | None:
    """What the policy tells the model (None: nothing): suggest rather than edit, go ahead after
    a question nobody answered, state the assumption, and the requester's preferences that no
    rule enforces (tone, length, headings, number format)."""
    hint: str | None = None
    if decision.suggests:
        hint = "Propose document changes as suggestions; do not edit directly."
    if inp.timed_out:
        hint = (
            (hint or "")
            + f" Nobody answered your question within {inp.turn.inputs.get('minutes', '?')} min:"
            " do not ask again; go ahead on your best guess and say what you assumed."
        ).strip()
    if decision.assumption:
        hint = ((hint or "") + " Tell people: " + decision.assumption).strip()
    if preferred := prompt_hints(dict(understanding.preferences)):
        hint = ((hint or "") + " " + preferred).strip()
    return hint


class ModelProducer:
    """The agent's model writes the turn's actions."""

    name = "model"

    def accepts(self, inp: TurnInput) -> bool:
        return True

    def produce(self, inp: TurnInput, understanding: Understanding, decision: Decision) -> Produced:
        turn, profile = inp.turn, inp.profile
        shown: dict[str, Any] = dict(inp.context)  # stored with the decision
        context: TurnContext = {**inp.context}  # the prompt's
        if (hint := policy_hint(inp, understanding, decision)) is not None:
            context["policy_hint"] = hint
        if profile.is_embedded:
            # The small model is shown no memory: its reply states only what the turn knows
            # (``grounding``), and its chips name only the asker's items among that.
            known = grounding(
                understanding.situation,
                understanding.facts,
                agent=str(inp.context.get("agent") or ""),
                asker=inp.context.get("requested_by_id"),
            )
            context["grounding"] = shown["grounding"] = known
            shown["memory_item_ids_retrieved"] = shown.get("memory_item_ids", [])
            shown["memory_item_ids"] = context["memory_item_ids"] = list(known["memory_item_ids"])
        messages = prompt_messages(context, profile)
        call = ModelCall(
            turn=turn,
            agent=turn.agent,
            provider=profile.provider,
            model=profile.model,
            messages=messages_for_log(messages),
        )
        started = time.monotonic()
        streamer: Streamer | None = None
        try:
            model = llm.build_chat_model(profile)
            streamer = Streamer(
                turn,
                model,
                messages,
                max_tokens=profile.max_tokens,
                private=unshared_of(inp, understanding).items(),
            )
            text = streamer.run()
            call.response = text
            answer = llm.parse_decision(profile, text)
        except BaseException as exc:
            call.error = f"{type(exc).__name__}: {exc}"[:2000]
            call.response = streamer.text if streamer else ""
            measure(call, streamer, started, profile)
            log_call(
                turn,
                call,
                fields={"context": shown, "policy_decision": decision.record.to_stored()},
            )
            raise
        measure(call, streamer, started, profile)
        proposed = [a.model_dump() for a in answer.actions]
        if profile.is_embedded and turn.trigger in SKILL_TRIGGERS:
            # issue 27: the small model's free text is shown only when it names the task's
            # facts and invents none; otherwise the skills' answer (what the agent can do) stands
            proposed = checked_actions(proposed, skill_actions(dict(inp.context), routed=inp.route))
        actions = restyle_actions(
            proposed,
            dict(understanding.preferences),
            assumption=decision.assumption,
        )
        return Produced(
            actions=DecisionOut.model_validate({"actions": actions}),
            context=shown,
            producer=self.name,
            call=call,
            fields=streamer.final_fields,
            stream=streamer.final_event,
        )
