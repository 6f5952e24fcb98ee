"""The plan producer (issue 30, ADR 0024), deterministic on every install:

* a request to split the task into steps ("@Coordinator split this into steps") makes the agent
  the task's coordinator: its reply proposes a plan, and its suggestion adds the plan section to
  the document (``agents.chains.plan``), built from the task's own checklist items (the skills'
  ``checklist_items``) and given by what each can do (``plan_steps``): each other agent a step
  its skills can do and check, the person who asked the task's own items: no invented step,
  name or date. Accepting the suggestion approves the plan
  (``agents.services.plans``); the clarification policy has already decided whether to ask.
* a step's turn (trigger ``plan``) on the embedded default: the step's text is the request, the
  skills answer it, and the agent's own check decides whether the step is done: a skill covers
  it and the answer passes the grounding check (it names the task's facts and invents none).
  The verdict goes in the context (``plan_check``); ``finish`` records it on the step.
"""

from __future__ import annotations

from typing import Any

from agents.chains import plan as plan_format
from agents.engine.decide import Decision
from agents.engine.gather import TurnInput
from agents.engine.producers import Produced
from agents.engine.producers.plan_review import review_step
from agents.models import Agent, PlanStep, Trigger
from agents.policies.understand import Understanding
from agents.schemas import DecisionOut
from agents.services.plans import reviewer_for
from agents.skills import facts_from_context, grounded, respond, without_request
from agents.skills.answers import checklist_items

PLAN_TRIGGERS = frozenset(
    {Trigger.MENTION, Trigger.MESSAGE, Trigger.ASK, Trigger.ANSWER, Trigger.AGENT}
)
NOTE = "A plan from what the task says: accept it to start, or edit the steps and assignees first."


def _request(inp: TurnInput) -> str:
    return str(inp.context.get("request") or "").strip() or next(
        (
            str(m.get("body") or "")
            for m in reversed(inp.context.get("messages", ()))
            if m.get("kind") == "human"
        ),
        "",
    )


class PlanProducer:
    name = "plan"

    def accepts(self, inp: TurnInput) -> bool:
        if inp.turn.inputs.get("review_step"):
            return True  # a reviewer's check of a step: deterministic on every install
        if inp.turn.trigger == Trigger.PLAN:
            return inp.profile.is_embedded and bool(inp.turn.inputs.get("plan_step"))
        return inp.turn.trigger in PLAN_TRIGGERS and plan_format.asks_for_plan(_request(inp))

    def produce(self, inp: TurnInput, understanding: Understanding, decision: Decision) -> Produced:
        if inp.turn.inputs.get("review_step"):
            return review_step(inp)
        if inp.turn.trigger == Trigger.PLAN:
            return self._step(inp)
        return self._plan(inp)

    def _plan(self, inp: TurnInput) -> Produced:
        context: dict[str, Any] = dict(inp.context)
        document = str(context.get("document") or "")
        if plan_format.parse(document).found:
            text = "This task already has a plan in the document: tick, edit or reassign its steps."
            return _produced([{"kind": "reply", "text": text}], context, "plan:exists")
        facts = facts_from_context(without_request(context))
        others = Agent.objects.filter(tasks=inp.turn.task_id, is_active=True).exclude(
            pk=inp.turn.agent_id
        )
        agents = [a.name for a in others.order_by("name", "id")]
        people = [str(context["requested_by"])] if context.get("requested_by") else []
        steps = plan_format.plan_steps(checklist_items(facts), agents=agents, people=people)
        if not steps:
            text = "I could not find steps in what the task says yet: tell me what has to be done."
            return _produced([{"kind": "reply", "text": text}], context, "plan:empty")
        section = plan_format.render_section(steps)
        who = sorted({w for _, w in steps if w})
        reply = (
            f"A plan of {len(steps)} steps for {facts.subject or 'this task'}, "
            f"for {', '.join(who) or 'nobody yet'}: the agents take the steps their skills can "
            "do and check, people the rest. Accept it to start; the agents then take their "
            "steps one at a time."
        )
        replace = section if not document.strip() else f"\n\n{section}"
        actions = [
            {"kind": "reply", "text": reply},
            {"kind": "suggest", "text": NOTE, "find": "", "replace": replace},
        ]
        context["plan_proposed"] = len(steps)
        return _produced(actions, context, "plan:propose")

    def _step(self, inp: TurnInput) -> Produced:
        context: dict[str, Any] = dict(inp.context)
        step = PlanStep.objects.filter(pk=inp.turn.inputs.get("plan_step")).first()
        text = step.text if step is not None else str(inp.turn.inputs.get("prompt", ""))
        number = step.index + 1 if step is not None else 0
        asked, answer, facts = respond(context, request=text)
        passed = bool(asked.skill) and grounded(answer.text, facts)
        if passed:
            why = f"own check: the {asked.skill} skill covers it and names only the task's facts"
        elif not asked.skill:
            why = "none of my skills covers this step: a person, or another agent, should do it"
        else:
            why = "my answer names something the task does not say: a person should check it"
        context["plan_check"] = {
            "step": number,
            "passed": passed,
            "why": why,
            "skill": asked.skill,
            "answer": answer.text[:4000],  # what a reviewer checks (``skills.review``)
        }
        verdict = "Done" if passed else "Not done"
        if step is not None and reviewer_for(step) is not None:
            verdict = "For the reviewer to check; my own check: " + ("passed" if passed else "not")
        reply = f"Step {number}, “{text}”:\n\n{answer.text}\n\n{verdict} ({why})."
        actions: list[dict[str, Any]] = [{"kind": "reply", "text": reply}]
        # no draft suggestion here: the draft skill rebuilds the whole document, plan lines too
        return _produced(actions, context, f"plan:step:{asked.skill or 'none'}")


def _produced(actions: list[dict[str, Any]], context: dict[str, Any], producer: str) -> Produced:
    return Produced(
        actions=DecisionOut.model_validate({"actions": actions}),
        context=context,
        producer=producer,
    )
