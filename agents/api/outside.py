"""Outside agents (issue 29, docs/adr/0023): making one and its signing secrets (owners, with
their personal token), and what the outside program calls with its agent's token or a Standard
Webhooks signature:

- ``POST /api/outside/turns/{turn_id}/activities``: a typed activity for its turn;
- ``GET /api/outside/turns?wait=20``: its pending turns (pull, for programs behind a firewall),
  each the webhook's body.
"""

from __future__ import annotations

import time
from typing import Any

from django.http import HttpRequest
from ninja import Field, Query, Router, Schema, Status
from ninja.errors import HttpError
from ninja.security import HttpBearer

from agents import selectors
from agents.models import Agent, AgentMode, OutsideSecret, Turn
from agents.models.outside import outside_of
from agents.services import activities, outside, webhooks
from collab.api.auth import current_user
from collab.api.schemas import BadRequest, Error, PathId, StoredText, body_config
from collab.workspaces.selectors import get_membership

workspace_router = Router(tags=["outside agents"])
router = Router(tags=["outside agents"])

WRITE = {400: BadRequest, 401: Error, 403: Error, 404: Error}
PULL_WAIT_MAX = 25  # seconds a pull may wait for a turn
PULL_TICK = 0.5


# --- Auth: the agent's token, or a signature with one of its secrets --------------------------


def _agent_of_bearer(request: HttpRequest) -> Agent | None:
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token:
        return None
    return outside.agent_for_token(token.strip())


class AgentToken(HttpBearer):
    """``Authorization: Bearer <the agent's token>`` (shown once, when the agent was made)."""

    def authenticate(self, request: HttpRequest, token: str) -> Agent | None:
        return outside.agent_for_token(token)


class AgentTokenOrSignature(HttpBearer):
    """The agent's token, or Standard Webhooks headers signed with one of the agent of the
    turn in the path's active secrets (timestamp within 5 minutes). A refusal is logged."""

    def authenticate(self, request: HttpRequest, token: str) -> Agent | None:
        return outside.agent_for_token(token)

    def __call__(self, request: HttpRequest) -> Agent | None:
        # auth runs before the path is validated: "0.25" or a huge id is no turn (then 404/422)
        raw = str((request.resolver_match.kwargs if request.resolver_match else {}).get("turn_id"))
        turn_id = int(raw) if raw.isdigit() and int(raw) < 2**63 else 0
        if "authorization" in request.headers:
            agent = _agent_of_bearer(request)
            if agent is None:
                activities.refuse_unauthenticated(turn_id=turn_id, reason="bad agent token")
            return agent
        turn = Turn.objects.filter(pk=turn_id).only("agent_id").first()
        keys = outside.active_secrets(turn.agent_id) if turn is not None else []
        try:
            webhooks.verify(keys, headers=dict(request.headers), body=request.body)
        except webhooks.SignatureRefused as exc:
            activities.refuse_unauthenticated(turn_id=turn_id, reason=str(exc))
            raise HttpError(401, f"Signature refused: {exc}") from None
        assert turn is not None  # a signature verified with its secrets
        return Agent.objects.filter(pk=turn.agent_id, is_active=True).first()


def _agent(request: HttpRequest) -> Agent:
    agent = getattr(request, "auth", None)
    if not isinstance(agent, Agent):  # pragma: no cover - auth runs before every operation
        raise TypeError("Outside-agent operation reached without an agent.")
    return agent


# --- Owners: making outside agents and rotating their secrets ---------------------------------


class OutsideAgentIn(Schema):
    model_config = body_config(
        {
            "name": "Scout",
            "webhook_url": "https://agents.example.com/collab",
            "mode": "suggest_only",
        }
    )

    name: StoredText = Field(max_length=32, description="Letters, digits, - and _.")
    webhook_url: str = Field(
        "", max_length=500, description="Where turns are sent; empty: the program pulls them."
    )
    a2a_card_url: str = Field(
        "",
        max_length=500,
        description=(
            "An Agent2Agent agent's card URL (e.g. `https://agents.example.com/.well-known/"
            "agent-card.json`): its turns are sent as A2A messages (docs/adr/0025). Fetched "
            "when the agent is made: 400 when no card is there."
        ),
    )
    mode: AgentMode = AgentMode.SUGGEST_ONLY
    instructions: StoredText = Field("", max_length=4000)


class OutsideAgentOut(Schema):
    id: int
    name: str
    webhook_url: str
    a2a_card_url: str
    token: str = Field(description="The agent's token: shown once, only its hash is kept.")
    secret: str = Field(description="The signing secret `whsec_…`: shown once.")
    secret_id: int


class SecretOut(Schema):
    id: int
    secret: str = Field(description="Shown once.")


@workspace_router.post(
    "/{workspace_id}/outside-agents",
    response={201: OutsideAgentOut, **WRITE},
    summary="Create an outside agent: its token and signing secret are shown once (owners)",
)
def create_outside_agent(
    request: HttpRequest, workspace_id: PathId, payload: OutsideAgentIn
) -> Status[dict[str, Any]]:
    membership = get_membership(current_user(request), workspace_id)
    made = outside.create_outside_agent(membership=membership, **payload.model_dump())
    secret = OutsideSecret.objects.filter(agent=made.agent).values_list("pk", flat=True).first()
    return Status(
        201,
        {
            "id": made.agent.pk,
            "name": made.agent.name,
            "webhook_url": (row.webhook_url if (row := outside_of(made.agent)) else ""),
            "a2a_card_url": row.a2a_card_url if row else "",
            "token": made.token,
            "secret": made.secret,
            "secret_id": secret,
        },
    )


@workspace_router.post(
    "/{workspace_id}/outside-agents/{agent_id}/secrets",
    response={201: SecretOut, **WRITE},
    summary="Add a signing secret beside the active ones, to rotate without downtime (owners)",
)
def add_secret(
    request: HttpRequest, workspace_id: PathId, agent_id: PathId
) -> Status[dict[str, Any]]:
    membership = get_membership(current_user(request), workspace_id)
    agent = selectors.get_workspace_agent(membership, agent_id)
    try:
        secret = outside.add_secret(membership=membership, agent=agent)
    except outside.OutsideAgent.DoesNotExist:
        raise HttpError(404, "Not found.") from None
    row = OutsideSecret.objects.filter(agent=agent).order_by("-id").values_list("pk", flat=True)
    return Status(201, {"id": row.first(), "secret": secret})


@workspace_router.delete(
    "/{workspace_id}/outside-agents/{agent_id}/secrets/{secret_id}",
    response={204: None, **WRITE},
    summary="Revoke a signing secret: it signs and verifies nothing more (owners)",
)
def revoke_secret(
    request: HttpRequest, workspace_id: PathId, agent_id: PathId, secret_id: PathId
) -> Status[None]:
    membership = get_membership(current_user(request), workspace_id)
    agent = selectors.get_workspace_agent(membership, agent_id)
    try:
        outside.revoke_secret(membership=membership, agent=agent, secret_id=secret_id)
    except OutsideSecret.DoesNotExist:
        raise HttpError(404, "Not found.") from None
    return Status(204, None)


# --- The program: activities and pull ---------------------------------------------------------


class ActivityIn(Schema):
    model_config = body_config({"type": "reply", "text": "Here is a first plan."})

    type: str = Field(
        max_length=20,
        description=(
            "`reply`, `reply_chunk` (streamed; the chunks make one reply), `question`, "
            "`suggestion`, `edit` (agents that may edit), `note`, `finish`, `error`."
        ),
    )
    text: str = Field("", description="The reply, question, note or error; a change's reason.")
    find: str = Field("", description="suggestion/edit: exact document text; empty appends.")
    replace: str = Field("", description="suggestion/edit: the new text.")


class ActivityOut(Schema):
    id: int
    activity_id: str = Field(description="Its webhook-id: the idempotency key.")
    type: str
    turn_id: int


class PullQuery(Schema):
    wait: int = Field(20, ge=0, le=PULL_WAIT_MAX, description="Seconds to wait for a turn.")


class PullOut(Schema):
    turns: list[dict[str, Any]] = Field(description="Each the webhook's JSON body.")


@router.post(
    "/turns/{turn_id}/activities",
    auth=AgentTokenOrSignature(),
    response={202: ActivityOut, 400: BadRequest, 401: Error, 403: Error, 404: Error, 409: Error},
    summary="Post an activity to the agent's turn (the agent's token or a signature)",
    description=(
        "Headers: `webhook-id` (the activity's id, never reused; a replay answers 409) and, "
        "without the agent's token, `webhook-timestamp` and `webhook-signature`. 409 once the "
        "turn was stopped or has ended: obey it."
    ),
)
def post_activity(
    request: HttpRequest, turn_id: PathId, payload: ActivityIn
) -> Status[dict[str, Any]]:
    agent = _agent(request)
    activity_id = request.headers.get("webhook-id", "").strip()
    if not activity_id or len(activity_id) > 100:
        raise HttpError(400, "Send the activity's id (1 to 100 characters) as webhook-id.")
    try:
        activity = activities.record_activity(
            agent=agent,
            turn_id=turn_id,
            activity_id=activity_id,
            kind=payload.type,
            payload=payload.model_dump(exclude={"type"}),
        )
    except Turn.DoesNotExist:
        raise HttpError(404, "Not found.") from None
    return Status(
        202,
        {"id": activity.pk, "activity_id": activity_id, "type": activity.kind, "turn_id": turn_id},
    )


@router.get(
    "/turns",
    auth=AgentToken(),
    response={200: PullOut, 400: BadRequest, 401: Error},
    summary="Pull the agent's pending turns, waiting up to `wait` seconds (the agent's token)",
)
def pull_turns(request: HttpRequest, query: Query[PullQuery]) -> dict[str, Any]:
    agent = _agent(request)
    deadline = time.monotonic() + query.wait
    while True:
        taken = outside.take_pending(agent)
        if taken or time.monotonic() >= deadline:
            return {"turns": taken}
        time.sleep(PULL_TICK)
