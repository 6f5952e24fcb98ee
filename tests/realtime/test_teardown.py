"""The realtime fixtures' teardown is bounded even by a step that will not be cancelled."""

from __future__ import annotations

import asyncio
import time

import pytest

from tests.realtime.conftest import bounded


async def _swallows_cancellation(stopped: asyncio.Event) -> None:
    """A step like a consumer cancelled inside a receive that does not give up at once."""
    while not stopped.is_set():
        try:
            await stopped.wait()
        except asyncio.CancelledError:
            continue


async def test_a_step_that_swallows_its_cancellation_does_not_hold_the_teardown() -> None:
    stopped = asyncio.Event()
    started = time.monotonic()

    finished = await bounded(_swallows_cancellation(stopped), 0.2)

    # asyncio.wait_for would wait here for as long as the step kept swallowing (for ever)
    assert finished is False
    assert time.monotonic() - started < 5
    stopped.set()  # lets the step end before the test's loop closes
    await asyncio.sleep(0.05)


async def test_a_step_that_ends_in_time_reports_so_and_its_errors_are_raised() -> None:
    async def quick() -> None:
        await asyncio.sleep(0)

    async def times_out() -> None:
        raise TimeoutError

    async def fails() -> None:
        raise RuntimeError("broken close")

    assert await bounded(quick(), 1) is True
    assert await bounded(times_out(), 1) is False
    with pytest.raises(RuntimeError, match="broken close"):
        await bounded(fails(), 1)
