"""The browser journey (tests/browser/test_journey.py) done by a script that holds only API
tokens, one per person, and speaks HTTP with the standard library (issue 29).

    python tests/api/token_journey.py http://127.0.0.1:8000

Tokens come from the environment: ALICE_TOKEN (owner), BOB_TOKEN (editor), CAROL_TOKEN
(viewer), ROOT_TOKEN (staff, for review). The fake model profiles "Model suggest", "Model edit"
and "Model ask" must exist (a site administrator adds models). It prints each step, and the
ids it made as one JSON line at the end; it exits 1 with the reason when a step fails. It
imports nothing from Collab: everything it learns, it learns from the API.
"""

from __future__ import annotations

import json
import os
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

WAIT_SECONDS = 90.0  # how long to wait for an agent's turn (a busy machine); nothing is timed
POLL_SECONDS = 0.3


class Refused(Exception):
    """The API answered a status the step did not expect."""


class Person:
    def __init__(self, base: str, name: str, token: str) -> None:
        self.base, self.name, self.token = base.rstrip("/"), name, token

    def call(self, method: str, path: str, body: Any = None, *, expect: int = 200) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(  # noqa: S310 - the URL is the server under test
            self.base + path,
            data=data,
            method=method,
            headers={"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=60) as answer:  # noqa: S310
                status, raw = answer.status, answer.read()
        except urllib.error.HTTPError as error:
            status, raw = error.code, error.read()
        if status != expect:
            raise Refused(f"{self.name}: {method} {path} answered {status}, not {expect}: {raw!r}")
        if not raw:
            return None
        try:
            return json.loads(raw)
        except ValueError:  # an export: JSON lines, CSV
            return raw.decode()

    def get(self, path: str, **kw: Any) -> Any:
        return self.call("GET", path, **kw)

    def post(self, path: str, body: Any = None, **kw: Any) -> Any:
        return self.call("POST", path, {} if body is None else body, **kw)

    def put(self, path: str, body: Any, **kw: Any) -> Any:
        return self.call("PUT", path, body, **kw)


def step(text: str) -> None:
    print(f"- {text}", flush=True)


def wait_for(what: str, probe: Callable[[], Any]) -> Any:
    """Ask ``probe`` until it gives something truthy (an agent works in the background)."""
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        found = probe()
        if found:
            return found
        if time.monotonic() > deadline:
            raise Refused(f"still waiting for {what} after {WAIT_SECONDS:g} s")
        time.sleep(POLL_SECONDS)


def check(condition: bool, what: str) -> None:
    if not condition:
        raise Refused(what)


def turn_ended(person: Person, task: int, turn: int) -> dict[str, Any] | None:
    found = person.get(f"/api/tasks/{task}/turns/{turn}")
    return found if found["status"] in ("done", "failed", "cancelled", "waiting") else None


def journey(base: str) -> dict[str, Any]:
    alice = Person(base, "alice", os.environ["ALICE_TOKEN"])
    bob = Person(base, "bob", os.environ["BOB_TOKEN"])
    carol = Person(base, "carol", os.environ["CAROL_TOKEN"])
    root = Person(base, "root", os.environ["ROOT_TOKEN"])

    step("alice creates the workspace Acme and invites bob (editor) and carol (viewer)")
    ws = alice.post("/api/workspaces", {"name": "Acme"}, expect=201)["id"]
    links = {
        role: alice.post(f"/api/workspaces/{ws}/invitations", {"role": role}, expect=201)["link"]
        for role in ("editor", "viewer")
    }
    for person, role in ((carol, "viewer"), (bob, "editor")):
        token = links[role].rstrip("/").rsplit("/", 1)[-1]
        joined = person.post("/api/invitations/accept", {"token": token})
        check(joined == {**joined, "id": ws, "name": "Acme", "role": role}, f"joined: {joined}")
    check(any(w["id"] == ws for w in carol.get("/api/workspaces")), "carol sees Acme")

    step("alice makes three agents with test models and puts them on a new task")
    models = {m["name"]: m["id"] for m in alice.get("/api/models")}
    task = alice.post(f"/api/workspaces/{ws}/tasks", {"title": "Plan the offsite"}, expect=201)
    task_id = task["id"]
    agents: dict[str, int] = {}
    for name, behaviour in (("Sage", "suggest"), ("Eddie", "edit"), ("Quinn", "ask")):
        fields = {"name": name, "model_profile_id": models[f"Model {behaviour}"]}
        if name == "Eddie":
            fields["mode"] = "may_edit"
        made = alice.post(f"/api/workspaces/{ws}/agents", fields, expect=201)
        agents[name] = made["id"]
        on_task = alice.post(f"/api/tasks/{task_id}/agents", {"agent_id": made["id"]})
        check(name in [a["name"] for a in on_task], f"{name} is on the task")

    step("bob writes in the document with non-ASCII text and chats; carol reads along")
    doc = f"/api/tasks/{task_id}/document"
    base_version = bob.get(doc)["version"]
    text = bob.get(doc)["text"] + "## Overview\nTwo days in Lisbon, café ☕ 日本\n"
    bob.put(doc, {"text": text, "base_version": base_version})
    check("café ☕ 日本" in carol.get(doc)["text"], "carol reads bob's text")
    carol.put(doc, {"text": "x", "base_version": carol.get(doc)["version"]}, expect=403)
    bob.post(f"/api/tasks/{task_id}/messages", {"body": "Hello all, let us plan 🎉"}, expect=201)
    last = carol.get(f"/api/tasks/{task_id}/messages?limit=5")["messages"][-1]
    check("let us plan" in last["body"], f"carol reads the chat: {last}")
    carol.post(f"/api/tasks/{task_id}/messages", {"body": "me too"}, expect=403)

    step("alice asks Sage; it suggests; she accepts it after editing it")
    alice.post(f"/api/tasks/{task_id}/agents/{agents['Sage']}/ask", expect=201)
    proposed = wait_for(
        "Sage's suggestion",
        lambda: alice.get(f"/api/tasks/{task_id}/suggestions?status=proposed")["suggestions"],
    )[0]
    check("Agreed next step" in proposed["replace"], f"the suggestion: {proposed}")
    accepted = alice.post(
        f"/api/tasks/{task_id}/suggestions/{proposed['id']}/accept",
        {"text": proposed["replace"] + " (Ana)"},
    )
    check(accepted["status"] == "edited" and accepted["decided_by"] == "alice", str(accepted))
    check("Agreed next step (Ana)" in bob.get(doc)["text"], "the edited text is in")
    alice.post(
        f"/api/tasks/{task_id}/suggestions/{proposed['id']}/accept", {}, expect=409
    )  # decided already

    step("alice asks Eddie; it edits the document directly; she undoes the edit")
    turn = alice.post(f"/api/tasks/{task_id}/agents/{agents['Eddie']}/ask", expect=201)["id"]
    ended = wait_for("Eddie's turn", lambda: turn_ended(alice, task_id, turn))
    check(ended["status"] == "done", f"Eddie's turn: {ended}")
    check("Book the venue" in carol.get(doc)["text"], "Eddie's edit is in")
    edit = next(a for a in ended["actions"] if a["kind"] == "edit")
    alice.post(f"/api/tasks/{task_id}/edits/{edit['id']}/undo")
    check("Book the venue" not in carol.get(doc)["text"], "Eddie's edit is undone")
    carol.post(f"/api/tasks/{task_id}/edits/{edit['id']}/undo", expect=403)

    step("alice asks Quinn; it asks a question; she answers it")
    alice.post(f"/api/tasks/{task_id}/agents/{agents['Quinn']}/ask", expect=201)
    question = wait_for(
        "Quinn's question",
        lambda: alice.get(f"/api/tasks/{task_id}/questions?status=open")["questions"],
    )[0]
    check("Which part should I start with?" in question["text"], f"the question: {question}")
    answered = alice.post(
        f"/api/tasks/{task_id}/questions/{question['id']}/answer", {"answer": "The venue first"}
    )
    check(answered["answered_by"] == "alice", str(answered))
    seen = bob.get(f"/api/tasks/{task_id}/questions?status=answered")["questions"]
    check([q["answer"] for q in seen] == ["The venue first"], f"bob sees the answer: {seen}")

    step("alice rates the question and comments")
    feedback = f"/api/tasks/{task_id}/feedback"
    target = {"target_kind": "question", "target_id": question["id"]}
    alice.post(feedback, {**target, "rating": "up"})
    rated = alice.post(feedback, {**target, "comment": "Good start"})
    check(rated["rating"] == "up" and rated["comment"] == "Good start", str(rated))

    step("the document's history; alice restores an earlier version")
    now = alice.get(doc)
    versions = alice.get(f"/api/tasks/{task_id}/document/versions?limit=200")["versions"]
    earlier = [v for v in versions if v["text"] != now["text"] and "café" in v["text"]]
    check(bool(earlier), f"an earlier version to restore among {len(versions)}")
    restored = alice.post(f"/api/tasks/{task_id}/document/versions/{earlier[-1]['id']}/restore")
    check(restored["text"] == earlier[-1]["text"] == alice.get(doc)["text"], "restored")
    carol.post(f"/api/tasks/{task_id}/document/versions/{earlier[-1]['id']}/restore", expect=403)

    step("alice's memory: add, search, pin, export, import, forget")
    item = alice.post(
        "/api/memory/items",
        {"text": "I like short bullet points", "kind": "preference"},
        expect=201,
    )
    item_id = item["id"]
    found = alice.get("/api/memory/search?q=bullet+points")
    check(item_id in [i["id"] for i in found], f"search finds it: {found}")
    alice.put(f"/api/memory/items/{item_id}/pin", {"pinned": True})
    exported = alice.get("/api/memory/export")
    check(any(i.get("text") == item["text"] for i in exported["items"]), "the export holds it")
    alice.post("/api/memory/import", exported)
    bob.put(f"/api/memory/items/{item_id}/pin", {"pinned": False}, expect=404)  # not his
    alice.call("DELETE", f"/api/memory/items/{item_id}", expect=204)

    step("alice demotes bob to viewer, moves the task on, then removes bob")
    members = {m["username"]: m["id"] for m in alice.get(f"/api/workspaces/{ws}/members")}
    bob_member = members["bob"]
    role = alice.put(f"/api/workspaces/{ws}/members/{bob_member}/role", {"role": "viewer"})
    check(role["role"] == "viewer", str(role))
    bob.post(f"/api/tasks/{task_id}/messages", {"body": "Can I still write?"}, expect=403)
    alice.put(f"/api/tasks/{task_id}/status", {"status": "in_progress"})
    check(carol.get(f"/api/tasks/{task_id}")["status"] == "in_progress", "carol sees the status")
    carol.put(f"/api/tasks/{task_id}/status", {"status": "done"}, expect=403)
    alice.call("DELETE", f"/api/workspaces/{ws}/members/{bob_member}", expect=204)
    bob.get(f"/api/tasks/{task_id}", expect=404)

    step("an admin reviews the turns")
    root.get(f"/api/tasks/{task_id}", expect=404)  # staff, not a member: review only
    traces = root.get(f"/api/review/traces?workspace={ws}&view=turns")
    check(any("Quinn" in json.dumps(row) for row in traces["rows"]), "Quinn's turn is reviewed")
    calls = alice.get(f"/api/workspaces/{ws}/review/traces")
    check(len(calls["rows"]) >= 1, "alice (owner) sees the model calls")
    trace = root.get(f"/api/tasks/{task_id}/turns/{turn}/trace")
    check(trace["id"] == turn and trace["agent"] == "Eddie", "Eddie's turn's trace")
    events = root.get(f"/api/tasks/{task_id}/review/export")
    check("Agreed next step" in json.dumps(events), "the task's event log")
    csv = root.get(f"/api/workspaces/{ws}/review/turns.csv")
    check("Eddie" in csv, "the turns CSV names Eddie")
    carol.get(f"/api/workspaces/{ws}/review/traces", expect=403)

    return {"workspace": ws, "task": task_id, "agents": agents, "question": question["id"]}


def main() -> int:
    try:
        made = journey(sys.argv[1])
    except Refused as failure:
        print(f"FAILED: {failure}", flush=True)
        return 1
    print(json.dumps(made), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
