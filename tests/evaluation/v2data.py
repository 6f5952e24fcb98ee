"""A small hand-written format-2 scenario set for the tests (every feature once)."""

from __future__ import annotations

import copy
from typing import Any

TRIP_CHECKS = [
    {"type": "regex", "pattern": "(?i)Porto", "slot": "destination"},
    {"type": "regex", "pattern": r"1[,.]?500", "slot": "budget"},
]

BASE: dict[str, Any] = {
    "name": "tiny-v2",
    "version": 2,
    "templates": [
        {
            "kind": "recipe_card",
            "title": "Recipe card",
            "keywords": ["recipe"],
            "slots": [
                {"name": "dish", "type": "text", "question": "Which dish?"},
                {
                    "name": "servings",
                    "type": "number",
                    "question": "How many servings?",
                    "units": ["servings", "people"],
                },
            ],
        }
    ],
    "users": [
        {
            "id": "zoe",
            "name": "Zoë Müller",
            "persona": "Brisk.",
            "preferences": [
                {
                    "id": "zoe-tldr",
                    "key": "tldr",
                    "value": "yes",
                    "text": "Start with a one-line TL;DR.",
                    "check": {"type": "contains", "text": "TL;DR"},
                },
                {
                    "id": "zoe-asking",
                    "key": "asking",
                    "value": "at_most:1",
                    "text": "Ask me at most one question.",
                },
                {
                    "id": "zoe-servings",
                    "key": "slot:servings",
                    "value": "4",
                    "text": "Recipes always serve 4.",
                    "kinds": ["recipe_card"],
                    "remembered": True,
                },
            ],
        },
        {"id": "soren", "name": "Søren Åberg", "persona": "Precise.", "preferences": []},
    ],
    "episodes": [
        {
            "id": "zoe-trip",
            "user": "zoe",
            "session": 1,
            "date": "2027-03-05",
            "weekday": "Friday",
            "split": "dev",
            "category": "missing",
            "task": {
                "template": "travel_plan",
                "title": "Trip",
                "document": "# Trip\n\nKeep the hotel list.\n",
            },
            "request": "Plan a trip to Porto for 2 people from 12 June 2027.",
            "slots": {
                "destination": {"value": "Porto", "in": "request", "evidence": "Porto"},
                "travelers": {"value": "2", "in": "request", "evidence": "2 people"},
                "start_date": {"value": "2027-06-12", "in": "request", "evidence": "12 June 2027"},
                "budget": {
                    "value": "€1,500",
                    "in": "hidden",
                    "reply": "Roughly €1,500, my sister chips in.",
                },
            },
            "blockers": ["budget"],
            "success": TRIP_CHECKS,
            "closing": {
                "text": "Great. From now on, numbered lists please.",
                "preference": {
                    "id": "zoe-numbered",
                    "key": "list_style",
                    "value": "numbered",
                    "text": "Numbered lists please.",
                    "check": {"type": "list_style", "style": "numbered"},
                },
            },
        },
        {
            "id": "zoe-recipe",
            "user": "zoe",
            "session": 2,
            "date": "2027-03-12",
            "split": "test",
            "category": "clear",
            "task": {"template": "recipe_card", "title": "Recipe", "document": ""},
            "request": "Write a recipe card for pierogi.",
            "slots": {
                "dish": {"value": "pierogi", "in": "request", "evidence": "pierogi"},
                "servings": {"value": "4", "in": "memory"},
            },
            "blockers": [],
            "success": [{"type": "regex", "pattern": "(?i)pierogi", "slot": "dish"}],
        },
        {
            "id": "soren-trip",
            "user": "soren",
            "session": 1,
            "date": "2027-03-08",
            "split": "dev",
            "category": "contradictory",
            "chat": [{"user": "zoe", "text": "Søren, I'll look at this later."}],
            "task": {
                "template": "travel_plan",
                "title": "Trip",
                "document": "# Trip\n\nBudget: €2,000\n",
            },
            "request": "Plan a trip to Porto from 12 June 2027 for one person, budget €1,500.",
            "slots": {
                "destination": {"value": "Porto", "in": "request", "evidence": "Porto"},
                "start_date": {"value": "2027-06-12", "in": "request", "evidence": "12 June 2027"},
                "budget": {"value": "€1,500", "in": "request", "evidence": "€1,500"},
            },
            "blockers": ["budget"],
            "conflicts": [
                {
                    "slot": "budget",
                    "values": [
                        {"in": "request", "value": "€1,500"},
                        {"in": "document", "value": "€2,000"},
                    ],
                }
            ],
            "success": TRIP_CHECKS,
        },
        {
            "id": "soren-blog",
            "user": "soren",
            "session": 2,
            "date": "2027-03-15",
            "split": "dev",
            "category": "ambiguous",
            "task": {"template": "blog_post", "title": "Post", "document": ""},
            "request": "Draft a blog post about CRDT editors for devs.",
            "slots": {
                "topic": {"value": "CRDT editors", "in": "request", "evidence": "CRDT editors"},
                "audience": {
                    "value": "practitioners",
                    "in": "request",
                    "evidence": "for devs",
                    "readings": ["practitioners", "experts"],
                },
            },
            "blockers": ["audience"],
            "success": [{"type": "regex", "pattern": "(?i)CRDT", "slot": "topic"}],
        },
    ],
}


def tiny(**changes: Any) -> dict[str, Any]:
    data = copy.deepcopy(BASE)
    data.update(changes)
    return data
