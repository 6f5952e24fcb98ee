"""A reviewer agent's check of a plan step (issue 30, ADR 0024), on every install: the turn a
review request hop started (``inputs["review_step"]``, ``services.plans._request_review``)
does the step with the reviewer's own skills and compares the other agent's answer with it
(``agents.skills.review.check_answer``). The verdict goes in the context (``plan_review``);
``finish`` hands it to ``services.plans.step_reviewed``, which marks the step done or blocked.
The reply names the step's agent without an @, so no hop goes back (no ping-pong).
"""

from __future__ import annotations

from typing import Any

from agents.engine.gather import TurnInput
from agents.engine.producers import Produced
from agents.models import Action, ActionKind, PlanStep, Turn
from agents.schemas import DecisionOut
from agents.skills import facts_from_context, respond, without_request
from agents.skills.review import Verdict, answer_body, check_answer
from collab.tasks.models import Message


def _answer_of(step_turn_id: int | None) -> tuple[str, dict[str, Any] | None]:
    """The step's turn's replies as posted, and its own plan check."""
    if step_turn_id is None:
        return "", None
    ids = [
        (a.result or {}).get("message_id")
        for a in Action.objects.filter(
            turn_id=step_turn_id, kind=ActionKind.REPLY, status=Action.Status.APPLIED
        ).order_by("pk")
    ]
    bodies = Message.objects.filter(pk__in=[i for i in ids if i]).order_by("pk")
    reply = "\n\n".join(bodies.values_list("body", flat=True))
    context = Turn.objects.filter(pk=step_turn_id).values_list("context", flat=True).first()
    check = (context or {}).get("plan_check")
    return reply, check if isinstance(check, dict) else None


def review_step(inp: TurnInput) -> Produced:
    context: dict[str, Any] = dict(inp.context)
    step = (
        PlanStep.objects.select_related("agent")
        .filter(pk=inp.turn.inputs.get("review_step"))
        .first()
    )
    if step is None:
        verdict = Verdict(False, "that step is no longer in the plan")
        number, who, text = 0, "", ""
    else:
        number, text = step.index + 1, step.text
        who = step.agent.name if step.agent else step.assignee_name
        reply, own = _answer_of(inp.turn.parent_id)
        asked, mine, _ = respond(context, request=step.text)
        facts = facts_from_context(without_request(context))
        verdict = check_answer(
            skill=asked.skill, own_answer=mine.text, answer=answer_body(reply, own), facts=facts
        )
    context["plan_review"] = verdict.to_dict(number)
    said = "passes my check" if verdict.passed else "does not pass my check yet"
    owner = f" ({who}'s)" if who else ""
    body = f"Step {number}{owner}, “{text}”, {said}: {verdict.why}."
    actions = [{"kind": "reply", "text": body}]
    return Produced(
        actions=DecisionOut.model_validate({"actions": actions}),
        context=context,
        producer=f"plan:review:{'pass' if verdict.passed else 'missing'}",
    )
