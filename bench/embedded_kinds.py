"""What the embedded model (SmolLM2-135M) does reliably, one action kind at a time.

    python bench/embedded_kinds.py [--requests 20] [--write]

Embedded mode on a throwaway SQLite file, the workspace's default agent on the ``never`` policy
(one model call a turn), a task with a short plan. For each action kind, ~20 varied requests:

* **reply**: questions the task, the goal, the plan or common sense answer. Through the real
  stack (``post_message``, then ``run_turn`` as the worker runs it). Usable: the turn applied
  one reply that is whole sentences, no loop, not a copy of the document, not the honest
  "I could not do this well" fallback, and, for the ten questions the task answers ("how many
  people are coming?"), one that mentions the answer ("8"). Open requests are judged on
  structure only, so this count is an upper bound on useful replies.
* **ask**: requests that cannot be done without a fact nobody gave (dates, a name, a choice).
  Through the real stack. Usable: the turn applied one question (``ask``) ending with '?'.
* **suggest** (a change for people to accept) and **edit** (a direct change): the model asked
  for ``{"find", "replace"}`` JSON under its grammar (``llm.build_chat_model`` with a schema, as
  the signal calls are), with the short prompt style of its replies. The turn engine never
  asks the embedded model for these (``SmallDecisionOut`` is reply or ask only); this measures
  whether it could. Usable: ``find`` is empty (append) or exact text of the document, ``replace``
  is new text (not the document again, no loop, no control characters) and contains the
  request's key term (e.g. "museum" for "add a museum visit on day 2"). suggest requests add
  something; edit requests change text that is there.

Prints usable / total per kind with the p50 of its turn time, and ``uptime`` before and after.
``--write`` stores the figures in ``agents/llm/embedded_capabilities.json``, which the agents panel
and the Models page read to say what this model can do (a kind counts as done reliably at
``RELIABLE`` = 80 % usable or more).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "agents" / "llm" / "embedded_capabilities.json"
RELIABLE = 0.8

PLAN = (
    "# Lisbon offsite\n\n- Day 1: arrive, hotel check-in, team dinner\n"
    "- Day 2: workshop 9:00-12:00, walking tour\n- Budget: 1,500 EUR per person, 8 people\n"
)
GOAL = "Two days in Lisbon in May for 8 people, 1,500 EUR each."

# (request, what a right answer mentions: any of these, or None for an open request)
REPLY: tuple[tuple[str, tuple[str, ...] | None], ...] = (
    ("how many people are coming?", ("8", "eight")),
    ("what is the budget per person?", ("1,500", "1500", "1.500")),
    ("when does the workshop start?", ("9",)),
    ("what happens on day 1?", ("arrive", "check-in", "hotel", "dinner")),
    ("how long is the offsite?", ("two", "2")),
    ("which city are we going to?", ("Lisbon",)),
    ("what is planned after the workshop?", ("walking", "tour")),
    ("what is the total budget for everyone?", ("12,000", "12000", "12.000")),
    ("can you summarise the plan in one sentence?", ("workshop", "dinner", "tour")),
    ("which month is the offsite?", ("May",)),
    ("say hello to the team in one sentence.", None),
    ("is May a good month for Lisbon?", None),
    ("give me one idea for a team activity.", None),
    ("what should people pack?", None),
    ("should we rent bikes?", None),
    ("what if it rains on day 2?", None),
    ("is the walking tour a good idea?", None),
    ("thanks for the help!", None),
    ("how do we get from the airport to the city?", None),
    ("suggest a snack for the workshop break.", None),
)
ASK = (
    "book the flights for us.",
    "reserve a table for the dinner.",
    "send the invitation to the guest speaker.",
    "order the t-shirts.",
    "book the hotel rooms.",
    "pick the date for the offsite.",
    "choose the restaurant.",
    "arrange the airport transfer.",
    "buy the train tickets.",
    "book the meeting room for the workshop.",
    "confirm the caterer.",
    "schedule the call with the venue.",
    "pay the deposit.",
    "contact the tour guide.",
    "reserve the bikes.",
    "book a photographer.",
    "invite the new colleague.",
    "plan the route of the walking tour.",
    "set up the team photo.",
    "organise the gifts for the team.",
)
# (request, key term the new text must contain)
SUGGEST = (
    ("add a museum visit on day 2.", "museum"),
    ("add a line saying we meet in the lobby at 8:30.", "lobby"),
    ("add a packing list item: sunscreen.", "sunscreen"),
    ("add a boat trip on day 1 evening.", "boat"),
    ("add that lunch on day 2 is at the venue.", "lunch"),
    ("add a line about the airport transfer by taxi.", "taxi"),
    ("add a rain plan: the tile museum.", "tile"),
    ("add a fado evening after dinner.", "fado"),
    ("add a line: bring a laptop for the workshop.", "laptop"),
    ("add the hotel name, Hotel Baixa.", "Baixa"),
    ("add a coffee break at 10:30.", "coffee"),
    ("add a team photo at the viewpoint.", "photo"),
    ("add a line with the emergency phone number 112.", "112"),
    ("add a vegetarian option for the dinner.", "vegetarian"),
    ("add a tram ride on day 2 afternoon.", "tram"),
    ("add a day 3: departure at noon.", "departure"),
    ("add a line: dress code is casual.", "casual"),
    ("add a welcome drink on arrival.", "drink"),
    ("add a budget line for taxis, 20 EUR each.", "20"),
    ("add a note that Ana books the dinner.", "Ana"),
)
EDIT = (
    ("change the workshop time to 10:00-13:00.", "10:00"),
    ("change the budget to 1,800 EUR per person.", "1,800"),
    ("change 8 people to 10 people.", "10"),
    ("rename the walking tour to a food tour.", "food"),
    ("change the team dinner to a team lunch.", "lunch"),
    ("change the title to Lisbon team offsite.", "team"),
    ("replace the walking tour with a bike tour.", "bike"),
    ("change day 1 check-in to check-in at 15:00.", "15:00"),
    ("make the workshop 9:30-12:00.", "9:30"),
    ("change the budget currency to USD.", "USD"),
    ("change hotel check-in to apartment check-in.", "apartment"),
    ("change the dinner to a seafood dinner.", "seafood"),
    ("rename day 2 to day 2 (Friday).", "Friday"),
    ("change the walking tour to a tour of Belem.", "Belem"),
    ("change the heading to Porto offsite.", "Porto"),
    ("change 1,500 EUR to 1,200 EUR.", "1,200"),
    ("change the workshop to a strategy workshop.", "strategy"),
    ("change arrive to arrive by train.", "train"),
    ("make the team dinner a team barbecue.", "barbecue"),
    ("change 8 people to 12 people.", "12"),
)


def _setup(data_dir: str) -> None:
    from _embedded import setup  # bench/_embedded.py, beside this script

    setup(data_dir)


def _uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()


def _stack(
    kind: str, requests: tuple[tuple[str, tuple[str, ...] | None], ...]
) -> tuple[int, list[float], list[str]]:
    """(usable, seconds per turn, examples) for reply / ask requests through the real stack."""
    from django.contrib.auth import get_user_model

    from agents.engine import runner
    from agents.llm.embedded_reply import is_copy, loop_start
    from agents.models import Action, Agent, Turn
    from collab.tasks.models import Document, Message
    from collab.tasks.services import create_task, post_message
    from collab.workspaces.models import Membership
    from collab.workspaces.services import create_workspace

    users = get_user_model().objects
    ana = users.get_or_create(username="ana")[0]
    ben = users.get_or_create(username="ben")[0]
    workspace = create_workspace(owner=ana, name=f"Offsite {kind}")
    Membership.objects.create(workspace=workspace, user=ben, role="editor")
    agent = Agent.objects.get(workspace=workspace)
    agent.policy_name = "never"
    agent.save(update_fields=["policy_name"])
    owner = Membership.objects.select_related("workspace", "user").get(
        user=ana, workspace=workspace
    )
    task = create_task(membership=owner, title="Lisbon offsite", goal=GOAL)
    Document.objects.filter(task=task).update(text=PLAN)
    usable, seconds, examples = 0, [], []
    for n, (request, answer) in enumerate(requests):
        asker = (ana, ben)[n % 2]
        member = Membership.objects.select_related("workspace", "user").get(
            user=asker, workspace=workspace
        )
        started = time.monotonic()
        post_message(membership=member, task=task, body=f"@{agent.name} {request}")
        turn = Turn.objects.filter(agent=agent).order_by("-id").first()
        assert turn is not None
        runner.run_turn(turn_id=turn.pk)
        seconds.append(time.monotonic() - started)
        actions = list(Action.objects.filter(turn=turn))
        body = ""
        ok = len(actions) == 1 and actions[0].status == Action.Status.APPLIED
        if ok:
            message = Message.objects.filter(pk=actions[0].result.get("message_id")).first()
            body = message.body if message else ""
            ok = (
                bool(re.search(r"[.!?]$", body))
                and loop_start(body) is None
                and not is_copy(body, PLAN)
                and "could not do this well" not in body
                and (actions[0].kind == kind)
                and (kind != "ask" or body.endswith("?"))
                and (
                    answer is None
                    or any(re.search(rf"\b{re.escape(a)}\b", body, re.I) for a in answer)
                )
            )
        usable += ok
        examples.append(f"{'ok ' if ok else 'no '} {request} -> {body[:110]}")
        print(f"{kind:7} {'ok' if ok else 'no'} {seconds[-1]:5.1f} s  {request} -> {body[:90]}")
    return usable, seconds, examples


def _change(kind: str, requests: tuple[tuple[str, str], ...]) -> tuple[int, list[float], list[str]]:
    """(usable, seconds per call, examples) for suggest / edit requests, grammar-bound JSON."""
    from pydantic import BaseModel, Field

    from agents import llm
    from agents.llm.embedded_reply import is_copy, loop_start

    class Change(BaseModel):
        find: str = Field(max_length=120)
        replace: str = Field(min_length=1, max_length=200)

    profile = llm.embedded_profile()
    model = llm.build_chat_model(profile, schema=Change)
    usable, seconds, examples = 0, [], []
    for request, term in requests:
        prompt = (
            "You edit a short plan. Answer with JSON: find = exact text now in the plan to "
            'replace ("" to add at the end), replace = the new text.\n\n'
            f"Plan:\n<<<\n{PLAN}>>>\n\nRequest: {request}"
        )
        started = time.monotonic()
        text = "".join(piece.text for piece in llm.stream_model(model, [_human(prompt)]))
        seconds.append(time.monotonic() - started)
        try:
            change = Change.model_validate_json(text)
        except ValueError:
            change = None
        ok = change is not None
        if change is not None:
            find, new = change.find, change.replace
            ok = (
                (find == "" or find in PLAN)
                and (kind != "edit" or find != "")
                and term.lower() in new.lower()
                and not is_copy(new, PLAN)
                and loop_start(new) is None
                and not re.search(r"[\x00-\x1f]", new)
            )
        usable += ok
        examples.append(f"{'ok ' if ok else 'no '} {request} -> {text[:110]}")
        print(f"{kind:7} {'ok' if ok else 'no'} {seconds[-1]:5.1f} s  {request} -> {text[:90]}")
    return usable, seconds, examples


def _human(text: str) -> Any:
    from langchain_core.messages import HumanMessage

    return HumanMessage(content=text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=20, help="per kind (at most 20)")
    parser.add_argument("--write", action="store_true", help=f"store the figures in {OUT.name}")
    args = parser.parse_args()
    before = _uptime()
    print("before:", before)
    n = args.requests
    with tempfile.TemporaryDirectory(prefix="collab-bench-kinds-") as data_dir:
        _setup(data_dir)
        from agents.engine import warmup
        from agents.llm import embedded

        warmup.warm_embedded_model()
        results = {
            "reply": _stack("reply", REPLY[:n]),
            "ask": _stack("ask", tuple((request, None) for request in ASK[:n])),
            "suggest": _change("suggest", SUGGEST[:n]),
            "edit": _change("edit", EDIT[:n]),
        }
        model_name = embedded.EMBEDDED_MODEL_NAME
    after = _uptime()
    print()
    kinds: dict[str, Any] = {}
    for kind, (usable, seconds, examples) in results.items():
        total = len(seconds)
        kinds[kind] = {
            "usable": usable,
            "of": total,
            "reliable": usable >= RELIABLE * total,
            "p50_seconds": round(statistics.median(seconds), 2),
            "examples": examples[:4],
        }
        print(
            f"{kind:8} usable {usable:2} / {total}   p50 {statistics.median(seconds):5.2f} s"
            f"   {'reliable' if kinds[kind]['reliable'] else 'not reliable'}"
        )
    print("after: ", after)
    if args.write:
        figures = {
            "model": model_name,
            "measured_at": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "by": "bench/embedded_kinds.py",
            "reliable_at": RELIABLE,
            "load": {"before": before, "after": after},
            "kinds": kinds,
        }
        OUT.write_text(json.dumps(figures, indent=2) + "\n")
        print("wrote", OUT.relative_to(ROOT))


if __name__ == "__main__":
    main()
