"""The embedded model (SmolLM2-135M) through the real stack, with the raw model beside it.

    python bench/embedded.py [--requests 10] [--rounds 2]

Embedded mode on a throwaway SQLite file: a workspace with its default agent (switched to the
``never`` policy so that every turn is one model call; the default policy's signal calls are
measured apart by ``--policy``), and a task with a short plan. Each request is a person's chat
message mentioning the agent (``post_message``, as the web process does); the turn then runs
in this process through ``agents.engine.runner.run_turn``, the code the Celery worker runs (the
broker and WebSocket hops are not in these figures: bench/turns.py measures them, ~10-40 ms).

Printed, p50 / p99 over every request of every round:

* stack: message posted -> first streamed token stored (``Turn.first_token_at``), and message
  posted -> turn finished (reply in the chat; for a turn that asked and waits, its question);
* raw: the same prompt (``llm.embedded_messages``) straight into llama-cpp-python
  (``create_chat_completion``, streaming, no wrapper, same sampling and threads), with the
  whole prompt evaluated (its prefix cache emptied first, as for a model that keeps none):
  first token and whole answer.

Before timing, the script warms up as a starting worker does (``agents/engine/warmup.py``: the model
loaded, its prompt's constant head evaluated, WordLlama loaded) and prints how long that took;
``--cold`` skips it, so the first turn pays for the loading as it did before the warm-up.

The machine is shared: the script prints ``uptime`` before and after; quote it with the figures.

Measured 2026-12-01 on the shared 2-core machine, ``nice -n 10``, 10 requests, load 3.3 -> 4.2
(before this round's warm-up, threads and prompt work: 2.65 s / 26.4 s at load 9-10):
stack first token p50 2.23 s / p99 3.94 s, turn done p50 4.49 s / p99 6.82 s; raw model
(whole prompt evaluated) first token p50 5.38 s / p99 8.86 s, whole answer 9.60 / 14.72 s.
Again at load 2.8 -> 2.0: stack first token p50 1.15 s / p99 3.15 s (the first turn), turn
done p50 2.06 s / p99 4.35 s; raw first token 2.83 / 3.96 s, whole answer 4.87 / 9.85 s.
2026-12-02, quiet machine (load 0.28 -> 0.73, nothing else running), 10 requests, 1 round:
warm-up 2.08 s; stack first token p50 0.77 s / p99 1.54 s (the first turn), turn done p50
1.14 s / p99 2.59 s; raw first token 1.60 / 2.05 s, whole answer 2.47 / 5.09 s; 8 replies and
2 questions.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

REQUESTS = (
    "which neighbourhood should we stay in?",
    "what does a hotel in Alfama cost per night?",
    "suggest a restaurant for the team dinner.",
    "how many people are coming?",
    "what is the budget per person?",
    "say hello to the team in one sentence.",
    "what should we do on the first evening?",
    "is May a good month for Lisbon?",
    "how do we get from the airport to the city?",
    "give me one idea for a team activity.",
    "what time should the workshop start?",
    "can you summarise the plan so far?",
)


def _setup(data_dir: str) -> None:
    os.environ["DATA_DIR"] = data_dir
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "collab.settings")
    for name in ("DATABASE_URL", "REDIS_URL", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        os.environ.pop(name, None)
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _line(label: str, values: list[float]) -> str:
    if not values:
        return f"{label:<44} (none)"
    return (
        f"{label:<44} p50 {statistics.median(values):6.2f} s   p99 {_pct(values, 0.99):6.2f} s"
        f"   (n={len(values)})"
    )


def _uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--policy", default="never", help="the agent's clarification policy")
    parser.add_argument("--cold", action="store_true", help="no warm-up before the first turn")
    args = parser.parse_args()
    print("before:", _uptime())
    with tempfile.TemporaryDirectory(prefix="collab-bench-embedded-") as data_dir:
        _setup(data_dir)
        stack_first, stack_total, raw_first, raw_total, kinds = _run(args)
    print()
    print(_line("stack: posted -> first token", stack_first))
    print(_line("stack: posted -> turn done", stack_total))
    print(_line("raw model: first token", raw_first))
    print(_line("raw model: whole answer", raw_total))
    print("actions:", ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())))
    print("after: ", _uptime())


def _run(args: Any) -> tuple[list[float], list[float], list[float], list[float], dict[str, int]]:
    from django.contrib.auth import get_user_model

    from agents import llm, profiles
    from agents.engine import runner, warmup
    from agents.engine.context import build_context
    from agents.llm import embedded
    from agents.models import Action, Agent, Turn
    from collab.tasks.models import Document, Message
    from collab.tasks.services import create_task, post_message
    from collab.workspaces.models import Membership
    from collab.workspaces.services import create_workspace

    users = get_user_model().objects
    ana = users.create_user(username="ana", password="x")  # noqa: S106 (a throwaway database)
    ben = users.create_user(username="ben", password="x")  # noqa: S106
    workspace = create_workspace(owner=ana, name="Offsite")
    Membership.objects.create(workspace=workspace, user=ben, role="editor")
    agent = Agent.objects.get(workspace=workspace)
    agent.policy_name = args.policy
    agent.save(update_fields=["policy_name"])
    owner = Membership.objects.select_related("workspace", "user").get(user=ana)
    task = create_task(
        membership=owner,
        title="Lisbon offsite",
        goal="Two days in Lisbon in May for 8 people, 1,500 EUR each.",
    )
    Document.objects.filter(task=task).update(
        text="# Lisbon offsite\n\n- Day 1: arrive, hotel check-in, dinner\n- Day 2: workshop\n"
    )
    profile = profiles.resolve_profile(None)
    if not args.cold:
        started = time.monotonic()
        took = warmup.warm_up()  # what a starting worker does
        print(f"warm-up {time.monotonic() - started:.2f} s: {took}", flush=True)
    stack_first: list[float] = []
    stack_total: list[float] = []
    raw_first: list[float] = []
    raw_total: list[float] = []
    kinds: dict[str, int] = {}
    for round_ in range(args.rounds):
        for n, request in enumerate(REQUESTS[: args.requests]):
            asker = (ana, ben)[n % 2]
            member = Membership.objects.select_related("workspace", "user").get(user=asker)
            posted = time.time()
            post_message(membership=member, task=task, body=f"@{agent.name} {request}")
            turn = Turn.objects.filter(agent=agent).order_by("-id").first()
            assert turn is not None
            runner.run_turn(turn_id=turn.pk)
            turn.refresh_from_db()
            first_at = turn.first_token_at.timestamp() - posted if turn.first_token_at else None
            done_at = turn.finished_at
            if done_at is None:  # waiting: its question is in the chat
                asked = Action.objects.filter(turn=turn, kind="ask").first()
                message = (
                    Message.objects.filter(pk=(asked.result or {}).get("message_id")).first()
                    if asked
                    else None
                )
                done_at = message.created_at if message else None
            done = done_at.timestamp() - posted if done_at else None
            if first_at is not None:
                stack_first.append(first_at)
            if done is not None:
                stack_total.append(done)
            for action in Action.objects.filter(turn=turn):
                kinds[action.kind] = kinds.get(action.kind, 0) + 1
            # The raw model: same prompt, sampling and threads, no wrapper, no prefix cache.
            context = build_context(turn, profile, document=Document.objects.get(task=task))
            messages = embedded._as_llama_messages(llm.embedded_messages(context))
            llama = embedded._llama(str(embedded.embedded_model_path()))
            cache = llama.cache
            llama.set_cache(None)
            llama.reset()
            started = time.monotonic()
            first = None
            try:
                for part in llama.create_chat_completion(
                    messages=messages,
                    max_tokens=profile.max_tokens,
                    temperature=profile.temperature,
                    stream=True,
                    **embedded.raw_completion_options(),
                ):
                    if first is None and part["choices"][0].get("delta", {}).get("content"):
                        first = time.monotonic() - started
            finally:
                llama.set_cache(cache)
            raw_total.append(time.monotonic() - started)
            if first is not None:
                raw_first.append(first)
            print(
                f"round {round_ + 1} #{n + 1:2} {turn.status:8} "
                f"first {first_at if first_at is not None else float('nan'):5.2f} s  "
                f"done {done if done is not None else float('nan'):5.2f} s  "
                f"raw {raw_first[-1] if raw_first else float('nan'):5.2f} / {raw_total[-1]:5.2f} s",
                flush=True,
            )
    return stack_first, stack_total, raw_first, raw_total, kinds


if __name__ == "__main__":
    main()
