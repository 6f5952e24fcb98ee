"""Outside agents (issue 29): making them, their token and signing secrets, and sending them
their turns (a signed webhook, retried with backoff and jitter, or a pull).

A turn of an outside agent is produced by the program: the producer
(``agents/engine/producers/outside.py``) opens the turn's one ``Delivery`` and waits for the
program's activities (``agents/services/activities.py``). The delivery's ``webhook_id`` is the
same on every try, so the program can use it as its idempotency key.
"""

from __future__ import annotations

import json
import logging
import random
import secrets
import time
import uuid
from dataclasses import dataclass
from typing import Any

import httpx
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from agents.llm.endpoints import EndpointRefused, base_url_refusal, validate_base_url
from agents.llm.guarded_http import guarded_client
from agents.models import Agent, Delivery, OutsideAgent, OutsideSecret, Turn, TurnStatus
from agents.models.outside import outside_of
from agents.outbox import enqueue
from agents.services import a2a, webhooks
from agents.services.access import require_owner
from agents.services.agent_changes import create_agent
from collab.workspaces.models import Membership
from collab.workspaces.services import hash_token

log = logging.getLogger(__name__)

TOKEN_PREFIX = "cagt_"  # noqa: S105 - a public prefix, not a secret
ACK_TIMEOUT_SECONDS = 10.0  # the program acknowledges a webhook within this
MAX_DELIVERY_TRIES = 5
BACKOFF_CAP_SECONDS = 30.0


@dataclass(frozen=True)
class NewOutsideAgent:
    agent: Agent
    token: str  # shown once
    secret: str  # shown once


def _check_webhook_url(url: str) -> str:
    url = url.strip()
    if url:
        try:
            validate_base_url(url)
        except ValidationError as exc:
            raise ValidationError({"webhook_url": exc.messages}) from None
    return url


def _check_card_url(url: str, webhook_url: str) -> str:
    url = url.strip()
    if url and webhook_url:
        raise ValidationError(
            {"a2a_card_url": ["Give a webhook URL or an A2A agent card URL, not both."]}
        )
    if url:
        try:
            return a2a.check_card_url(url)  # the address rules, and a card really is there
        except ValidationError as exc:
            raise ValidationError({"a2a_card_url": exc.messages}) from None
    return url


def create_outside_agent(
    *,
    membership: Membership,
    name: str,
    webhook_url: str = "",
    a2a_card_url: str = "",
    **fields: Any,
) -> NewOutsideAgent:
    """An agent whose turns a program outside Collab produces: over a webhook, by pulling,
    or, with ``a2a_card_url``, as an Agent2Agent agent (docs/adr/0025; its card is fetched
    here, before anything is saved). Its token (for the activities and pull endpoints) and
    first signing secret are returned once; only the token's hash is kept, and the secret
    itself (HMAC needs it to sign)."""
    require_owner(membership)
    url = _check_webhook_url(webhook_url)
    card_url = _check_card_url(a2a_card_url, url)  # outside the transaction: it fetches
    return _create(membership=membership, name=name, url=url, card_url=card_url, **fields)


@transaction.atomic
def _create(
    *, membership: Membership, name: str, url: str, card_url: str, **fields: Any
) -> NewOutsideAgent:
    agent = create_agent(membership=membership, name=name, **fields)  # its card on open pages
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    OutsideAgent.objects.create(
        agent=agent,
        webhook_url=url,
        a2a_card_url=card_url,
        token_prefix=token[:11],
        token_hash=hash_token(token),
    )
    secret = _add_secret(agent)
    return NewOutsideAgent(agent=agent, token=token, secret=secret)


def _add_secret(agent: Agent) -> str:
    secret = webhooks.new_secret()
    OutsideSecret.objects.create(agent=agent, secret=secret, hint=secret[-6:])
    return secret


@transaction.atomic
def add_secret(*, membership: Membership, agent: Agent) -> str:
    """A new signing secret beside the active ones (rotation: add, switch the program over,
    then revoke the old one). Returned once."""
    require_owner(membership)
    if agent.workspace_id != membership.workspace_id or not is_outside(agent):
        raise OutsideAgent.DoesNotExist
    return _add_secret(agent)


@transaction.atomic
def revoke_secret(*, membership: Membership, agent: Agent, secret_id: int) -> None:
    require_owner(membership)
    active = OutsideSecret.objects.filter(
        agent=agent, agent__workspace_id=membership.workspace_id, revoked_at=None
    )
    if not active.filter(pk=secret_id).exists():
        raise OutsideSecret.DoesNotExist
    if active.count() == 1:
        raise ValidationError("Add a new secret before revoking the last active one.")
    active.filter(pk=secret_id).update(revoked_at=timezone.now())


def is_outside(agent: Agent) -> bool:
    return OutsideAgent.objects.filter(agent_id=agent.pk).exists()


def active_secrets(agent_id: int) -> list[str]:
    return list(
        OutsideSecret.objects.filter(agent_id=agent_id, revoked_at=None)
        .order_by("created_at", "id")
        .values_list("secret", flat=True)
    )


def agent_for_token(token: str) -> Agent | None:
    """The active outside agent whose token this is, else None."""
    if not token.startswith(TOKEN_PREFIX) or len(token) > 200:
        return None
    found = (
        OutsideAgent.objects.select_related("agent")
        .filter(token_hash=hash_token(token), agent__is_active=True)
        .first()
    )
    return found.agent if found is not None else None


# --- Deliveries -------------------------------------------------------------------------------


@transaction.atomic
def open_delivery(*, turn: Turn, payload: dict[str, Any]) -> Delivery:
    """The turn's one delivery (a turn taken over after its worker died keeps the first one:
    the program is not notified twice). The waiting producer sends its webhook (``send_webhook``,
    agents/engine/producers/outside.py); without a webhook URL the program pulls it
    (``take_pending``)."""
    delivery, _ = Delivery.objects.get_or_create(
        turn=turn, defaults={"webhook_id": f"msg_{uuid.uuid4().hex}", "payload": payload}
    )
    return delivery


def message_body(delivery: Delivery) -> bytes:
    """What is signed and sent: the payload with the delivery's id, as compact JSON."""
    body = {"webhook_id": delivery.webhook_id, **delivery.payload}
    return json.dumps(body, separators=(",", ":"), sort_keys=True).encode()


def backoff_seconds(tries: int) -> float:
    """Exponential backoff with full jitter: a random wait in [0, min(cap, 2**tries)]."""
    return random.uniform(0, min(BACKOFF_CAP_SECONDS, 2.0**tries))


@dataclass(frozen=True)
class Sent:
    """What one try of a webhook came to: done (acknowledged, given up, or nothing to do), or
    a retry after ``retry_in`` seconds."""

    done: bool
    retry_in: float = 0.0
    error: str = ""


def send_webhook(*, delivery_id: int, tries: int = 0) -> Sent:
    """One try of a delivery's webhook (``tries``: how many came before). A 2xx answer within
    ``ACK_TIMEOUT_SECONDS`` acknowledges it; after ``MAX_DELIVERY_TRIES`` tries the delivery
    fails and the waiting turn fails with a message in the chat (the producer says it)."""
    delivery = Delivery.objects.select_related("turn", "turn__agent__outside").get(pk=delivery_id)
    turn = delivery.turn
    if delivery.status != Delivery.Status.PENDING or turn.status != TurnStatus.RUNNING:
        return Sent(done=True)
    row = outside_of(turn.agent)
    url = row.webhook_url if row is not None else ""
    error = base_url_refusal(url) if url else "The agent has no webhook URL."
    if error is None:
        body = message_body(delivery)
        headers = webhooks.signed_headers(
            active_secrets(turn.agent_id),
            msg_id=delivery.webhook_id,
            timestamp=int(time.time()),
            body=body,
        )
        # Each address connected to is checked as for model servers (agents/llm/guarded_http).
        error = _post(url, body, headers)
        if error is None:
            Delivery.objects.filter(pk=delivery.pk, status=Delivery.Status.PENDING).update(
                status=Delivery.Status.DELIVERED,
                attempts=tries + 1,
                delivered_at=timezone.now(),
                error="",
            )
            return Sent(done=True)
    log.warning("webhook %s, try %d: %s", delivery.webhook_id, tries + 1, error)
    given_up = tries + 1 >= MAX_DELIVERY_TRIES
    Delivery.objects.filter(pk=delivery.pk, status=Delivery.Status.PENDING).update(
        attempts=tries + 1,
        error=error[:500],
        **({"status": Delivery.Status.FAILED} if given_up else {}),
    )
    return Sent(done=given_up, retry_in=0.0 if given_up else backoff_seconds(tries), error=error)


# --- Stop notices ------------------------------------------------------------------------------


def stop_body(delivery: Delivery) -> dict[str, Any]:
    """The stop notice: the turn a person stopped, and who (``turn.error``: "Stopped by …")."""
    turn = delivery.turn
    return {
        "webhook_id": delivery.stop_id,
        "type": "turn.cancelled",
        "turn": {"id": turn.pk, "requested_webhook_id": delivery.webhook_id},
        "reason": turn.error,
        "note": "A person pressed Stop: stop working on this turn. Later activities for it "
        "answer 409.",
    }


def notify_stopped(turn: Turn) -> None:
    """Inside ``cancel_turn``'s transaction: tell the program a person stopped its turn. A
    webhook agent is sent a signed ``turn.cancelled`` notice on commit (if it was sent the
    turn); a pull agent finds it on its next poll (``take_pending``)."""
    delivery = (
        Delivery.objects.filter(turn_id=turn.pk, stop_sent_at=None)
        .exclude(status=Delivery.Status.FAILED)
        .exclude(status=Delivery.Status.PENDING, attempts=0)  # never sent: nothing to stop
        .values_list("pk", flat=True)
        .first()
    )
    hooked = OutsideAgent.objects.filter(agent_id=turn.agent_id).exclude(webhook_url="")
    if delivery is not None and hooked.exists():
        enqueue.on_commit(enqueue.DELIVER_STOP, delivery)


def send_stop(*, delivery_id: int, tries: int = 0) -> Sent:
    """One try of a stop notice, signed as the turn's webhook was; done once acknowledged (2xx
    within ``ACK_TIMEOUT_SECONDS``) or after ``MAX_DELIVERY_TRIES`` tries (the program then
    learns of the Stop from the 409 on its next activity)."""
    delivery = Delivery.objects.select_related("turn", "turn__agent__outside").get(pk=delivery_id)
    if delivery.stop_sent_at is not None or delivery.turn.status != TurnStatus.CANCELLED:
        return Sent(done=True)
    row = outside_of(delivery.turn.agent)
    url = row.webhook_url if row is not None else ""
    error = base_url_refusal(url) if url else "The agent has no webhook URL."
    if error is None:
        body = json.dumps(stop_body(delivery), separators=(",", ":"), sort_keys=True).encode()
        headers = webhooks.signed_headers(
            active_secrets(delivery.turn.agent_id),
            msg_id=delivery.stop_id,
            timestamp=int(time.time()),
            body=body,
        )
        error = _post(url, body, headers)
        if error is None:
            Delivery.objects.filter(pk=delivery.pk).update(stop_sent_at=timezone.now())
            return Sent(done=True)
    log.warning("stop notice %s, try %d: %s", delivery.stop_id, tries + 1, error)
    if tries + 1 >= MAX_DELIVERY_TRIES:
        return Sent(done=True, error=error)
    return Sent(done=False, retry_in=backoff_seconds(tries), error=error)


def _post(url: str, body: bytes, headers: dict[str, str]) -> str | None:
    """POST a signed body; None when acknowledged, else why not."""
    try:
        with guarded_client(timeout=ACK_TIMEOUT_SECONDS) as client:
            answer = client.post(url, content=body, headers=headers)
    except EndpointRefused as exc:
        return str(exc)
    except httpx.TimeoutException:
        return f"no acknowledgement within {ACK_TIMEOUT_SECONDS:g} s"
    except httpx.HTTPError as exc:
        return f"{type(exc).__name__}: {exc}"
    return None if answer.is_success else f"it answered HTTP {answer.status_code}"


def _take_stops(agent: Agent) -> list[dict[str, Any]]:
    """A pull agent's stop notices for turns it took and a person then stopped, once each."""
    stopped = Delivery.objects.select_related("turn").filter(
        turn__agent=agent,
        turn__status=TurnStatus.CANCELLED,
        status=Delivery.Status.DELIVERED,
        stop_sent_at=None,
    )
    taken = []
    for delivery in stopped.order_by("id"):
        updated = Delivery.objects.filter(pk=delivery.pk, stop_sent_at=None).update(
            stop_sent_at=timezone.now()
        )
        if updated:
            taken.append(stop_body(delivery))
    return taken


def take_pending(agent: Agent) -> list[dict[str, Any]]:
    """The agent's turns not yet acknowledged, as the webhook's bodies (``webhook_id``
    included), then the stop notices of turns it took that a person stopped since (as the stop
    webhook's bodies); taking them acknowledges them (a pull is its own acknowledgement)."""
    pending = list(
        Delivery.objects.filter(
            turn__agent=agent, turn__status=TurnStatus.RUNNING, status=Delivery.Status.PENDING
        ).order_by("id")
    )
    taken = []
    for delivery in pending:
        updated = Delivery.objects.filter(pk=delivery.pk, status=Delivery.Status.PENDING).update(
            status=Delivery.Status.DELIVERED, delivered_at=timezone.now()
        )
        if updated:  # two pulls at once: each turn goes to one of them
            taken.append(json.loads(message_body(delivery)))
    if OutsideAgent.objects.filter(agent_id=agent.pk, webhook_url="").exists():
        taken += _take_stops(agent)
    return taken
