"""Run Daphne under a CPU-time stack sampler (used by ``bench/realtime.py --profile``).

    python bench/_sampler.py OUT.json daphne-args...

Every ``INTERVAL`` seconds of the process's CPU time (``ITIMER_PROF``), the signal handler
charges that interval to the current Python stack (``sys._current_frames``) of each thread that
is not waiting (split by the CPU each thread's own clock shows since the last signal), or to the
event loop's ``epoll`` when none is busy. C code (pycrdt's Rust, the ``socket`` send, sqlite3)
is billed to the Python line that called it. A short burst that ends between two signals is
only seen statistically, as in any sampling profiler. No dependency: py-spy is not installed on
the machines used so far.

Sampling starts on SIGUSR1 and stops on SIGUSR2, which writes ``OUT.json``: collapsed stacks
(``file:function;...`` → CPU seconds) per thread name (``bench/realtime.py --profile`` sends
them around the load generator's measured window, so start-up and connections are left out).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from collections import defaultdict
from types import FrameType

INTERVAL = float(os.environ.get("SAMPLER_INTERVAL", "0.005"))
# A thread whose innermost Python frame is one of these is waiting, not computing.
IDLE = {"select", "_worker", "wait", "get", "acquire", "sleep", "poll"}
ROOTS = tuple(
    sorted(
        {path.rstrip("/") + "/" for path in sys.path if path and os.path.isdir(path)},
        key=len,
        reverse=True,
    )
)


def _where(frame: FrameType) -> str:
    path = frame.f_code.co_filename
    for root in ROOTS:
        if path.startswith(root):
            path = path[len(root) :]
            break
    return f"{path}:{frame.f_code.co_name}"


class Sampler:
    def __init__(self, out: str) -> None:
        self.out = out
        self.stacks: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
        self.last: dict[int, float] = {}
        self.clocks: dict[int, int] = {}
        self.samples = 0

    def _cpu(self, ident: int) -> float | None:
        clock = self.clocks.get(ident)
        if clock is None:
            try:
                clock = self.clocks[ident] = time.pthread_getcpuclockid(ident)
            except OSError:
                return None
        try:
            return time.clock_gettime(clock)
        except OSError:
            return None

    def sample(self, signum: int, frame: FrameType | None) -> None:
        """One signal = INTERVAL of the process's CPU: charged to the threads that were not
        idle (by the CPU each used since the last signal), or to the main thread's stack when
        every thread was idle (the epoll syscall itself)."""
        self.samples += 1
        names = {thread.ident: thread.name for thread in threading.enumerate()}
        main = threading.main_thread().ident
        busy: list[tuple[str, list[str], float]] = []
        idle_main: tuple[str, list[str], float] | None = None
        for ident, top in sys._current_frames().items():
            now = self._cpu(ident)
            if now is None:
                continue
            used = now - self.last.get(ident, now)
            self.last[ident] = now
            # In the main thread, the handler's own frame is on top: start below it.
            current: FrameType | None = frame if ident == main else top
            if current is None:
                continue
            idle = current.f_code.co_name in IDLE
            stack = []
            while current is not None:
                stack.append(_where(current))
                current = current.f_back
            name = names.get(ident, str(ident))
            if name.startswith("ThreadPoolExecutor") or name.startswith("asyncio_"):
                name = "executor"
            if not idle and used > 0:
                busy.append((name, stack, used))
            elif ident == main:
                idle_main = (name, stack, 1.0)
        if not busy and idle_main is not None:
            busy = [idle_main]
        weight = sum(used for _, _, used in busy)
        for name, stack, used in busy:
            self.stacks[name][";".join(reversed(stack))] += INTERVAL * used / weight

    def start(self, *_: object) -> None:
        self.stacks.clear()
        self.samples = 0
        self.last = {}
        for ident in sys._current_frames():
            cpu = self._cpu(ident)
            if cpu is not None:
                self.last[ident] = cpu
        self.cpu_start = time.process_time()
        signal.signal(signal.SIGPROF, self.sample)
        signal.setitimer(signal.ITIMER_PROF, INTERVAL, INTERVAL)

    def stop(self, *_: object) -> None:
        signal.setitimer(signal.ITIMER_PROF, 0, 0)
        with open(self.out, "w") as handle:
            json.dump(
                {
                    "samples": self.samples,
                    "process_cpu": time.process_time() - self.cpu_start,
                    "stacks": {name: dict(rows) for name, rows in self.stacks.items()},
                },
                handle,
            )


def main() -> None:
    out, args = sys.argv[1], sys.argv[2:]
    sampler = Sampler(out)

    signal.signal(signal.SIGUSR1, sampler.start)
    signal.signal(signal.SIGUSR2, sampler.stop)
    from daphne.cli import CommandLineInterface

    CommandLineInterface().run(args)


if __name__ == "__main__":
    main()


# Where a stack's CPU goes: the first rule matching a frame, from the innermost frame out.
CATEGORIES = (
    ("twisted/internet/tcp.py:writeSomeData", "socket writes (send syscalls)"),
    ("twisted/python/util.py:untilConcludes", "socket writes (send syscalls)"),
    ("twisted/internet/tcp.py:doRead", "socket reads (recv syscalls)"),
    ("sqlite3", "database writer (SQLite, ORM)"),
    ("django/db/", "database writer (SQLite, ORM)"),
    ("collab/tasks/documents", "database writer (SQLite, ORM)"),
    ("pycrdt/", "pycrdt (apply, encode, merge)"),
    ("collab/lib/yupdate", "update checks (collab/lib/yupdate.py)"),
    ("autobahn/", "autobahn framing (frames, masks, UTF-8)"),
    ("daphne/", "Daphne (protocol, queues, reply dispatch)"),
    ("channels/", "Channels (consumer, dispatch, middleware)"),
    ("asgiref/", "asgiref (sync_to_async, threads)"),
    ("collab/realtime/", "collab realtime (rooms, consumer, protocol)"),
    ("twisted/", "Twisted reactor and transports"),
    ("selectors.py:select", "waiting for I/O (epoll_wait)"),
    ("selectors.py:EpollSelector.select", "waiting for I/O (epoll_wait)"),  # py-spy's name
    ("selectors.py", "selector registration (epoll_ctl)"),
    ("asyncio/", "asyncio event loop"),
)


def category(stack: str) -> str:
    frames = stack.split(";")
    for where in reversed(frames):
        for needle, name in CATEGORIES:
            if needle in where:
                return name
    return "other"


def summarise(path: str, *, edits: int, top: int = 25) -> str:
    """A printable breakdown of ``OUT.json``: CPU per category and per thread, in microseconds
    per edit, and the functions holding the most CPU (inclusive)."""
    with open(path) as handle:
        data = json.load(handle)
    lines = [f"  {data['samples']} samples, process CPU {data['process_cpu']:.2f} s"]
    by_category: dict[str, float] = defaultdict(float)
    by_thread: dict[str, float] = defaultdict(float)
    inclusive: dict[str, float] = defaultdict(float)
    self_time: dict[str, float] = defaultdict(float)
    for thread, rows in data["stacks"].items():
        for stack, cpu in rows.items():
            by_thread[thread] += cpu
            by_category[category(stack)] += cpu
            frames = stack.split(";")
            self_time[frames[-1]] += cpu
            for where in set(frames):
                inclusive[where] += cpu
    total = sum(by_thread.values()) or 1.0
    # Signals that come while one is pending are merged: scale the samples to the CPU used.
    per = 1e6 / max(edits, 1) * (data["process_cpu"] / total)
    lines.append(
        f"  process CPU {data['process_cpu'] * 1e6 / max(edits, 1):.0f} µs per edit"
        f" ({edits} edits), shared out by the samples"
    )
    lines.append("  by thread:")
    for name, cpu in sorted(by_thread.items(), key=lambda row: -row[1]):
        lines.append(f"    {cpu * per:7.0f} µs  {100 * cpu / total:5.1f} %  {name}")
    lines.append("  by category (innermost known frame):")
    for name, cpu in sorted(by_category.items(), key=lambda row: -row[1]):
        lines.append(f"    {cpu * per:7.0f} µs  {100 * cpu / total:5.1f} %  {name}")
    lines.append(f"  top {top} functions, inclusive / self:")
    for where, cpu in sorted(inclusive.items(), key=lambda row: -row[1])[:top]:
        lines.append(f"    {cpu * per:7.0f} / {self_time.get(where, 0.0) * per:6.0f} µs  {where}")
    return "\n".join(lines)
