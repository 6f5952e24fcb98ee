"""Turn contexts for the skills' tests: a task (title, goal, kind), a request, a document."""

from __future__ import annotations

from typing import Any

TODAY = "2026-12-04"  # a Friday


def context(
    title: str,
    goal: str = "",
    request: str = "",
    *,
    template: str = "",
    document: str = "",
    chat: tuple[str, ...] = (),
    memory: tuple[dict[str, Any], ...] = (),
) -> dict[str, Any]:
    bodies = [*chat, request] if request else list(chat)
    return {
        "agent": "Assistant",
        "task": {"id": 1, "title": title, "goal": goal, "template": template},
        "document": document,
        "messages": [
            {"id": i, "author": "alice", "kind": "human", "body": body}
            for i, body in enumerate(bodies, 1)
        ],
        "request": request,
        "requested_by": "alice",
        "requested_by_id": 1,
        "request_date": TODAY,
        "memory_items": list(memory),
        "answers": [],
    }


def preference(key: str, value: str) -> dict[str, Any]:
    return {
        "item_id": 1,
        "person_id": 1,
        "person_name": "alice",
        "key": key,
        "value": value,
        "scope": "global",
        "kinds": [],
        "text": f"{key}: {value}",
        "shared": False,
    }


OFFSITE = (
    "Team offsite",
    "Plan a two-day offsite in Lisbon for 25 people on 12 June 2027, budget 2,000 GBP.",
)
MEETING = (
    "Prepare Friday's meeting",
    "Meeting brief for Friday's planning meeting with Ana, Ben, Carla, Dev and Eve, 30 minutes.",
)
SUPPORT = (
    "Support team setup",
    "New laptops for the support team, a shared calendar and a short training by June.",
)
BLOG = (
    "Blog post",
    "A blog post about our new search feature for beginners.",
)
