"""Agent turns with an instant fake model: latency to the first token, and turns per second.

    DATABASE_URL=postgres://…/collab_bench REDIS_URL=redis://127.0.0.1:6379/9 \\
        python bench/turns.py [--turns 200] [--burst 300]

Production mode only (a separate worker process needs Redis): use a throwaway database and
Redis db. Starts Daphne and one Celery worker process as production runs it (the configured
pool: threads, ``CELERY_WORKER_CONCURRENCY`` jobs at once) as subprocesses, connects a real
WebSocket client (API token, JSON events) to a task, then:

1. latency, one turn at a time: a person's message mentioning the agent is posted (the
   ``post_message`` service, as the web process does) → the turn starts in the worker (database
   timestamps) → the first streamed token reaches the WebSocket client (client clock);
2. throughput: ``--burst`` messages on as many tasks, and the worker's turns per second
   counted from the first turn's start to the last turn's end; twice: posted while the worker
   runs (this process then competes with it for the CPUs), and queued first with the worker
   told to stop taking jobs (Celery's remote control), then let go at them.

Figures on a shared 2-core machine, ``--turns 100 --burst 200``, before (solo pool, 31
statements per turn) and after (threads pool x8, 19 statements per turn) run back to back:

=========================================  ==================  ==========================
load average ~2                            before              after
=========================================  ==================  ==========================
posted -> turn started, p50 / p99          18.1 / 22.1 ms      18.5-19.7 / 24-28 ms
posted -> first token at client, p50/p99   39.3 / 45.0 ms      36.0-40.5 / 50-52 ms
turns per second, one worker process       21.3                36.0-39.4 (solo pool: 25.1)
worker CPU per turn                        25.6 ms             18.0-20.2 ms
=========================================  ==================  ==========================

At load 6-9 (other sessions busy): 8.0 -> 20.9 turns/s, 37 -> 21 ms CPU per turn, first token
p50 ~62 ms either way.

Latest main on a quiet machine (2026-11-30 03:13 UTC, load average 0.7): posted -> turn started
p50 16.1 / p99 20.1 ms; posted -> first token at client p50 32.5 / p99 40.7 ms; 43.9 turns/s
with one worker process; 16.6 ms worker CPU per turn. Of the 16 ms before the turn starts,
post_message takes about 5 ms (10 statements) up to the enqueue; the rest is the Redis hop
and Celery's delivery to a pool thread. Targets: p50 <= 15 ms, p99 <= 50 ms, >= 100 turns/s.

Then with database connections reused between jobs (CELERY_DB_REUSE_MAX, collab/celery.py;
before, every job opened a new Postgres connection), same machine, load 0.7: turn started p50
11.8 / p99 15.0 ms; first token p50 25.3 / p99 33.8 ms; 58.2 turns/s; 15.6 ms CPU per turn.

The lines "since posting" split the first-token latency by the clock the three processes share:
when ``post_message`` returned, when the worker started the turn, when it stored the first
token. The "floor" lines, measured last, are what any turn costs at least on this machine: the
worker's CPU for a Celery job that does nothing, and in this process one ORM UPDATE by primary
key, one event sent to Redis, and the instant fake model's answer streamed and validated.
2026-11-30 (a slower machine: the commit above measured 27-31 ms CPU per turn), after events
went through one ordered outbox and replies were stored applied with the decision (17
statements): turn started p50 17.7 / p99 25.6 ms; first token p50 42.4 / p99 56.2 ms (returned
12.0, started 18.1, stored 34.7 ms); 27.0 turns/s; 33.1 ms CPU per turn; floors 1.10, 0.33,
0.45 and 0.49 ms.

2026-11-30, a machine as fast as the first, ``--turns 150 --burst 300`` against the previous
head, two pairs back to back: the floor line "a job that only publishes" (delay -> worker ->
channel layer -> Daphne -> client) is 3.1 ms p50; with prepared statements and post_message
enqueueing before it renders, turn started p50 13.6 -> 10.5 ms, first token p50 33 -> 26 ms
(p99 42-44 -> 38 ms), 50 turns/s with the burst queued first (was 42-46), 17-20 ms CPU per
turn.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DAPHNE = [sys.executable, "-m", "daphne", "-b", "127.0.0.1"]
STAGES = (
    "post_message returned (web side)",
    "turn started (worker)",
    "first token stored (worker)",
)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _report(name: str, values_ms: list[float]) -> None:
    print(
        f"{name:<46} n={len(values_ms):<4} p50={_pct(values_ms, 0.5):7.1f} ms  "
        f"p99={_pct(values_ms, 0.99):7.1f} ms  mean={statistics.fmean(values_ms):7.1f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=200, help="sequential turns for latency")
    parser.add_argument("--burst", type=int, default=300, help="turns posted at once")
    args = parser.parse_args()
    if not (os.environ.get("DATABASE_URL") and os.environ.get("REDIS_URL")):
        sys.exit("bench/turns.py needs DATABASE_URL and REDIS_URL (throwaway ones).")
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "collab.settings")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    import django

    django.setup()
    run(args)


def run(args: argparse.Namespace) -> None:
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from websockets.exceptions import ConnectionClosed
    from websockets.sync.client import connect

    from agents.models import ModelProfile, Provider, Turn
    from agents.services import agents as agent_services
    from collab.accounts.services import create_api_token
    from collab.celery import app
    from collab.tasks.models import Task
    from collab.tasks.services import create_task, post_message
    from collab.workspaces.services import create_workspace

    call_command("migrate", verbosity=0)
    app.control.purge()
    stamp = time.time_ns()
    user = get_user_model().objects.create_user(username=f"bench{stamp}")
    workspace = create_workspace(owner=user, name="Bench")
    member = workspace.memberships.select_related("workspace", "user").get()
    profile = ModelProfile.objects.create(
        name=f"bench-instant-{stamp}", provider=Provider.FAKE, model="echo"
    )
    agent_services.create_agent(membership=member, name="Quick", model_profile=profile)
    task = create_task(membership=member, title="Latency")
    token = create_api_token(user=user, name="bench").token

    port = _free_port()
    env = dict(os.environ, LOG_LEVEL="WARNING")
    server = subprocess.Popen(
        [*DAPHNE, "-p", str(port), "collab.asgi:application"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    worker = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "collab",
            "worker",  # as production runs it: the configured pool and concurrency
            "--without-heartbeat",
            "--without-mingle",
            "--without-gossip",
            "--loglevel=WARNING",
            f"--hostname=bench-{stamp}@%h",
            "--include=bench._pipeline_job",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        url = f"ws://127.0.0.1:{port}/ws/tasks/{task.pk}/chat?format=json"

        def open_socket() -> Any:
            for _ in range(1200):  # up to two minutes: start-up is slow on a busy machine
                try:
                    return connect(
                        url, additional_headers={"Authorization": f"Bearer {token}"}, legacy=True
                    )
                except OSError:
                    time.sleep(0.1)
            raise SystemExit("Daphne did not start")

        client = open_socket()
        lost = 0

        def post(on: Task, body: str) -> None:
            post_message(membership=member, task=on, body=body)

        # Warm up: the worker imports and connects on its first job.
        post(task, "@Quick warm up")
        _wait_reply(client, "Quick")

        started_ms: list[float] = []
        first_token_ms: list[float] = []
        # Where the time goes, from the wall clock shared by the three processes.
        stages: dict[str, list[float]] = {name: [] for name in STAGES}
        for n in range(args.turns):
            t0 = time.perf_counter()
            posted_at = time.time()
            post(task, f"@Quick number {n}")
            returned_ms = (time.time() - posted_at) * 1000
            try:
                first = _first_stream(client)
                first_token_ms.append((time.perf_counter() - t0) * 1000)
                _wait_reply(client, "Quick")
            except ConnectionClosed:
                # The server closed the socket (seen under heavy load: channels-redis timing
                # out a read from Redis). Count it, reconnect, and leave this sample out.
                lost += 1
                time.sleep(1)
                client = open_socket()
                continue
            turn = Turn.objects.get(pk=first["turn_id"])
            message_at = turn.task.messages.get(pk=turn.inputs["message_ids"][0]).created_at
            assert turn.started_at is not None
            started_ms.append((turn.started_at - message_at).total_seconds() * 1000)
            assert turn.first_token_at is not None
            for name, ms in zip(
                STAGES,
                (
                    returned_ms,
                    (turn.started_at.timestamp() - posted_at) * 1000,
                    (turn.first_token_at.timestamp() - posted_at) * 1000,
                ),
                strict=True,
            ):
                stages[name].append(ms)
        pipeline_ms = _pipeline(client, task.pk)
        client.close()

        pool = (
            f"{settings.CELERY_WORKER_POOL} pool, concurrency {settings.CELERY_WORKER_CONCURRENCY}"
        )
        print(
            f"bench/turns.py: instant fake model, 1 worker process ({pool}), Postgres + Redis; "
            f"{args.turns} sequential turns, burst of {args.burst}; sockets lost: {lost}"
        )
        _report("message posted -> turn started in worker", started_ms)
        _report("message posted -> first token at WebSocket client", first_token_ms)
        for name, values in stages.items():
            _report(f"  since posting: {name}", values)
        _report("  floor: a job that only publishes, to client", pipeline_ms)

        hostname = f"bench-{stamp}@{socket.gethostname()}"
        # Posted while the worker runs (this process competes with it for the CPUs), then
        # queued first and the worker let go at them (its own capacity).
        for paused in (False, True):
            _burst(args.burst, paused, member, worker.pid, hostname)
        _floor(worker.pid, task, profile.pk)
    finally:
        for process in (worker, server):
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()


def _pipeline(client: Any, task_id: int, jobs: int = 100) -> list[float]:
    """The floor under every turn's first token: from ``delay`` in this process to the
    WebSocket client, for a job that publishes one stream event and does nothing else (no
    database): broker, worker, channel layer, Daphne and the client's socket."""
    from bench._pipeline_job import publish_stream

    times = []
    for mark in range(jobs):
        begin = time.perf_counter()
        publish_stream.delay(task_id, mark)
        while json.loads(client.recv(timeout=60)).get("pipeline") != mark:
            pass
        times.append((time.perf_counter() - begin) * 1000)
    return times


def _burst(count: int, paused: bool, member: Any, worker_pid: int, hostname: str) -> None:
    """``count`` messages, each on a task of its own; turns per second from the first turn's
    start to the last one's end. ``paused``: the worker stops taking jobs from the queue while
    they are posted (Celery's remote control), so that it then runs them with the machine to
    itself but for PostgreSQL, Redis and Daphne."""
    from django.utils import timezone

    from agents.models import Turn
    from collab.celery import app
    from collab.tasks.services import create_task, post_message

    tasks = [create_task(membership=member, title=f"Burst {n}") for n in range(count)]
    first_id = Turn.objects.order_by("-id").values_list("id", flat=True).first() or 0
    if paused:
        app.control.cancel_consumer("celery", destination=[hostname], reply=True)
    cpu_before = _cpu_seconds(worker_pid)
    for on in tasks:
        post_message(membership=member, task=on, body="@Quick go")
    posted_at = timezone.now()
    if paused:
        app.control.add_consumer("celery", destination=[hostname], reply=True)
    deadline = time.monotonic() + 600
    burst = Turn.objects.filter(id__gt=first_id)
    while burst.filter(status__in=["queued", "running"]).exists() or burst.count() < count:
        if time.monotonic() > deadline:
            raise SystemExit("the burst did not finish in 10 minutes")
        time.sleep(0.2)
    times = burst.values_list("started_at", "finished_at")
    begin = min(t[0] for t in times if t[0])
    end = max(t[1] for t in times if t[1])
    seconds = (end - begin).total_seconds()
    if paused and begin < posted_at:
        raise SystemExit("the worker did not stop taking jobs while the burst was posted")
    load = os.getloadavg()[0]
    how = "queued first" if paused else "posted meanwhile"
    print(
        f"{'turns per second, one worker process':<46} {count / seconds:7.1f} "
        f"({count} turns {how}, in {seconds:.2f} s; load average {load:.1f})"
    )
    cpu = _cpu_seconds(worker_pid) - cpu_before
    print(
        f"{'  worker CPU per turn (user + system)':<46} {cpu / count * 1000:7.1f} ms "
        f"-> at most {count / cpu:.0f} turns per CPU-second"
    )


def _floor(worker_pid: int, task: Any, profile_id: int, jobs: int = 500, repeat: int = 300) -> None:
    """What any turn costs at least on this machine, whatever the turn engine does: the worker's
    CPU for a Celery job that does nothing (``celery.accumulate``, same broker, acks and pool),
    and, in this process, one ORM statement (an UPDATE by primary key), one event published to
    Redis, and the instant fake model's answer streamed through langchain-core and validated."""
    import redis
    from django.conf import settings
    from django.utils import timezone
    from langchain_core.messages import HumanMessage

    from agents import llm
    from agents.models import ModelProfile, Turn
    from collab.celery import app
    from collab.realtime import broadcast

    broker = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    unacked = broker.hlen("unacked")  # delivered, not yet acknowledged (acks_late)
    cpu_before = _cpu_seconds(worker_pid)
    for n in range(jobs):
        app.send_task("celery.accumulate", args=(n,))
    deadline = time.monotonic() + 120
    while broker.llen("celery") or broker.hlen("unacked") > unacked:
        if time.monotonic() > deadline:
            raise SystemExit("the no-op jobs did not finish in 2 minutes")
        time.sleep(0.05)
    job_ms = (_cpu_seconds(worker_pid) - cpu_before) / jobs * 1000

    def cpu_ms(fn: Any, n: int) -> float:
        fn()
        begin = time.process_time()
        for _ in range(n):
            fn()
        return (time.process_time() - begin) / n * 1000

    turn_id = Turn.objects.filter(task=task).values_list("pk", flat=True).first()
    update_ms = cpu_ms(
        lambda: Turn.objects.filter(pk=turn_id, status="done").update(
            lease_expires_at=timezone.now()
        ),
        repeat,
    )

    def publish() -> None:
        broadcast.group_send("bench-floor", {"type": "x"})
        broadcast.flush()

    publish_ms = cpu_ms(publish, repeat)
    profile = ModelProfile.objects.get(pk=profile_id)
    prompt = [HumanMessage("@Quick number 1")]

    def answer() -> None:
        text = "".join(p.text for p in llm.stream_model(llm.build_chat_model(profile), prompt))
        llm.parse_decision(profile, text)

    model_ms = cpu_ms(answer, repeat)
    print(f"{'floor: worker CPU for a no-op Celery job':<46} {job_ms:7.2f} ms")
    print(f"{'floor: one ORM UPDATE by primary key (CPU)':<46} {update_ms:7.2f} ms")
    print(f"{'floor: one event published to Redis (CPU)':<46} {publish_ms:7.2f} ms")
    print(f"{'floor: instant fake model streamed and parsed':<46} {model_ms:7.2f} ms")


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _first_stream(client: Any) -> dict[str, Any]:
    while True:
        event = json.loads(client.recv(timeout=60))
        if event.get("type") == "agent.stream":
            return event


def _wait_reply(client: Any, agent: str) -> None:
    while True:
        event = json.loads(client.recv(timeout=60))
        if event.get("type") == "agent.turn" and event.get("status") in ("done", "failed"):
            return


if __name__ == "__main__":
    main()
