"""The A2A tasks turns of A2A agents sent their messages to (``RemoteTask``, docs/adr/0025):
which task an answer continues, and cancelling a task that waits for a person's answer when
a person presses Stop.

While a turn runs, its producer (``agents/engine/producers/a2a.py``) cancels its own task on a
Stop. Once the agent asked a question (the task is ``input-required``) the turn is waiting for
a person and no producer runs: ``cancel_turn`` then has ``cancel_waiting_task`` sent as a job on
commit (``notify_stopped``), so the A2A call is made outside the request and its transaction.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from agents.models import Question, RemoteTask, Turn, TurnStatus
from agents.models.outside import OutsideAgent
from agents.outbox import enqueue
from agents.services import a2a

log = logging.getLogger(__name__)

INPUT_REQUIRED = "input-required"
MAX_CANCEL_TRIES = 5


def continued_task(turn: Turn) -> RemoteTask | None:
    """The A2A task waiting for the answer this turn carries (its question's turn's task)."""
    question_id = turn.inputs.get("question_id")
    if not question_id:
        return None
    asked = Question.objects.filter(pk=question_id).values_list("turn_id", flat=True).first()
    if asked is None:
        return None
    return RemoteTask.objects.filter(turn_id=asked, state=INPUT_REQUIRED).first()


def waiting_task(turn: Turn) -> RemoteTask | None:
    """The A2A task of ``turn`` that waits for a person: its own task once its agent asked,
    or, for a turn carrying an answer that was not sent yet, the task it would continue."""
    own = RemoteTask.objects.filter(turn=turn).first()
    if own is not None and own.task_id:
        return own if own.state == INPUT_REQUIRED else None
    return continued_task(turn)


def notify_stopped(turn: Turn) -> None:
    """Inside ``cancel_turn``'s transaction: an A2A agent's task that waits for an answer is
    canceled on commit (a running turn's producer cancels its own)."""
    a2a_agent = OutsideAgent.objects.filter(agent_id=turn.agent_id).exclude(a2a_card_url="")
    if a2a_agent.exists() and waiting_task(turn) is not None:
        enqueue.on_commit(enqueue.CANCEL_A2A_TASK, turn.pk)


@dataclass(frozen=True)
class Cancelled:
    """What one try came to: done (canceled, ended already, or nothing to do) or try again."""

    done: bool
    error: str = ""


def cancel_waiting_task(*, turn_id: int) -> Cancelled:
    """One try of cancelling the A2A task a stopped turn left waiting for input (the SDK's
    ``CancelTask``). Idempotent: a task canceled already, answered since, or never sent is
    left alone; an agent that says the task has ended is taken at its word."""
    turn = Turn.objects.filter(pk=turn_id).first()
    if turn is None or turn.status != TurnStatus.CANCELLED:
        return Cancelled(done=True)
    remote = waiting_task(turn)
    row = OutsideAgent.objects.filter(agent_id=turn.agent_id).first()
    if remote is None or not remote.task_id or row is None or not row.a2a_card_url:
        return Cancelled(done=True)
    conversation = a2a.Conversation(row.a2a_card_url)
    try:
        conversation.cancel(remote.task_id)
    except a2a.TaskEnded as exc:
        log.info("A2A task %s of turn %s had ended: %s", remote.task_id, turn_id, exc)
        RemoteTask.objects.filter(pk=remote.pk, state=INPUT_REQUIRED).update(state="ended")
        return Cancelled(done=True, error=str(exc))
    except a2a.A2AFailure as exc:
        log.warning("could not cancel A2A task %s of turn %s: %s", remote.task_id, turn_id, exc)
        return Cancelled(done=False, error=str(exc))
    finally:
        conversation.close()
    RemoteTask.objects.filter(pk=remote.pk, state=INPUT_REQUIRED).update(state="canceled")
    return Cancelled(done=True)
