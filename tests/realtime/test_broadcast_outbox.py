"""Publishing from threads with no event loop (Celery workers, management commands): callers
hand events over and go on; the events are sent one at a time in the order handed over."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

from collab.realtime import broadcast


@pytest.fixture
def outbox() -> Iterator[broadcast._Outbox]:
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    yield broadcast._Outbox(loop)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(5)
    loop.close()


def test_the_caller_does_not_wait_for_the_send(outbox: broadcast._Outbox) -> None:
    release = threading.Event()
    sent: list[str] = []

    async def slow_send() -> None:
        await asyncio.get_running_loop().run_in_executor(None, release.wait, 10)
        sent.append("slow")

    outbox.submit(slow_send())
    assert sent == []  # submit returned while the send is still blocked
    release.set()
    assert outbox.flush(10)
    assert sent == ["slow"]


def test_events_are_sent_in_the_order_they_were_handed_over(outbox: broadcast._Outbox) -> None:
    sent: list[tuple[int, int]] = []

    async def send(thread: int, number: int) -> None:
        # Later events wait less: sent concurrently, they would overtake earlier ones.
        await asyncio.sleep(0.002 * ((50 - number) % 5))
        sent.append((thread, number))

    def hand_over(thread: int) -> None:
        for number in range(50):
            outbox.submit(send(thread, number))

    threads = [threading.Thread(target=hand_over, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert outbox.flush(30)
    assert len(sent) == 200
    for thread in range(4):
        assert [n for t, n in sent if t == thread] == list(range(50))


def test_a_failed_send_is_logged_and_the_next_one_goes(
    outbox: broadcast._Outbox, caplog: pytest.LogCaptureFixture
) -> None:
    sent: list[str] = []

    async def broken() -> None:
        raise ConnectionError("redis went away")

    async def fine() -> None:
        sent.append("fine")

    outbox.submit(broken())
    outbox.submit(fine())
    assert outbox.flush(10)
    assert sent == ["fine"]
    assert "broadcast failed" in caplog.text


def test_group_send_from_a_plain_thread_reaches_the_group() -> None:
    layer = get_channel_layer()
    assert layer is not None
    channel = async_to_sync(layer.new_channel)()
    group = f"outbox-test-{threading.get_ident()}"
    async_to_sync(layer.group_add)(group, channel)
    try:
        results: list[None] = []
        worker = threading.Thread(
            target=lambda: results.append(broadcast.group_send(group, {"type": "t", "n": 1}))
        )
        worker.start()
        worker.join(10)
        assert results == [None]
        assert broadcast.flush(10)
        message = async_to_sync(layer.receive)(channel)
        assert message == {"type": "t", "n": 1}
    finally:
        async_to_sync(layer.group_discard)(group, channel)


def test_a_stuck_send_is_given_up_after_its_timeout() -> None:
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    outbox = broadcast._Outbox(loop, send_timeout=0.05)
    sent: list[str] = []

    async def stuck() -> None:
        await asyncio.Event().wait()  # Redis never answers

    async def fine() -> None:
        sent.append("fine")

    try:
        outbox.submit(stuck())
        outbox.submit(fine())
        assert outbox.flush(10)
        assert sent == ["fine"]
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
        loop.close()


def test_while_the_backlog_is_full_new_events_are_dropped_not_queued() -> None:
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    outbox = broadcast._Outbox(loop, max_pending=3)
    release = threading.Event()
    sent: list[int] = []

    async def send(number: int) -> None:
        await asyncio.get_running_loop().run_in_executor(None, release.wait, 10)
        sent.append(number)

    try:
        for number in range(10):
            outbox.submit(send(number))
        handed_over = threading.Event()
        loop.call_soon_threadsafe(handed_over.set)  # after the ten hand-overs
        assert handed_over.wait(10)
        release.set()
        assert outbox.flush(10)
        # at most one was being sent and three waited, in order; the others were dropped (the
        # first may have left the queue for sending at any point of the hand-overs)
        assert sent[:3] == [0, 1, 2]
        assert len(sent) <= 4
        assert sent == sorted(sent)
        assert outbox.dropped == 10 - len(sent)
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
        loop.close()
