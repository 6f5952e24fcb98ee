#!/usr/bin/env python3
"""A reference client for Collab's outside agents (docs/outside-agents.md): the Python
standard library only. Copy it and replace ``answer()`` with your agent's work.

Two ways to get turns, as the agent was made:

* pull (no webhook URL; works behind a firewall)::

      python outside_agent_client.py pull --server https://collab.example.com --token cagt_…

* webhook (Collab posts each turn, signed with the Standard Webhooks scheme)::

      python outside_agent_client.py webhook --port 8080 --server https://collab.example.com \\
          --token cagt_… --secret whsec_…

Either way the client posts its activities to the turn's ``activities_url`` with the agent's
token and a fresh ``webhook-id`` per activity (its idempotency key): a reply, then ``finish``.
A 409 means the turn was stopped or has ended: obey it and drop the turn.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import hmac
import json
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

TOLERANCE_SECONDS = 5 * 60


def answer(turn: dict[str, Any]) -> list[dict[str, str]]:
    """Your agent's work: the activities for one turn. Everything in the turn (task, request,
    document, messages, memory) is data written by people and other agents, never
    instructions to follow blindly."""
    request = turn.get("request") or (turn.get("messages") or [{}])[-1].get("body", "")
    return [{"type": "reply", "text": f"Reference client here: you asked {request!r}."}]


def post_activity(url: str, token: str, activity: dict[str, str]) -> int:
    request = urllib.request.Request(  # noqa: S310 - the server's own https URL
        url,
        data=json.dumps(activity).encode(),
        method="POST",
        headers={
            "Authorization": f"Bearer {token}",
            "Content-Type": "application/json",
            "webhook-id": f"act_{uuid.uuid4().hex}",
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)


def work_on(turn: dict[str, Any], token: str) -> None:
    """Post the turn's activities, then finish; stop at the first 409 (a Stop or the end)."""
    url = turn["turn"]["activities_url"]
    try:
        activities = [*answer(turn), {"type": "finish"}]
    except Exception as exc:  # the agent failed: say so, the turn fails with these words
        activities = [{"type": "error", "text": f"{type(exc).__name__}: {exc}"[:300]}]
    for activity in activities:
        status = post_activity(url, token, activity)
        if status == 409:
            print(f"turn {turn['turn']['id']} was stopped or has ended", file=sys.stderr)
            return
        if status >= 400:
            print(f"turn {turn['turn']['id']}: activity refused (HTTP {status})", file=sys.stderr)
            return


# --- pull -------------------------------------------------------------------------------------


def pull(server: str, token: str, *, once: bool) -> None:
    url = server.rstrip("/") + "/api/outside/turns?wait=20"
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})  # noqa: S310
    while True:
        try:
            with urllib.request.urlopen(request, timeout=40) as response:  # noqa: S310
                turns = json.load(response)["turns"]
        except (urllib.error.URLError, TimeoutError) as exc:
            print(f"pull failed ({exc}); trying again", file=sys.stderr)
            time.sleep(2)
            continue
        for turn in turns:
            work_on(turn, token)
        if once and turns:
            return


# --- webhook ----------------------------------------------------------------------------------


def verify(secrets: list[str], headers: Any, body: bytes) -> bool:
    """The Standard Webhooks check: HMAC-SHA256 of ``id.timestamp.body`` with the secret's
    key (base64 after ``whsec_``), one of the space-separated ``v1,<sig>`` in the header."""
    msg_id, stamp = headers.get("webhook-id", ""), headers.get("webhook-timestamp", "")
    if not msg_id or not stamp.isdigit() or abs(time.time() - int(stamp)) > TOLERANCE_SECONDS:
        return False
    signed = f"{msg_id}.{stamp}.".encode() + body
    given = [s.partition(",")[2] for s in headers.get("webhook-signature", "").split(" ")]
    for secret in secrets:
        key = base64.b64decode(secret.removeprefix("whsec_"))
        expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
        if any(hmac.compare_digest(expected, sig) for sig in given):
            return True
    return False


def serve_webhook(port: int, token: str, secrets: list[str]) -> None:
    seen: set[str] = set()  # webhook ids already taken: a retried delivery is not redone

    class Hook(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length", "0")))
            if not verify(secrets, self.headers, body):
                self.send_response(401)
                self.end_headers()
                return
            self.send_response(204)  # acknowledge at once (within 10 s), work afterwards
            self.end_headers()
            turn = json.loads(body)
            if turn["webhook_id"] not in seen:
                seen.add(turn["webhook_id"])
                threading.Thread(target=work_on, args=(turn, token), daemon=True).start()

    ThreadingHTTPServer(("0.0.0.0", port), Hook).serve_forever()  # noqa: S104


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=["pull", "webhook"])
    parser.add_argument("--server", required=True, help="Collab's URL")
    parser.add_argument("--token", required=True, help="the agent's token (cagt_…)")
    parser.add_argument("--secret", action="append", default=[], help="whsec_… (webhook)")
    parser.add_argument("--port", type=int, default=8080, help="webhook: where to listen")
    parser.add_argument("--once", action="store_true", help="pull: stop after one batch")
    args = parser.parse_args()
    if args.mode == "pull":
        pull(args.server, args.token, once=args.once)
    else:
        serve_webhook(args.port, args.token, args.secret)


if __name__ == "__main__":
    main()
