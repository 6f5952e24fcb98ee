"""Standard Webhooks signatures (https://www.standardwebhooks.com), through the scheme's own
``standardwebhooks`` package: headers ``webhook-id``, ``webhook-timestamp`` and
``webhook-signature`` (``v1,<base64 HMAC-SHA256 of "id.timestamp.body">``, one per active
secret, separated by spaces, so that a secret can be rotated without downtime); secrets are
``whsec_<base64>``; a timestamp more than five minutes away from now is refused.
"""

from __future__ import annotations

import base64
import secrets
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime

from standardwebhooks.webhooks import Webhook, WebhookVerificationError

SECRET_PREFIX = "whsec_"  # noqa: S105 - the scheme's public prefix, not a secret
SECRET_BYTES = 32
TOLERANCE_SECONDS = 5 * 60  # the scheme's (and the package's) tolerance


class SignatureRefused(Exception):
    """A request whose signature headers do not verify; ``str(exc)`` says why."""


def new_secret() -> str:
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode()


def sign(secret: str, *, msg_id: str, timestamp: int, body: bytes) -> str:
    """One ``v1,<base64>`` signature of ``body`` under ``secret``."""
    moment = datetime.fromtimestamp(timestamp, tz=UTC)
    return Webhook(secret).sign(msg_id=msg_id, timestamp=moment, data=body)


def signed_headers(
    active_secrets: Iterable[str], *, msg_id: str, timestamp: int, body: bytes
) -> dict[str, str]:
    """The three headers of a delivery, signed with every active secret."""
    signatures = " ".join(
        sign(secret, msg_id=msg_id, timestamp=timestamp, body=body) for secret in active_secrets
    )
    if not signatures:
        raise ValueError("No active secret to sign with.")
    return {
        "webhook-id": msg_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": signatures,
        "content-type": "application/json",
    }


def verify(active_secrets: Iterable[str], *, headers: Mapping[str, str], body: bytes) -> str:
    """The ``webhook-id`` of a request signed with one of ``active_secrets``; else
    ``SignatureRefused`` saying why (missing headers, stale timestamp, no matching signature)."""
    lowered = {k.lower(): v for k, v in headers.items()}
    wanted = ("webhook-id", "webhook-timestamp", "webhook-signature")
    if not all(lowered.get(name) for name in wanted):
        raise SignatureRefused("Missing webhook-id, webhook-timestamp or webhook-signature.")
    reason = "No matching signature."
    for secret in active_secrets:
        try:
            Webhook(secret).verify(body, {k: lowered[k] for k in wanted}, json_parse=False)
        except WebhookVerificationError as exc:
            said = str(exc)
            if "timestamp" in said.lower() or "header" in said.lower():
                raise SignatureRefused(f"Stale or invalid webhook-timestamp: {said}.") from None
            continue
        return lowered["webhook-id"]
    raise SignatureRefused(reason)
