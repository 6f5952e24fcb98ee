"""A reviewer agent's check of another agent's draft (issue 30), on the embedded default: the
turn a review request hop started ("@Reviewer please check this draft") reads the draft of the
turn that asked (its suggestion while nobody has accepted it, the document as it would be once
accepted; else the document as it is) and checks it with ``agents.skills.draft_review``. The
reply says what is missing and names the writer without an @ (no hop goes back); a suggestion
adds what is missing, for a person to accept or reject. A plan step's review is the plan
producer's (``inputs["review_step"]``), an outside agent's its own producer's.
"""

from __future__ import annotations

from typing import Any

from agents.chains.hops import REVIEW
from agents.engine.decide import Decision
from agents.engine.gather import TurnInput
from agents.engine.producers import Produced
from agents.models import Suggestion, Trigger
from agents.models.turns import SKILLS_LABEL
from agents.policies.understand import Understanding
from agents.schemas import DecisionOut
from agents.services.edits import changed_text
from agents.skills import facts_from_context, without_request
from agents.skills.draft_review import review_draft
from agents.skills.produce import answer_actions

NOTE = "What the review found missing in the draft: accept or reject it."


def draft_of(inp: TurnInput) -> tuple[str, int | None]:
    """The draft to check: the document as the asking turn's newest open suggestion would make
    it (its id too), else the document as it is (None)."""
    document = inp.document.text if inp.document else ""
    if inp.turn.parent_id is None:
        return document, None
    proposed = (
        Suggestion.objects.filter(turn_id=inp.turn.parent_id, status=Suggestion.Status.PROPOSED)
        .order_by("-pk")
        .first()
    )
    if proposed is None:
        return document, None
    after = changed_text(document, proposed.find, proposed.replace)
    return (proposed.replace if after is None else after), proposed.pk


class DraftReviewProducer:
    name = "draft_review"

    def accepts(self, inp: TurnInput) -> bool:
        turn = inp.turn
        return (
            inp.profile.is_embedded
            and turn.trigger == Trigger.AGENT
            and turn.hop_kind == REVIEW
            and turn.parent_id is not None
            and not turn.inputs.get("review_step")
        )

    def produce(self, inp: TurnInput, understanding: Understanding, decision: Decision) -> Produced:
        context: dict[str, Any] = dict(inp.context)
        draft, suggestion_id = draft_of(inp)
        facts = facts_from_context(without_request(context))
        author = str(context.get("asked_by") or "")
        answer = review_draft(draft, facts, author=author, pending=suggestion_id is not None)
        context["draft_review"] = {"suggestion_id": suggestion_id, "draft_chars": len(draft)}
        return Produced(
            actions=DecisionOut.model_validate({"actions": answer_actions(answer, NOTE)}),
            context=context,
            producer=f"{self.name}:{'suggest' if answer.suggestion else 'reply'}",
            fields={"model_label": SKILLS_LABEL},  # the card says who wrote it: no model
        )
