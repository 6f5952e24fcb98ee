"""The skills producer (issue 27): on the embedded default, a request one of the agent's
skills covers (agents/skills: draft, open questions, checklist, summary, title, ...) is
answered by that skill, deterministically and with no model call: a reply, and for a draft a
suggestion the person accepts, edits or rejects (a skill never edits the document itself).
A question about what the task says that no line of it answers is answered so ("I found no
line of the task that answers that"). Requests no skill covers, and turns no person's request
started (an idle document, a question that timed out), go to the next producer (the model)."""

from __future__ import annotations

from typing import Any

from agents.chains.hops import delegated_names
from agents.engine.decide import Decision
from agents.engine.gather import TurnInput
from agents.engine.producers import Produced
from agents.models import Trigger
from agents.models.turns import SKILLS_LABEL
from agents.policies.style import restyle_actions
from agents.policies.understand import Understanding
from agents.schemas import DecisionOut
from agents.skills.produce import skill_actions

# The turns a request started, a person's or another agent's (not an idle document, not a
# question that timed out).
SKILL_TRIGGERS = frozenset(
    {Trigger.MENTION, Trigger.MESSAGE, Trigger.ASK, Trigger.ANSWER, Trigger.AGENT}
)


class SkillsProducer:
    name = "skills"

    def accepts(self, inp: TurnInput) -> bool:
        if not inp.profile.is_embedded or inp.turn.trigger not in SKILL_TRIGGERS:
            return False
        # A question about what the task says is the skill's too when no line answers it: it
        # says so, where the small model invented an answer around the goal's words.
        return bool(inp.route.skill)  # routed once per turn (``TurnInput.route``)

    def produce(self, inp: TurnInput, understanding: Understanding, decision: Decision) -> Produced:
        context: dict[str, Any] = dict(inp.context)
        produced = skill_actions(context, routed=inp.route)
        actions = restyle_actions(
            [dict(a) for a in produced.actions],
            dict(understanding.preferences),
            assumption=decision.assumption,
        )
        _hand_over(actions, request=inp.request, me=str(inp.context.get("agent", "")))
        return Produced(
            actions=DecisionOut.model_validate({"actions": actions}),
            context=context,
            producer=f"{self.name}:{produced.route.skill}",
            fields={"model_label": SKILLS_LABEL},  # the card says who wrote it: no model
        )


def _hand_over(actions: list[dict[str, Any]], *, request: str, me: str) -> None:
    """A person asked this agent to hand its work to another ("... and ask @Reviewer to check
    it"): its reply says so, which starts that agent's turn (a hop of a chain, ADR 0022)."""
    names = [n for key, n in delegated_names(request).items() if key != me.lower()]
    if not names:
        return
    ask = " ".join(f"@{name}" for name in names)
    line = f"{ask} please check this draft and say what is missing."
    # The reply that hands over is applied last: the hop starts when it is posted, so the
    # draft (the suggestion) exists by the time the other agent's turn reads it.
    reply = next((a for a in actions if a.get("kind") == "reply"), None)
    if reply is None:
        actions.append({"kind": "reply", "text": line})
        return
    actions.remove(reply)
    actions.append({**reply, "text": f"{reply.get('text', '')}\n\n{line}".strip()})
