"""Live document benchmark: prints figures, asserts nothing.

    python bench/realtime.py                 # short run (about 2 minutes)
    python bench/realtime.py --docs 100 --clients 3 --duration 60 --fanout 100 --redis

1. Cold load of a 50 kB document with 10,000 updates of history (with and without compaction).
2. N documents x M clients, every client editing once per second: edit → remote update latency
   p50/p99, dropped and duplicated updates, CPU and RSS of the web process (one Daphne process,
   embedded mode with SQLite unless --redis: then Redis relay and still one web process).
3. Fan-out: one document, F clients, one writer: latency to every other client.
4. The same loads against the reference Node server (@y/websocket-server, in memory, no
   persistence, no authorisation) in the same run, and the ratio Collab / reference.

The load generator (bench/realtime_load.mjs) runs real Yjs clients in one Node process.

Results (2026-11-30 02:55 UTC, 2-core machine, load average 2 to 2.5, embedded mode, 15 s
per load; targets: p50 <= 5 ms, p99 <= 20 ms at 100 x 3, fan-out p99 <= 50 ms, no drops,
ratio to the reference <= 1.0):

    cold load, 50 kB, 10,000 updates     with compaction p50 3.7 ms (no compaction 349 ms)
    100 documents x 3 clients            p50 0.86 ms  p99  6.88 ms  0 dropped, 0 duplicated
                                         server CPU 26 %, peak RSS 166 MB
    fan-out, 1 document x 100 clients    p50 7.77 ms  p99 24.37 ms  0 dropped
    reference (@y/websocket-server)      100 x 3: p50 0.31 ms, p99 3.39 ms, CPU 5 %;
                                         fan-out: p50 2.86 ms, p99 12.22 ms
    ratio Collab / reference             100 x 3: p50 2.75, p99 2.03, CPU 5.1;
                                         fan-out: p50 2.72, p99 1.99

Every target but the ratio is met. The reference keeps documents in memory with no
persistence, authorisation or per-frame checks; each Collab frame also crosses Twisted,
autobahn, Daphne's queue and a Channels consumer before the pycrdt room applies it.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.realtime.live import (  # noqa: E402
    TEST_REDIS_URL,
    LiveSite,
    free_port,
    redis_available,
)

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


class ProcessSampler:
    """CPU seconds and peak RSS of one process, read from /proc while a load runs."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.peak_rss_mb = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def cpu_seconds(self) -> float:
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS

    def _rss_mb(self) -> float:
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return 0.0

    def _run(self) -> None:
        while not self._stop.wait(0.5):
            try:
                self.peak_rss_mb = max(self.peak_rss_mb, self._rss_mb())
            except OSError:
                return

    def __enter__(self) -> ProcessSampler:
        self.cpu_start = self.cpu_seconds()
        self.rss_before_mb = self._rss_mb()
        self.wall_start = time.monotonic()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.cpu = self.cpu_seconds() - self.cpu_start
        self.wall = time.monotonic() - self.wall_start
        self.peak_rss_mb = max(self.peak_rss_mb, self._rss_mb())

    @property
    def cpu_percent(self) -> float:
        return 100 * self.cpu / self.wall if self.wall else 0.0


def node_workdir() -> Path:
    if not shutil.which("node") or not shutil.which("npm"):
        raise SystemExit("bench/realtime.py needs Node.js and npm (the Yjs load generator).")
    from tests.realtime import nodejs

    workdir = nodejs.node_workdir()
    shutil.copy(ROOT / "bench" / "realtime_load.mjs", workdir / "realtime_load.mjs")
    return workdir


def py_spy_start(pid: int, out: Path) -> subprocess.Popen[bytes]:
    """py-spy attached to ``pid`` (collapsed stacks, non-idle threads, without pausing the
    server), stopped with SIGINT at the end of the measured window."""
    py_spy = Path(sys.executable).parent / "py-spy"
    return subprocess.Popen(
        [
            *(str(py_spy), "record", "--pid", str(pid), "--rate", "200", "--nonblocking"),
            *("--format", "raw", "--output", str(out)),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def py_spy_to_profile(raw: Path, out: Path, process_cpu: float) -> None:
    """py-spy's collapsed stacks in bench/_sampler.py's format, so ``summarise`` reads them."""
    stacks: dict[str, float] = {}
    samples = 0
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        frames = []
        for frame in stack.split(";"):
            name, _, where = frame.partition(" (")
            frames.append(f"{where.rsplit(':', 1)[0]}:{name}")
        key = ";".join(frames)
        stacks[key] = stacks.get(key, 0.0) + int(count)
        samples += int(count)
    out.write_text(
        json.dumps(
            {"samples": samples, "process_cpu": process_cpu, "stacks": {"all threads": stacks}}
        )
    )


_ID_BASES = itertools.count(1, 10_000_000)


def run_load(
    workdir: Path,
    config: dict[str, Any],
    pid: int,
    *,
    profile: bool = False,
    py_spy: Path | None = None,
) -> dict[str, Any]:
    """Run one load against the server ``pid``; with ``profile``, tell its sampler (see
    bench/_sampler.py) to sample the measured window only; with ``py_spy``, record the window
    with py-spy into that file (bench/_sampler.py's format)."""
    path = workdir / f"load-{os.getpid()}.json"
    # Every load's edit tokens are new: loads that reuse a document must not count the tokens
    # an earlier load left in it as duplicates.
    config = {**config, "idBase": next(_ID_BASES)}
    path.write_text(json.dumps(config))
    with ProcessSampler(pid) as sampler:
        node = subprocess.Popen(
            ["node", "realtime_load.mjs", path.name],
            cwd=workdir,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert node.stderr is not None
        assert node.stdout is not None
        errors = []
        window: list[float] = []  # the server's CPU seconds at the measured window's ends
        spy: subprocess.Popen[bytes] | None = None
        for line in node.stderr:  # "measuring: start/stop" around the measured window
            if line.startswith("measuring: "):
                window.append(sampler.cpu_seconds())
                start = line.strip().endswith("start")
                if profile:
                    os.kill(pid, signal.SIGUSR1 if start else signal.SIGUSR2)
                if py_spy is not None and start:
                    spy = py_spy_start(pid, py_spy.with_suffix(".raw"))
                elif spy is not None:
                    spy.send_signal(signal.SIGINT)
                    spy.wait(60)
            else:
                errors.append(line)
        stdout = node.stdout.read()
        returncode = node.wait(config["duration"] + config["warmup"] + config["drain"] + 600)
    if returncode != 0:
        raise RuntimeError(f"load generator failed:\n{''.join(errors)[-3000:]}")
    figures: dict[str, Any] = json.loads(stdout.strip().splitlines()[-1])
    figures["cpu_percent"] = sampler.cpu_percent
    measured_cpu = window[-1] - window[0] if len(window) == 2 else None
    if py_spy is not None and measured_cpu:
        py_spy_to_profile(py_spy.with_suffix(".raw"), py_spy, measured_cpu)
    edits = figures["edits"]
    figures["cpu_us_per_edit"] = 1e6 * measured_cpu / edits if measured_cpu and edits else None
    figures["peak_rss_mb"] = sampler.peak_rss_mb
    figures["rss_before_mb"] = sampler.rss_before_mb
    return figures


# Capacity (--capacity): edits per second per client, doubled until the p99 passes 50 ms.
CAPACITY_RATES = (1, 2, 4, 8, 16, 32)
CAPACITY_P99_MS = 50.0


def capacity(workdir: Path, targets: list[dict[str, Any]], pid: int, clients: int) -> list[str]:
    """The 100 x 3 load at rising rates: the highest edits/s whose p99 stays under 50 ms
    with nothing dropped (one web process; the load generator shares the machine)."""
    lines = []
    best = None
    for rate in CAPACITY_RATES:
        figures = run_load(
            workdir,
            {
                **{"warmup": 2, "drain": 2, "duration": 5},
                **{"clientsPerDoc": clients, "writersPerDoc": clients, "rate": rate},
                "targets": targets,
            },
            pid,
        )
        per_second = figures["edits"] / figures["measuredSeconds"]
        ok = (figures["p99"] or 1e9) <= CAPACITY_P99_MS and not figures["drops"]
        lines.append(
            f"    {rate:>2} edit/s per client: {per_second:6.0f} edits/s, p50 "
            f"{figures['p50'] or 0:6.2f} ms, p99 {figures['p99'] or 0:7.2f} ms, dropped "
            f"{figures['drops']}, duplicated {figures['duplicates']}, server CPU "
            f"{figures['cpu_percent']:.0f} %"
        )
        if not ok:
            break
        best = per_second
    verdict = "none" if best is None else f"{best:.0f} edits/s"
    lines.insert(0, f"  capacity (p99 <= {CAPACITY_P99_MS:.0f} ms, no drops): {verdict}")
    return lines


def idle_memory(workdir: Path, per_doc: int, start: Any) -> dict[str, float]:
    """A fresh server (``start()`` returns ``(pid, stop, targets)``) holding ``per_doc`` idle
    sockets on each of its ``targets``: its RSS before and at the peak, and kB per socket."""
    pid, stop, targets = start()
    try:
        time.sleep(1.0)
        figures = run_load(
            workdir,
            {
                **{"warmup": 1, "drain": 0, "duration": 4, "connectBatch": 50},
                **{"clientsPerDoc": per_doc, "writersPerDoc": 0, "rate": 1},
                "targets": targets,
            },
            pid,
        )
    finally:
        stop()
    sockets = figures["clients"] - figures["unsynced"]
    grown = figures["peak_rss_mb"] - figures["rss_before_mb"]
    return {
        "sockets": sockets,
        "unsynced": figures["unsynced"],
        "connect_s": figures["connectSeconds"],
        "before": figures["rss_before_mb"],
        "peak": figures["peak_rss_mb"],
        "per_socket_kb": 1024 * grown / max(sockets, 1),
    }


def print_memory(label: str, figures: dict[str, float]) -> None:
    print(
        f"    {label}: {figures['sockets']:.0f} synced ({figures['unsynced']:.0f} not) in "
        f"{figures['connect_s']:.1f} s; RSS {figures['before']:.0f} -> {figures['peak']:.0f} MB, "
        f"{figures['per_socket_kb']:.0f} kB each"
    )


def cold_large(workdir: Path, target: dict[str, Any], pid: int, chars: int) -> dict[str, Any]:
    """A large document typed over the socket (1,000 updates), then joined by new clients one
    at a time: open -> whole document received (a cold load for Collab, whose room unloads
    between joins; the reference keeps every document in memory)."""
    config = {
        "mode": "coldload",
        "targets": [target],
        **{"updates": 1000, "chunkChars": chars // 1000, "settle": 3, "unloadWait": 4},
        **{"loads": 5, "pause": 4, "duration": 0, "warmup": 0, "drain": 0},
    }
    path = workdir / f"cold-{os.getpid()}.json"
    path.write_text(json.dumps(config))
    done = subprocess.run(
        ["node", "realtime_load.mjs", path.name],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode != 0:
        raise RuntimeError(f"cold load failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def print_cold(label: str, figures: dict[str, Any]) -> None:
    times = sorted(figures["times"])
    print(
        f"    {label}: {figures['received']:,} of {figures['written']:,} chars received; "
        f"open -> synced first {figures['times'][0]:.0f} ms, p50 {times[len(times) // 2]:.0f} ms, "
        f"max {times[-1]:.0f} ms"
    )


def print_load(title: str, figures: dict[str, Any]) -> None:
    def ms(value: float | None) -> str:
        return "n/a" if value is None else f"{value:7.2f} ms"

    print(f"  {title}")
    print(
        f"    clients {figures['clients']} (unsynced {figures['unsynced']}), "
        f"edits {figures['edits']} in {figures['measuredSeconds']:.0f} s, "
        f"remote updates {figures['receipts']}"
    )
    print(
        f"    edit → remote update  p50 {ms(figures['p50'])}   p99 {ms(figures['p99'])}   "
        f"max {ms(figures['max'])}"
    )
    print(
        f"    dropped {figures['drops']}   duplicated {figures['duplicates']}   "
        f"converged docs {figures['convergedDocs']}/{figures['docs']}   "
        f"socket errors {figures['errors']}"
    )
    print(
        f"    server CPU {figures['cpu_percent']:5.1f} % (whole load)   "
        f"{cpu_per_edit(figures)} per edit (measured window)   "
        f"peak RSS {figures['peak_rss_mb']:.0f} MB"
    )


def cpu_per_edit(figures: dict[str, Any]) -> str:
    value = figures.get("cpu_us_per_edit")
    return "n/a" if value is None else f"{value:.0f} µs CPU"


def ratio(ours: float | None, theirs: float | None) -> str:
    if not ours or not theirs:
        return "n/a"
    return f"{ours / theirs:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=100)
    parser.add_argument("--clients", type=int, default=3, help="clients per document")
    parser.add_argument("--rate", type=float, default=1.0, help="edits per second per client")
    parser.add_argument("--duration", type=float, default=15.0, help="measured seconds per load")
    parser.add_argument("--fanout", type=int, default=100, help="clients of the fan-out document")
    parser.add_argument("--fanout-rate", type=float, default=2.0)
    parser.add_argument("--redis", action="store_true", help="production relay through Redis")
    parser.add_argument("--skip-cold-load", action="store_true")
    parser.add_argument("--skip-reference", action="store_true")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="SETTING=VALUE",
        help="an environment setting for the Collab server (e.g. DOCUMENT_FLUSH_DELAY=0.2)",
    )
    parser.add_argument(
        "--profile",
        action="store_true",
        help="run Collab under bench/_sampler.py and print where its CPU goes per edit",
    )
    parser.add_argument(
        "--py-spy",
        action="store_true",
        help="record Collab's measured 100 x 3 window with py-spy and print where its CPU goes",
    )
    parser.add_argument(
        "--capacity",
        action="store_true",
        help="also: edits/s before p99 passes 50 ms, idle sockets and memory, a large cold load",
    )
    parser.add_argument("--idle-sockets", type=int, default=2000)
    parser.add_argument("--large-chars", type=int, default=800_000)
    parser.add_argument(
        "--loop-lag",
        action="store_true",
        help="run Collab under bench/_looplag.py and print its worst event-loop stalls",
    )
    args = parser.parse_args()

    workdir = node_workdir()
    with tempfile.TemporaryDirectory(prefix="collab-bench-") as tmp:
        redis_url = None
        if args.redis:
            if not redis_available():
                raise SystemExit(f"--redis needs Redis at {TEST_REDIS_URL}")
            redis_url = TEST_REDIS_URL
        # Rooms unload 2 s after their last socket, so the large document's joins are cold.
        settings = {"DOCUMENT_ROOM_IDLE_SECONDS": "2"} if args.capacity else {}
        settings.update(item.split("=", 1) for item in args.set)
        site = LiveSite(
            Path(tmp) / "site", redis_url=redis_url, settings={"LOG_LEVEL": "ERROR", **settings}
        )
        try:
            bench(site, workdir, args)
        finally:
            site.close()


def bench(site: LiveSite, workdir: Path, args: argparse.Namespace) -> None:
    mode = "Redis relay" if site.redis_url else "embedded"
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"Collab live documents benchmark ({mode}); {os.cpu_count()} CPUs, load average {load}")
    print("  (the figures are only as quiet as the machine: compare them within one run)")
    cast = site.prepare()

    if not args.skip_cold_load:
        print("\n1. Cold load: 50 kB document, 10,000 updates of history (20 loads each)")
        for label, compact_after in (("with compaction (default)", None), ("no compaction", 10**9)):
            cold = LiveSite(site.directory.parent / f"cold-{compact_after}")
            if compact_after:
                cold.settings["DOCUMENT_COMPACT_AFTER"] = str(compact_after)
            shutil.copy(site.database, cold.database)
            figures = json.loads(cold.manage("coldload", "50000", "10000"))
            print(
                f"  {label}: {figures['chars']:,} chars, {figures['updates']:,} updates, "
                f"{figures['log_rows_after_snapshot']:,} log rows after the snapshot: "
                f"first load {figures['first_ms']:.1f} ms, p50 {figures['p50_ms']:.1f} ms, "
                f"max {figures['max_ms']:.1f} ms"
            )

    task_ids = json.loads(site.manage("tasks", str(max(args.docs, 1))))
    fanout_task = json.loads(site.manage("tasks", "1"))[0]
    token = cast.tokens["alice"]
    headers = {"Authorization": f"Bearer {token}"}
    profile_path = Path(tempfile.gettempdir()) / "collab-realtime-profile.json"
    lag_path = Path(tempfile.gettempdir()) / "collab-realtime-looplag.json"
    spy_path = Path(tempfile.gettempdir()) / "collab-realtime-py-spy.json"
    launcher = None
    if args.profile:
        launcher = [sys.executable, str(ROOT / "bench" / "_sampler.py"), str(profile_path)]
    elif args.loop_lag:
        launcher = [sys.executable, str(ROOT / "bench" / "_looplag.py"), str(lag_path)]
    server = site.start(launcher=launcher)

    common = {"warmup": 3, "drain": 3, "duration": args.duration}
    steady = {
        **common,
        "clientsPerDoc": args.clients,
        "writersPerDoc": args.clients,
        "rate": args.rate,
    }
    fanout = {**common, "clientsPerDoc": args.fanout, "writersPerDoc": 1, "rate": args.fanout_rate}
    title = f"{args.docs} documents x {args.clients} clients at {args.rate:g} edit/s each"
    fan_title = f"fan-out: 1 document x {args.fanout} clients, 1 writer at {args.fanout_rate:g}/s"

    print("\n2. Collab (Daphne, one web process)")
    ours = run_load(
        workdir,
        {**steady, "targets": [{"url": server.url(t), "headers": headers} for t in task_ids]},
        server.process.pid,
        profile=args.profile or args.loop_lag,
        py_spy=spy_path if args.py_spy else None,
    )
    print_load(title, ours)
    ours_fan = run_load(
        workdir,
        {**fanout, "targets": [{"url": server.url(fanout_task), "headers": headers}]},
        server.process.pid,
    )
    print_load(fan_title, ours_fan)
    if args.capacity:
        collab_capacity(site, server, workdir, args, task_ids, headers)
    server.stop()
    if args.profile:
        from bench import _sampler

        print(f"\n  Where Collab's CPU went per edit ({title}, measured window):")
        print(_sampler.summarise(str(profile_path), edits=ours["edits"]))
        print(f"  (collapsed stacks in {profile_path})")
    if args.py_spy:
        from bench import _sampler

        print(f"\n  Where Collab's CPU went per edit, by py-spy ({title}, measured window):")
        print(_sampler.summarise(str(spy_path), edits=ours["edits"]))
        print(f"  (collapsed stacks in {spy_path.with_suffix('.raw')})")
    if args.loop_lag:
        from bench import _looplag

        print(f"\n  Event-loop lag of Collab ({title}, measured window):")
        print(_looplag.summarise(str(lag_path)))

    if args.skip_reference:
        return
    print("\n3. Reference: @y/websocket-server (Node, in memory, no persistence, no auth)")
    port = free_port()
    reference = subprocess.Popen(
        ["node", "node_modules/@y/websocket-server/src/server.js"],
        cwd=workdir,
        env={**os.environ, "HOST": "127.0.0.1", "PORT": str(port)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        time.sleep(1.0)
        base = f"ws://127.0.0.1:{port}"
        theirs = run_load(
            workdir,
            {**steady, "targets": [{"url": f"{base}/bench-{t}"} for t in task_ids]},
            reference.pid,
        )
        print_load(title, theirs)
        theirs_fan = run_load(
            workdir, {**fanout, "targets": [{"url": f"{base}/bench-fanout"}]}, reference.pid
        )
        print_load(fan_title, theirs_fan)
        if args.capacity:
            steady_targets = [{"url": f"{base}/bench-{t}"} for t in task_ids]
            print("\n".join(capacity(workdir, steady_targets, reference.pid, args.clients)))
            print_cold(
                f"large document ({args.large_chars:,} chars, 1,000 updates)",
                cold_large(workdir, {"url": f"{base}/bench-cold"}, reference.pid, args.large_chars),
            )
    finally:
        reference.terminate()
        reference.wait(10)
    if args.capacity:
        reference_memory(workdir, args)

    after = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"\n  (load average now {after})")
    print("\n4. Ratio Collab / reference (lower is better; ≤ 1.0 means as fast or faster)")
    print(
        f"  {title}: p50 {ratio(ours['p50'], theirs['p50'])}, "
        f"p99 {ratio(ours['p99'], theirs['p99'])}, "
        f"CPU per edit {ratio(ours['cpu_us_per_edit'], theirs['cpu_us_per_edit'])}"
    )
    print(
        f"  {fan_title}: p50 {ratio(ours_fan['p50'], theirs_fan['p50'])}, "
        f"p99 {ratio(ours_fan['p99'], theirs_fan['p99'])}"
    )


def collab_capacity(
    site: LiveSite,
    server: Any,
    workdir: Path,
    args: argparse.Namespace,
    task_ids: list[int],
    headers: dict[str, str],
) -> None:
    steady_targets = [{"url": server.url(t), "headers": headers} for t in task_ids]
    print("\n".join(capacity(workdir, steady_targets, server.process.pid, args.clients)))
    cold_task = json.loads(site.manage("tasks", "1"))[0]
    print_cold(
        f"large document ({args.large_chars:,} chars, 1,000 updates)",
        cold_large(
            workdir,
            {"url": server.url(cold_task), "headers": headers},
            server.process.pid,
            args.large_chars,
        ),
    )
    server.stop()
    per_doc = max(1, args.idle_sockets // len(task_ids))
    doc_ids = json.loads(site.manage("tasks", "400"))

    def starter(ids: list[int]) -> Any:
        def start() -> tuple[int, Any, list[dict[str, Any]]]:
            fresh = site.start()
            targets = [{"url": fresh.url(t), "headers": headers} for t in ids]
            return fresh.process.pid, fresh.stop, targets

        return start

    print("  memory (a fresh process each):")
    idle = idle_memory(workdir, per_doc, starter(task_ids))
    print_memory(f"{len(task_ids) * per_doc} idle sockets on {len(task_ids)} documents", idle)
    docs = idle_memory(workdir, 1, starter(doc_ids))
    print_memory("400 documents loaded, one socket each", docs)


def reference_memory(workdir: Path, args: argparse.Namespace) -> None:
    port = free_port()
    base = f"ws://127.0.0.1:{port}"

    def starter(targets: list[dict[str, Any]]) -> Any:
        return lambda: start(targets)

    def start(targets: list[dict[str, Any]]) -> tuple[int, Any, list[dict[str, Any]]]:
        process = subprocess.Popen(
            ["node", "node_modules/@y/websocket-server/src/server.js"],
            cwd=workdir,
            env={**os.environ, "HOST": "127.0.0.1", "PORT": str(port)},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(1.0)

        def stop() -> None:
            process.terminate()
            process.wait(10)

        return process.pid, stop, targets

    print("  memory (a fresh process each):")
    rooms = [{"url": f"{base}/idle-{i}"} for i in range(100)]
    per_doc = max(1, args.idle_sockets // 100)
    print_memory(
        f"{100 * per_doc} idle sockets on 100 documents",
        idle_memory(workdir, per_doc, starter(rooms)),
    )
    docs = [{"url": f"{base}/docs-{i}"} for i in range(400)]
    print_memory("400 documents loaded, one socket each", idle_memory(workdir, 1, starter(docs)))


if __name__ == "__main__":
    main()
