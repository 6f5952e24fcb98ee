"""``run_turn``: claim, decide, act, finish. What ``run_turn_job`` calls.

It is safe to call again for the same turn at any point (a redelivered job after a worker was
killed):

* claiming is a short transaction; at most one turn per agent and task is ``running``, and a
  running turn holds a lease that its worker renews while it streams (``claim``);
* the validated decision and its actions are stored before any of them is applied, so a
  redelivery never asks the model again once it has decided (``decide``); leading replies,
  notes and finish are the exception: they are applied in that same transaction and stored
  already applied;
* every other action is applied in its own transaction together with its ``applied`` mark, and
  is looked up by its idempotency key first, so no action is ever applied twice (``act``).
"""

from __future__ import annotations

from agents import llm, presence
from agents.engine.act import apply_pending, finish
from agents.engine.claim import claim_turn, out_of_time_message, seconds_left
from agents.engine.decide import decide
from agents.engine.outcome import Outcome
from agents.engine.stream import TurnBudgetExceeded, TurnCancelled
from agents.models import Trigger
from agents.review.usage import check_budget
from agents.services.questions import announce_assumption, prepare_assumption
from agents.services.turns import fail_turn
from collab.tasks.models import Document


def run_turn(*, turn_id: int) -> Outcome:
    """Run (or resume) a turn; returns what happened (``Outcome``).

    Raises ``llm.ModelError`` for failures worth a retry (the job owns the retry policy).
    """
    claim = claim_turn(turn_id)
    turn, profile = claim.turn, claim.profile
    if turn is None or profile is None:
        return claim.outcome or Outcome.MISSING
    if turn.decision is None:
        review = getattr(turn.task.workspace, "review_settings", None)  # loaded by the claim
        if review is not None and review.monthly_budget is not None:
            budget = check_budget(turn.task.workspace_id)
            if budget.blocked:  # the workspace's monthly hard stop (agents/review/usage.py)
                fail_turn(turn_id=turn_id, error=budget.message)
                return Outcome.OVER_BUDGET
    if turn.decision is None and seconds_left(turn) <= 0:  # a retry that came too late
        fail_turn(turn_id=turn_id, error=out_of_time_message())
        return Outcome.FAILED
    # Its text (not the Yjs state) for the prompt, its id for the agent's presence.
    document = Document.objects.filter(task_id=turn.task_id).only("text").first()
    presence.show(
        turn_id=turn.pk,
        agent_id=turn.agent_id,
        name=turn.agent.name,
        colour=turn.agent.colour,
        document_id=document.pk if document is not None else None,
    )
    try:
        pending: list[str] | None = None
        if turn.decision is None:
            pending = decide(turn, profile, document)
        prepare_assumption(turn=turn)  # a timed-out turn: the document before it acts (Undo)
        apply_pending(turn, pending)
        if turn.trigger == Trigger.TIMEOUT:  # only a timed-out turn has an assumption
            announce_assumption(turn_id=turn.pk)  # ... and its "I assumed X" message
    except TurnCancelled:
        return Outcome.CANCELLED
    except (llm.ModelConfigError, TurnBudgetExceeded) as exc:
        fail_turn(turn_id=turn_id, error=str(exc))
        return Outcome.FAILED
    finally:
        presence.hide(turn.pk)
    return finish(turn)
