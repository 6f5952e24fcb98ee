"""``run_turn``: the turn's stages in order. What ``run_turn_job`` calls.

    claim → gather → understand → decide → produce → apply → finish

Each stage is a plain function of its own module here with a typed value in and out (``Claim``,
``TurnInput``, ``Understanding``, ``Decision``, ``Produced``, the pending actions' keys,
``Outcome``); none reads what a later stage writes, none calls back into an earlier one.

It is safe to call again for the same turn at any point (a redelivered job after a worker was
killed):

* claiming is a short transaction; at most one turn per agent and task is ``running``, and a
  running turn holds a lease that its worker renews while it streams (``claim``, ``lease``);
* the validated decision and its actions are stored before any of them is applied, so a
  redelivery never produces again once the turn has decided (``apply.store_decision``);
  leading replies, notes and finish are the exception: they are applied in that same
  transaction and stored already applied;
* every other action is applied in its own transaction together with its ``applied`` mark, and
  is looked up by its idempotency key first, so no action is ever applied twice (``apply``).
"""

from __future__ import annotations

from agents import llm
from agents.engine.apply import apply_actions, store_produced
from agents.engine.claim import claim
from agents.engine.decide import decide
from agents.engine.finish import finish
from agents.engine.gather import gather, read_document
from agents.engine.outcome import Outcome
from agents.engine.produce import produce
from agents.engine.producers import ProducerFailed
from agents.engine.stream import TurnBudgetExceeded, TurnCancelled
from agents.engine.trace import Trace
from agents.engine.understand import understand
from agents.models import ModelProfile, Turn
from agents.outbox import presence
from agents.services.turns import fail_turn


def run_turn(*, turn_id: int) -> Outcome:
    """Run (or resume) a turn; returns what happened (``Outcome``). Each stage this delivery
    runs is timed into the turn's trace (``Turn.stages``), saved however the delivery ends.

    Raises ``llm.ModelError`` for failures worth a retry (the job owns the retry policy).
    """
    trace = Trace()
    claimed = claim(turn_id)
    turn, profile = claimed.turn, claimed.profile
    if turn is None or profile is None:
        return claimed.outcome or Outcome.MISSING
    trace.attempt = turn.attempts
    trace.lap("claim", claimed)
    try:
        return _run(turn, profile, trace)
    finally:
        trace.save(turn)


def _run(turn: Turn, profile: ModelProfile, trace: Trace) -> Outcome:
    document = read_document(turn)
    presence.show(
        turn_id=turn.pk,
        agent_id=turn.agent_id,
        name=turn.agent.name,
        colour=turn.agent.colour,
        document_id=document.pk if document is not None else None,
    )
    trace.mark()
    try:
        pending: list[str] | None = None
        if turn.decision is None:
            inp = trace.lap("gather", gather(turn, profile, document=document))
            understanding = trace.lap("understand", understand(inp))
            decision = trace.lap("decide", decide(inp, understanding))
            produced = trace.lap("produce", produce(inp, understanding, decision))
            pending = store_produced(turn, decision, produced)
            trace.lap("store", pending, summary=f"{len(pending or [])} actions left to apply")
        applied = apply_actions(turn, pending)
        trace.lap("apply", applied, summary=f"{applied} actions applied")
    except TurnCancelled:
        return Outcome.CANCELLED
    except (llm.ModelConfigError, TurnBudgetExceeded, ProducerFailed) as exc:
        fail_turn(turn_id=turn.pk, error=str(exc))
        return Outcome.FAILED
    finally:
        presence.hide(turn.pk)
    return trace.lap("finish", finish(turn))
