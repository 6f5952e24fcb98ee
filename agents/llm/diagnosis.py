"""What is wrong with a model profile, in plain words, from the failure of a real call: the
Models page's Test result (``agents/profiles.py``, ``test_profile``).

A failure is read from the provider's own exception (found along the ``__cause__`` chain of
the ``ModelError`` / ``ModelConfigError`` the call raised): its HTTP status, its class (a
connection that nobody answered, a timeout) and its message. Each case names the one thing to
fix: the address (nothing answers there), the key (the server refused it, or none is set), the
model name (the server does not serve it: the names it does serve are listed when it says).
No case asks for a package: ``make run`` installs every provider.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass

LIST_TIMEOUT_SECONDS = 5
MAX_LISTED = 8


@dataclass(frozen=True)
class Target:
    """What the call was made to: the provider, the address, the model and the key's variable."""

    provider: str  # "openai" | "anthropic" | ...
    where: str  # the base URL, or the provider's own name for its hosted API
    model: str
    key_env: str = ""
    key: str | None = None
    timeout_seconds: int = 0


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def _status(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    return status if isinstance(status, int) else None


def _message(exc: BaseException) -> str:
    text = getattr(exc, "message", None) or str(exc)
    return " ".join(str(text).split())[:300]


def _is_timeout(exc: BaseException) -> bool:
    name = type(exc).__name__
    return "Timeout" in name or isinstance(exc, TimeoutError)


def _is_connection(exc: BaseException) -> bool:
    name = type(exc).__name__
    return name in {"APIConnectionError", "ConnectError", "ConnectionRefusedError"} or isinstance(
        exc, ConnectionError
    )


def served_models(target: Target) -> list[str] | None:
    """The model names an OpenAI-compatible server lists at ``<base>/models`` (None: it lists
    none, or cannot be asked)."""
    if target.provider != "openai" or not target.where.startswith(("http://", "https://")):
        return None
    request = urllib.request.Request(target.where.rstrip("/") + "/models")  # noqa: S310
    if target.key:
        request.add_header("Authorization", f"Bearer {target.key}")
    try:
        with urllib.request.urlopen(request, timeout=LIST_TIMEOUT_SECONDS) as answer:  # noqa: S310
            data = json.load(answer)
    except (OSError, ValueError, urllib.error.URLError):
        return None
    rows = data.get("data") if isinstance(data, dict) else None
    if not isinstance(rows, list):
        return None
    names = [str(row.get("id")) for row in rows if isinstance(row, dict) and row.get("id")]
    return names or None


def _listed(names: list[str]) -> str:
    shown = ", ".join(repr(n) for n in names[:MAX_LISTED])
    more = f" and {len(names) - MAX_LISTED} more" if len(names) > MAX_LISTED else ""
    return shown + more


def explain(exc: BaseException, target: Target) -> str:
    """The failure of a call to ``target`` in one or two sentences that say what to fix."""
    where = target.where
    for cause in _chain(exc):
        status = _status(cause)
        detail = _message(cause)
        if status in (401, 403):
            if target.key_env:
                return (
                    f"The server at {where} refused the key in {target.key_env} ({status}: "
                    f"{detail}). Check that this variable holds a valid key for this server."
                )
            return (
                f"The server at {where} asks for an API key ({status}: {detail}). Name the "
                "environment variable that holds it in the model's key field."
            )
        if status == 404:
            if "model" in detail.casefold() or target.provider == "anthropic":
                served = served_models(target)
                listed = f" It serves: {_listed(served)}." if served else ""
                return (
                    f"The server at {where} does not know the model {target.model!r} "
                    f"({status}: {detail}).{listed} Check the model name."
                )
            return (
                f"The address {where} answers, but not as an OpenAI-compatible API ({status}: "
                f"{detail}). Check the address: it usually ends in /v1."
            )
        if status is not None and status >= 500:
            return (
                f"The model's server at {where} failed ({status}: {detail}). The address, key "
                "and model name reached it: try again, or look at the server's log."
            )
        if status is not None:
            return f"The model's server at {where} refused the request ({status}: {detail})."
        if _is_timeout(cause):
            within = f" within {target.timeout_seconds} s" if target.timeout_seconds else ""
            return (
                f"The model at {where} accepted the connection but did not answer{within}. "
                "The server may be busy or loading the model: try again, or raise the timeout."
            )
        if _is_connection(cause):
            root = next(
                (c for c in _chain(cause) if c is not cause and str(c)), None
            )  # the socket's own words ("Connection refused")
            why = f" ({_message(root)})" if root is not None else ""
            return (
                f"Could not connect to the model at {where}: nothing answers at this "
                f"address{why}. Is the server running, and is the address right?"
            )
    return " ".join(str(exc).split())[:2000]


def unlisted_model_note(target: Target) -> str:
    """After a call that worked: a note when the server lists its models and this profile's
    is not among them (llama.cpp's servers answer any name with the one model they serve)."""
    served = served_models(target)
    if not served or target.model in served:
        return ""
    return (
        f"The server does not list the model {target.model!r} (it lists {_listed(served)}); "
        "it answered with the model it serves."
    )
