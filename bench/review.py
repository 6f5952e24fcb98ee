"""Trace list latency with many model calls: p50/p99 and query counts per filter.

    DATABASE_URL=postgres://.../review_bench python bench/review.py [--rows 1000000]

Seeds ``--rows`` model calls (with one turn per four calls, over 90 days, 8 workspaces) with
``bulk_create`` in batches, unless the database already holds that many (re-runs reuse them),
then requests the staff and owner trace lists through Django's full middleware stack (test
client, no network hop) ``--requests`` times per scenario. Use a throwaway database: without
DATABASE_URL it runs on a temporary SQLite file.

Measured 2026-11-30 02:45 UTC on the shared 2-core machine (load average 3 to 5, a test suite
running beside it), Postgres, 1,000,000 model calls, 250,000 turns, 7,100 pieces of explicit
feedback, 30 requests per scenario; p50 / p99 ms (queries per page): no filter 21 / 26 (4);
deep page 16 / 20 (4); turns view 21 / 22 (4); owner's workspace 20 / 22 (5); one agent
21 / 195; model 20 / 24; status 21 / 23; decision 45 / 52; has error 21 / 22; has feedback
22 / 26; last 30 days 27 / 28; one day 75 days ago 15 / 16; feedback + decision 91 / 119;
search common word 26 / 31 (5); rare word 12 / 13 (5); word in 2% of calls 121 / 168 (the
slowest case: near the index/walk crossover); no match 11 / 18; search + agent 30 / 225.
Every scenario answers within 300 ms at p99. Seeding took about 5 minutes (about 3,300 calls
a second with their turns).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

WORDS = [
    "offsite",
    "agenda",
    "budget",
    "venue",
    "lisbon",
    "porto",
    "hotel",
    "train",
    "flight",
    "workshop",
    "dinner",
    "speaker",
    "schedule",
    "draft",
    "outline",
    "summary",
    "risk",
    "owner",
    "deadline",
    "review",
    "tone",
    "bullet",
    "haiku",
    "castle",
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="model calls to seed")
    parser.add_argument("--requests", type=int, default=30, help="requests per scenario")
    parser.add_argument("--batch", type=int, default=5000, help="bulk_create batch size")
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    with tempfile.TemporaryDirectory(prefix="collab-bench-") as data_dir:
        os.environ.setdefault("DATA_DIR", data_dir)
        run(args)


def seed(args: argparse.Namespace) -> None:
    from decimal import Decimal

    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.utils import timezone

    from agents.models import Agent, ModelCall, Question, Suggestion, Turn
    from collab.tasks.models import Task
    from collab.workspaces.models import Membership, Role, Workspace

    have = ModelCall.objects.count()
    if have >= args.rows:
        print(f"reusing {have:,} model calls")
        return
    users = get_user_model()
    rng = random.Random(7)
    owners = [users.objects.get_or_create(username=f"owner{n}")[0] for n in range(8)]
    workspaces = []
    for n, owner in enumerate(owners):
        workspace, _ = Workspace.objects.get_or_create(name=f"Bench {n}")
        Membership.objects.get_or_create(
            workspace=workspace, user=owner, defaults={"role": Role.OWNER}
        )
        workspaces.append(workspace)
    tasks = [
        Task.objects.get_or_create(workspace=w, title=f"Task {w.pk}-{k}")[0]
        for w in workspaces
        for k in range(25)
    ]
    agents = [
        Agent.objects.get_or_create(workspace=w, name=f"Agent{k}")[0]
        for w in workspaces
        for k in range(3)
    ]
    by_workspace = {w.pk: [a for a in agents if a.workspace_id == w.pk] for w in workspaces}
    now = timezone.now()
    span = timedelta(days=90).total_seconds()
    todo = args.rows - have
    started = time.perf_counter()
    statuses = ["done"] * 17 + ["failed", "cancelled", "waiting"]
    decisions = ["act", "act", "ask", "suggest"]
    made = 0
    while made < todo:
        n_calls = min(args.batch, todo - made)
        n_turns = max(1, n_calls // 4)
        # oldest first, so ids grow with time as they do in production
        base = now - timedelta(seconds=span * (1 - made / todo))
        turn_rows = []
        for _ in range(n_turns):
            task = rng.choice(tasks)
            agent = rng.choice(by_workspace[task.workspace_id])
            status = rng.choice(statuses)
            turn_rows.append(
                Turn(
                    agent=agent,
                    task=task,
                    trigger="mention",
                    status=status,
                    policy_name=rng.choice(["ask_once", "never", "value_of_information"]),
                    policy_decision={"decision": rng.choice(decisions), "reason": "bench"},
                    provider="fake",
                    model=rng.choice(["small", "big"]),
                    tokens_in=400,
                    tokens_out=80,
                    cost=Decimal("0.004"),
                    error="boom" if status == "failed" else "",
                )
            )
        turns = Turn.objects.bulk_create(turn_rows)
        call_rows = []
        for i in range(n_calls):
            turn = turns[i * n_turns // n_calls]
            words = " ".join(rng.choice(WORDS) for _ in range(12))
            # a rare word (about ten calls each) and an uncommon one (2% of calls)
            words += f" ticket{rng.randrange(100_000)}" + (
                " quarterly" if rng.random() < 0.02 else ""
            )
            call_rows.append(
                ModelCall(
                    turn=turn,
                    agent_id=turn.agent_id,
                    provider="fake",
                    model=turn.model,
                    messages=[
                        {"role": "system", "content": "You help a team."},
                        {"role": "human", "content": f"Please {words}"},
                    ],
                    response=f'{{"actions": [{{"kind": "reply", "text": "{words}"}}]}}',
                    tokens_in=rng.randint(200, 900),
                    tokens_out=rng.randint(20, 200),
                    latency_ms=rng.randint(80, 4000),
                    cost=Decimal("0.002"),
                    error="Timeout" if rng.random() < 0.01 else "",
                )
            )
        ModelCall.objects.bulk_create(call_rows)
        first, last = call_rows[0].pk, call_rows[-1].pk
        ModelCall.objects.filter(pk__gte=first, pk__lte=last).update(created_at=base)
        Turn.objects.filter(pk__gte=turns[0].pk, pk__lte=turns[-1].pk).update(created_at=base)
        feedback = turns[::40]
        Suggestion.objects.bulk_create(
            Suggestion(task_id=t.task_id, agent_id=t.agent_id, turn=t, status="accepted")
            for t in feedback
        )
        Question.objects.bulk_create(
            Question(
                task_id=t.task_id,
                agent_id=t.agent_id,
                turn=t,
                text="Which?",
                status="answered",
                answer="That one",
            )
            for t in turns[5::60]
        )
        made += n_calls
        if made % (args.batch * 20) == 0 or made == todo:
            rate = made / (time.perf_counter() - started)
            print(f"  seeded {made:,}/{todo:,} model calls ({rate:,.0f}/s)", flush=True)
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")


def seed_feedback() -> None:
    """Explicit feedback (what "has feedback" filters on): the workspace owner's thumbs on
    every seeded accepted suggestion, and "unnecessary" on every sixth answered question
    (added to a database seeded before feedback existed, too)."""
    from django.db import connection

    from agents.models import Feedback, Question, Suggestion
    from collab.workspaces.models import Membership, Role

    if Feedback.objects.exists():
        return
    owner_of = dict(
        Membership.objects.filter(role=Role.OWNER).values_list("workspace_id", "user_id")
    )

    def on(model: Any, kind: str, fields: Callable[[int], dict[str, Any] | None]) -> list[Any]:
        """The owner's feedback on every ``model`` row for which ``fields(pk)`` gives fields."""
        rows = []
        for pk, task_id, turn_id, workspace_id in model.objects.values_list(
            "pk", "task_id", "turn_id", "task__workspace_id"
        ).iterator():
            extra = fields(pk)
            if extra is not None:
                rows.append(
                    Feedback(
                        user_id=owner_of[workspace_id],
                        workspace_id=workspace_id,
                        task_id=task_id,
                        turn_id=turn_id,
                        target_kind=kind,
                        **{f"{kind}_id": pk},
                        **extra,
                    )
                )
        return rows

    rows = on(Suggestion, "suggestion", lambda pk: {"rating": "up" if pk % 3 else "down"})
    rows += on(
        Question, "question", lambda pk: {"unnecessary_question": True} if pk % 6 == 0 else None
    )
    Feedback.objects.bulk_create(rows, batch_size=5000)
    print(f"  seeded {len(rows):,} pieces of feedback", flush=True)
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE agents_feedback")


def run(args: argparse.Namespace) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "collab.settings")
    os.environ.setdefault("LOG_LEVEL", "ERROR")
    import django

    django.setup()

    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connection, reset_queries
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from agents.models import Agent, ModelCall
    from agents.review.traces import encode_cursor
    from collab.workspaces.models import Workspace

    settings.ALLOWED_HOSTS = ["testserver"]
    settings.STORAGES = {  # pages render without a collectstatic manifest
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }
    call_command("migrate", verbosity=0)
    print(f"database: {connection.vendor}")
    seed(args)
    seed_feedback()
    users = get_user_model()
    staff, _ = users.objects.get_or_create(username="bench-staff", defaults={"is_staff": True})
    workspace = Workspace.objects.order_by("id").first()
    owner = users.objects.get(username="owner0")
    agent = Agent.objects.filter(workspace=workspace).first()
    assert workspace is not None
    assert agent is not None
    today = time.strftime("%Y-%m-%d")
    month_ago = time.strftime("%Y-%m-%d", time.gmtime(time.time() - 30 * 86400))
    old_day = time.strftime("%Y-%m-%d", time.gmtime(time.time() - 75 * 86400))
    middle = ModelCall.objects.order_by("created_at", "id").values("created_at", "id")[
        ModelCall.objects.count() // 2
    ]
    deep = encode_cursor(middle["created_at"], middle["id"])
    as_staff, as_owner = Client(), Client()
    as_staff.force_login(staff)
    as_owner.force_login(owner)
    staff_url = "/review/traces/"
    owner_url = f"/review/w/{workspace.pk}/traces/"
    scenarios = [
        ("staff, no filter", as_staff, staff_url, {}),
        ("staff, deep page (keyset)", as_staff, staff_url, {"before": deep}),
        ("staff, turns view", as_staff, staff_url, {"view": "turns"}),
        ("owner, their workspace", as_owner, owner_url, {}),
        ("staff, one agent", as_staff, staff_url, {"agent": agent.pk}),
        ("staff, model=big", as_staff, staff_url, {"model": "big"}),
        ("staff, status=failed", as_staff, staff_url, {"status": "failed"}),
        ("staff, decision=ask", as_staff, staff_url, {"decision": "ask"}),
        ("staff, has error", as_staff, staff_url, {"errored": "yes"}),
        ("staff, has feedback", as_staff, staff_url, {"has_feedback": "yes"}),
        ("staff, last 30 days", as_staff, staff_url, {"since": month_ago, "until": today}),
        ("staff, one day 75 days ago", as_staff, staff_url, {"since": old_day, "until": old_day}),
        (
            "staff, feedback + decision=ask",
            as_staff,
            staff_url,
            {"has_feedback": "yes", "decision": "ask"},
        ),
        ("staff, search 'castle'", as_staff, staff_url, {"q": "castle"}),
        ("staff, search, rare word", as_staff, staff_url, {"q": "ticket4242"}),
        ("staff, search, 2% word", as_staff, staff_url, {"q": "quarterly"}),
        ("staff, search, no match", as_staff, staff_url, {"q": "zebra"}),
        ("staff, search + agent", as_staff, staff_url, {"q": "lisbon castle", "agent": agent.pk}),
    ]
    total = ModelCall.objects.count()
    print(f"model calls: {total:,}; {args.requests} requests per scenario")
    print(f"{'scenario':34} {'p50 ms':>8} {'p99 ms':>8} {'queries':>8} {'rows':>5}")
    for name, client, url, params in scenarios:
        client.get(url, params)  # warm
        timings = []
        queries = 0
        rows = 0
        for _ in range(args.requests):
            reset_queries()
            with CaptureQueriesContext(connection) as captured:
                began = time.perf_counter()
                response = client.get(url, params)
                timings.append((time.perf_counter() - began) * 1000)
            assert response.status_code == 200, (name, response.status_code)
            queries = len(captured)
            rows = response.content.count(b'href="/review/turns/')
        timings.sort()
        p50 = statistics.median(timings)
        p99 = timings[min(len(timings) - 1, int(len(timings) * 0.99))]
        print(f"{name:34} {p50:8.1f} {p99:8.1f} {queries:8d} {rows:5d}", flush=True)


if __name__ == "__main__":
    main()
