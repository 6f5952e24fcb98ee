"""Run Daphne with an event-loop lag probe (used by ``bench/realtime.py --loop-lag``).

    python bench/_looplag.py OUT.json daphne-args...

A callback scheduled every ``PERIOD`` on Daphne's asyncio loop (the one Twisted's reactor runs
on) records how late it ran: that lateness is a stall, time the loop could not run anything.
A watchdog thread looks at the main thread's Python stack whenever the callback is overdue by
more than ``THRESHOLD``, so each stall is reported with what the loop was doing meanwhile (a
stack ending in ``select`` means the loop was idle and the process was not given the CPU: the
machine's load, not the server's own work).

Probing starts on SIGUSR1 and stops on SIGUSR2, which writes ``OUT.json`` (the bench sends them
around the load generator's measured window).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from typing import Any

PERIOD = 0.005
THRESHOLD = float(os.environ.get("LOOPLAG_THRESHOLD", "0.010"))
TOP = 10


class Probe:
    def __init__(self, out: str) -> None:
        self.out = out
        self.active = False
        self.expected = 0.0
        self.lags: list[float] = []
        self.stalls: list[tuple[float, list[str]]] = []
        self.stack: list[str] | None = None  # seen by the watchdog during the current stall
        self.main = threading.main_thread().ident

    def install(self, loop: Any) -> None:
        self.loop = loop
        loop.call_soon_threadsafe(self._beat)
        threading.Thread(target=self._watch, daemon=True, name="looplag").start()

    def _beat(self) -> None:
        now = time.perf_counter()
        if self.active and self.expected:
            lag = max(0.0, now - self.expected)
            self.lags.append(lag)
            if lag >= THRESHOLD:
                self.stalls.append((lag, self.stack or ["(not seen by the watchdog)"]))
        self.stack = None
        self.expected = now + PERIOD
        self.loop.call_later(PERIOD, self._beat)

    def _watch(self) -> None:
        while True:
            time.sleep(0.002)
            if not self.active or not self.expected or self.stack is not None:
                continue
            if time.perf_counter() - self.expected < THRESHOLD / 2:
                continue
            frame = sys._current_frames().get(self.main)  # type: ignore[arg-type]
            stack = []
            while frame is not None:
                path = frame.f_code.co_filename
                for marker in ("site-packages/", "/collab/", "/python3.11/"):
                    if marker in path:
                        path = path.split(marker, 1)[1]
                        break
                stack.append(f"{path}:{frame.f_code.co_name}:{frame.f_lineno}")
                frame = frame.f_back
            self.stack = stack

    def start(self, *_: object) -> None:
        self.lags, self.stalls, self.active = [], [], True

    def stop(self, *_: object) -> None:
        self.active = False
        with open(self.out, "w") as handle:
            json.dump({"lags": self.lags, "stalls": self.stalls}, handle)


def summarise(path: str, *, top: int = TOP) -> str:
    with open(path) as handle:
        data = json.load(handle)
    lags = sorted(data["lags"])
    if not lags:
        return "  no probe beats recorded"
    ms = [1000 * lag for lag in lags]

    def q(p: float) -> float:
        return ms[min(len(ms) - 1, int(p * len(ms)))]

    over = sum(1 for lag in ms if lag > 20)
    lines = [
        f"  {len(ms)} beats every {PERIOD * 1000:.0f} ms: lag p50 {q(0.5):.2f} ms, "
        f"p99 {q(0.99):.2f} ms, max {ms[-1]:.1f} ms; {over} stalls over 20 ms"
    ]
    stalls = sorted(data["stalls"], key=lambda row: -row[0])[:top]
    if stalls:
        lines.append(f"  worst stalls (≥ {THRESHOLD * 1000:.0f} ms), innermost frames first:")
    for lag, stack in stalls:
        lines.append(f"    {1000 * lag:6.1f} ms  {' < '.join(stack[:4])}")
    return "\n".join(lines)


def main() -> None:
    out, args = sys.argv[1], sys.argv[2:]
    probe = Probe(out)
    signal.signal(signal.SIGUSR1, probe.start)
    signal.signal(signal.SIGUSR2, probe.stop)
    import daphne.server  # noqa: F401  (installs Twisted's asyncio reactor)
    from daphne.cli import CommandLineInterface
    from twisted.internet import reactor

    reactor.callWhenRunning(lambda: probe.install(reactor._asyncioEventloop))  # type: ignore[attr-defined]
    CommandLineInterface().run(args)


if __name__ == "__main__":
    main()
