"""The A2A producer (issue 29, docs/adr/0025): the turn's work is done by an agent that speaks
the Agent2Agent protocol, reached at the agent card its Collab agent was made with.

The turn is sent as one A2A message (``agents.services.a2a``, the official SDK's client): a
text part with the request, a data part with the same payload outside agents get (the turn's
context as data, never instructions, and only the requester's own memory). The task's states
map onto the turn while the producer waits, holding the lease as the outside producer does:

* ``submitted``/``working``: the status messages' and artifacts' text is streamed live;
* ``input-required``: its status message becomes the turn's question; the person's answer
  starts a turn whose message continues the same A2A task (``RemoteTask``);
* ``completed``: each artifact's text parts become a reply; a data part
  ``{"type": "suggestion"|"edit"|"note", "text", "find", "replace"}`` becomes that action;
* ``failed``, ``rejected``, ``auth-required``, ``canceled`` by the agent: the turn fails with
  the agent's words in the chat;
* a person's Stop cancels the A2A task through the SDK (``TurnCancelled``).
"""

from __future__ import annotations

import contextlib
import queue
import time
import uuid
from typing import Any

from django.utils import timezone
from pydantic import ValidationError as PydanticError

from agents.engine.decide import Decision
from agents.engine.gather import TurnInput
from agents.engine.lease import lease_expiry, seconds_left, time_budget_seconds
from agents.engine.producers import Produced, ProducerFailed
from agents.engine.producers.outside import turn_payload
from agents.engine.stream import IDLE_TICK_SECONDS, TurnCancelled
from agents.models import RemoteTask, Turn, TurnStatus
from agents.models.outside import outside_of
from agents.outbox import events, presence
from agents.policies.understand import Understanding
from agents.schemas import DecisionOut
from agents.services import a2a
from agents.services.actions import validate_action
from agents.services.remote_tasks import continued_task

DATA_KINDS = {"suggestion": "suggest", "edit": "edit", "note": "note"}


def card_url_of(inp: TurnInput) -> str:
    row = outside_of(inp.turn.agent)
    return row.a2a_card_url if row is not None else ""


def message_of(inp: TurnInput, decision: Decision) -> tuple[str, dict[str, Any]]:
    """The message's text part (the request, or the person's answer) and its data part."""
    data = turn_payload(inp, decision)
    data["turn"].pop("activities_url", None)  # A2A agents answer over A2A
    data["type"] = "collab.turn"
    answers = data.get("answers") or []
    text = answers[-1]["answer"] if answers and inp.turn.inputs.get("question_id") else ""
    messages = data.get("messages") or [{}]
    text = text or str(data.get("request") or messages[-1].get("body") or "")
    return (text.strip() or "(the turn is in the data part)"), data


def action_of_data(turn: Turn, data: Any) -> dict[str, Any] | None:
    """The action a data part stands for (``None``: a data part that is no Collab action);
    ``ProducerFailed`` for one that claims to be an action and is not a valid one."""
    if not isinstance(data, dict) or data.get("type") not in DATA_KINDS:
        return None
    kind = DATA_KINDS[str(data["type"])]
    fields = {k: data.get(k, "") for k in ("text", "find", "replace")}
    if not all(isinstance(v, str) for v in fields.values()):
        raise ProducerFailed(f"a {data['type']} data part's text, find and replace must be text")
    action = {"kind": kind, "text": fields["text"]}
    if kind in ("suggest", "edit"):
        if kind == "edit" and turn.agent.mode != "may_edit":
            raise ProducerFailed("it sent a direct edit, but it may only suggest")
        action.update(find=fields["find"], replace=fields["replace"])
    problem = validate_action(turn=turn, kind=kind, payload=action)
    if problem:
        raise ProducerFailed(f"its {data['type']} was refused: {problem}")
    return action


def actions_of_artifacts(turn: Turn, artifacts: dict[str, list[dict[str, Any]]]) -> list[Any]:
    actions: list[dict[str, Any]] = []
    for parts in artifacts.values():
        text = "\n".join(p["text"] for p in parts if "text" in p).strip()
        if text:
            actions.append({"kind": "reply", "text": text})
        for part in parts:
            if "data" in part and (action := action_of_data(turn, part["data"])):
                actions.append(action)
    return actions


class A2AProducer:
    name = "a2a"

    def accepts(self, inp: TurnInput) -> bool:
        return bool(card_url_of(inp))

    def produce(self, inp: TurnInput, understanding: Understanding, decision: Decision) -> Produced:
        turn, url = inp.turn, card_url_of(inp)
        name = f"{turn.agent.name} (an A2A agent)"
        conversation = a2a.Conversation(url)
        try:
            remote, created = RemoteTask.objects.get_or_create(
                turn=turn, defaults={"message_id": f"msg_{uuid.uuid4().hex}"}
            )
            if not created and remote.task_id:  # taken over: follow it, never send it twice
                conversation.follow(remote.task_id)
            else:
                text, data = message_of(inp, decision)
                earlier = continued_task(turn)
                conversation.send(
                    message_id=remote.message_id,
                    text=text,
                    data=data,
                    task_id=earlier.task_id if earlier else "",
                    context_id=earlier.context_id if earlier else "",
                )
                if earlier is not None:  # the same task now: a Stop before its first event
                    RemoteTask.objects.filter(pk=earlier.pk).update(state="answered")
                    remote.task_id, remote.context_id = earlier.task_id, earlier.context_id
                    RemoteTask.objects.filter(pk=remote.pk).update(
                        task_id=remote.task_id, context_id=remote.context_id
                    )
            try:
                actions = _wait(turn, remote, conversation)
            except ProducerFailed as exc:
                raise ProducerFailed(f"{name} {exc}.") from None
        finally:
            conversation.close()
        try:
            decided = DecisionOut.model_validate({"actions": actions or [{"kind": "finish"}]})
        except PydanticError as exc:
            problem = exc.errors()[0]["msg"]
            raise ProducerFailed(f"{name} sent a malformed answer: {problem}.") from None
        row = outside_of(turn.agent)
        return Produced(
            actions=decided,
            context={**inp.context, "a2a": {"message_id": remote.message_id}},
            producer=self.name,
            fields=row.turn_fields() if row is not None else {},
        )


def _wait(turn: Turn, remote: RemoteTask, conversation: a2a.Conversation) -> list[Any]:
    """Read the agent's events until its task ends; the actions it came to."""
    deadline = time.monotonic() + seconds_left(turn)
    artifacts: dict[str, list[dict[str, Any]]] = {}
    streamed = ""
    while True:
        event: a2a.Event | a2a.A2AFailure | bool | None
        try:
            event = conversation.events.get(timeout=IDLE_TICK_SECONDS)
        except queue.Empty:
            event = False  # nothing new: renew the lease and look for a Stop
        fields: dict[str, Any] = {"lease_expires_at": lease_expiry()}
        chunk = ""
        if isinstance(event, a2a.Event):
            if event.task_id and (event.task_id, event.state) != (remote.task_id, remote.state):
                remote.task_id, remote.context_id = event.task_id, event.context_id
                remote.state = event.state or remote.state
                RemoteTask.objects.filter(pk=remote.pk).update(
                    task_id=remote.task_id, context_id=remote.context_id, state=remote.state
                )
            if event.kind in ("artifact", "message"):
                key = event.artifact_id or f"m{len(artifacts)}"
                kept = artifacts.setdefault(key, []) if event.append else []
                artifacts[key] = kept + event.parts
                chunk = "\n".join(p["text"] for p in event.parts if "text" in p)
            elif event.state in a2a.WORKING:
                chunk = event.text
        if chunk:
            streamed = f"{streamed}\n{chunk}".strip()
            fields["stream_text"] = streamed
            if not turn.first_token_at:
                turn.first_token_at = fields["first_token_at"] = timezone.now()
        if not Turn.objects.filter(pk=turn.pk, status=TurnStatus.RUNNING).update(**fields):
            if remote.task_id and remote.state not in a2a.ENDED:
                try:
                    conversation.cancel(remote.task_id)
                    RemoteTask.objects.filter(pk=remote.pk).update(state="canceled")
                except a2a.A2AFailure:
                    pass  # the turn is stopped in Collab all the same
            raise TurnCancelled
        presence.renew(turn.pk)
        if chunk:
            events.stream(turn, streamed, chunk)
        if isinstance(event, a2a.A2AFailure):
            raise ProducerFailed(f"could not be reached or answered nonsense: {event}")
        if event is None:
            if artifacts and remote.state in ("", "completed"):  # a direct message reply
                return actions_of_artifacts(turn, artifacts)
            raise ProducerFailed("ended its stream before its task completed")
        if isinstance(event, a2a.Event) and event.kind == "status":
            ended = _ended(turn, event, artifacts)
            if ended is not None:
                return ended
        if time.monotonic() >= deadline:
            if remote.task_id:
                with contextlib.suppress(a2a.A2AFailure):
                    conversation.cancel(remote.task_id)
            raise ProducerFailed(
                f"stopped answering: its task did not end within the turn's "
                f"{time_budget_seconds()} s (AGENTS_TURN_TIME_BUDGET_SECONDS)"
            )


def _ended(
    turn: Turn, event: a2a.Event, artifacts: dict[str, list[dict[str, Any]]]
) -> list[Any] | None:
    said = event.text.strip()
    if event.state == "completed":
        return actions_of_artifacts(turn, artifacts) + (
            [{"kind": "reply", "text": said}] if said and not artifacts else []
        )
    if event.state == "input-required":
        if not said:
            raise ProducerFailed("asked for input without saying what it needs")
        return [*actions_of_artifacts(turn, artifacts), {"kind": "ask", "text": said}]
    if event.state in ("failed", "rejected"):
        raise ProducerFailed(f"reported that its task {event.state}: {said or 'no reason given'}")
    if event.state == "canceled":
        raise ProducerFailed(f"canceled its task: {said or 'no reason given'}")
    if event.state == "auth-required":
        raise ProducerFailed("needs authentication, which Collab does not give A2A agents yet")
    return None
