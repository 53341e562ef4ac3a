"""The deduplicating work queue.

Aspects: a burst of marks for one key costs one pass; a key is never processed twice at once and a
mark during a pass runs it once more afterwards; distinct keys run concurrently up to ``workers``;
failures retry with capped exponential backoff, reset by success, however many there were in a row;
"run again after" delays, with the earliest pending time winning; ``forget`` drops a key; stopping
cancels workers and timers.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from noctaya.operator import queueing

pytestmark = pytest.mark.looptime  # a fake loop clock: backoffs and delays are exact, whatever the load

Process = Callable[[str], Awaitable[float | None]]


@contextlib.asynccontextmanager
async def running(
    process: Process, *, workers: int = 2, base: float = 0.01, cap: float = 0.04
) -> AsyncIterator[queueing.WorkQueue[str]]:
    queue: queueing.WorkQueue[str] = queueing.WorkQueue(
        process=process, workers=workers, base_backoff=base, max_backoff=cap
    )
    task = asyncio.create_task(queue.run())
    try:
        yield queue
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def idle(queue: queueing.WorkQueue[str]) -> None:
    for _ in range(500):
        await asyncio.sleep(0.005)
        if queue.depth == 0 and queue.in_flight == 0:
            return
    raise AssertionError("queue did not drain")


async def test_a_burst_costs_one_pass() -> None:
    seen: list[str] = []

    async def process(key: str) -> None:
        seen.append(key)

    async with running(process) as queue:
        for _ in range(100):
            queue.add("a")
        assert queue.depth == 1
        await idle(queue)
    assert seen == ["a"]


async def test_never_twice_at_once_and_marks_during_a_pass_rerun() -> None:
    active: set[str] = set()
    overlaps = 0
    calls = 0
    gate = asyncio.Event()

    async def process(key: str) -> None:
        nonlocal overlaps, calls
        calls += 1
        overlaps += key in active
        active.add(key)
        await gate.wait()
        active.discard(key)

    async with running(process, workers=4) as queue:
        queue.add("a")
        await asyncio.sleep(0.02)
        for _ in range(10):
            queue.add("a")  # while in flight
        gate.set()
        await idle(queue)
    assert overlaps == 0
    assert calls == 2


async def test_distinct_keys_run_concurrently_up_to_the_bound() -> None:
    running_now = 0
    peak = 0

    async def process(key: str) -> None:
        nonlocal running_now, peak
        running_now += 1
        peak = max(peak, running_now)
        await asyncio.sleep(0.02)
        running_now -= 1

    async with running(process, workers=3) as queue:
        for i in range(10):
            queue.add(str(i))
        await idle(queue)
    assert peak == 3
    assert queue.processed == 10


async def test_failures_back_off_exponentially_and_success_resets() -> None:
    times: list[float] = []
    loop = asyncio.get_running_loop()

    async def process(key: str) -> None:
        times.append(loop.time())
        if len(times) <= 4:
            raise RuntimeError("boom")

    async with running(process, base=0.02, cap=0.05) as queue:
        queue.add("a")
        for _ in range(200):
            await asyncio.sleep(0.005)
            if len(times) == 5:
                break
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert len(times) == 5
    assert gaps == pytest.approx([0.02, 0.04, 0.05, 0.05], abs=1e-6)  # capped at 0.05 (uncapped: 0.16)


@pytest.mark.looptime(False)  # 1100 nanosecond backoffs: nothing to fake, and each fake step costs cycles
async def test_a_long_run_of_failures_keeps_retrying_at_the_cap() -> None:
    attempts = 0
    done = asyncio.Event()

    async def process(key: str) -> None:
        nonlocal attempts
        attempts += 1
        if attempts <= 1100:  # past 2**1024, which no float holds
            raise RuntimeError("boom")
        done.set()

    async with running(process, base=1e-9, cap=1e-9) as queue:
        queue.add("a")
        await asyncio.wait_for(done.wait(), 20)
        await idle(queue)
    assert attempts == 1101


async def test_requeue_after_and_earliest_wins() -> None:
    calls: list[float] = []
    loop = asyncio.get_running_loop()

    async def process(key: str) -> float | None:
        calls.append(loop.time())
        return 0.05 if len(calls) == 1 else None

    async with running(process) as queue:
        start = loop.time()
        queue.add("a")
        await asyncio.sleep(0.1)
        assert len(calls) == 2 and calls[1] - start == pytest.approx(0.05, abs=1e-6)
        queue.add("b", after=5.0)
        queue.add("b", after=0.01)  # earlier wins
        queue.add("b", after=1.0)  # later is ignored
        await asyncio.sleep(0.05)
        assert len(calls) == 3 and calls[2] - start == pytest.approx(0.11, abs=1e-6)
        await asyncio.sleep(10.0)
    assert len(calls) == 3  # the later marks for "b" were merged into the earliest


async def test_forget_drops_a_key() -> None:
    seen: list[str] = []

    async def process(key: str) -> None:
        seen.append(key)

    async with running(process, workers=1) as queue:
        gate_key = "x"
        queue.add("b", after=0.02)
        queue.add(gate_key)
        queue.forget(gate_key)
        queue.forget("b")
        await asyncio.sleep(0.05)
    assert seen == []


def test_needs_a_worker() -> None:
    async def process(key: str) -> None:
        return None

    with pytest.raises(ValueError):
        queueing.WorkQueue(process=process, workers=0)


async def test_a_backoff_holds_against_marks_and_a_reset_ends_it() -> None:
    times: list[float] = []
    loop = asyncio.get_running_loop()
    ran = asyncio.Event()

    async def process(key: str) -> None:
        times.append(loop.time())
        ran.set()
        if len(times) <= 2:
            raise queueing.Failed("refused (reported)")

    async def next_pass() -> None:
        await ran.wait()
        ran.clear()

    async with running(process, base=1.0, cap=4.0) as queue:
        start = loop.time()
        queue.add("a")
        await next_pass()
        for _ in range(20):  # watch events during the backoff
            queue.add("a")
            await asyncio.sleep(0.02)
        assert len(times) == 1 and queue.backing_off == 1 and not queue.idle("a")
        await next_pass()
        assert times[1] - times[0] == pytest.approx(1.0, abs=1e-6)  # the logged 1.0 s, marks or not
        queue.add("a", reset=True)  # a spec change: at once, and the streak starts over
        await next_pass()
        assert times[2] - times[1] < 0.01
        await idle(queue)
        assert queue.backing_off == 0 and queue.idle("a")
    assert times[0] == pytest.approx(start, abs=1e-6)


async def test_failures_log_without_a_traceback_but_the_first_unexpected_one(
    caplog: pytest.LogCaptureFixture,
) -> None:
    errors: list[Exception] = [
        queueing.Failed("quota"),
        ValueError("bug"),
        ValueError("bug"),
        OSError("down"),
    ]
    done = asyncio.Event()

    async def process(key: str) -> None:
        if errors:
            raise errors.pop(0)
        done.set()

    queue: queueing.WorkQueue[str] = queueing.WorkQueue(
        process=process, workers=1, base_backoff=0.01, max_backoff=0.01, expected=(OSError,)
    )
    task = asyncio.create_task(queue.run())
    try:
        queue.add("a")
        await done.wait()
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    tracebacks = [r for r in caplog.records if r.exc_info]
    assert len(tracebacks) == 1 and "bug" in str(tracebacks[0].exc_info)
    assert all("quota" not in r.getMessage() for r in caplog.records if r.levelno >= 20)
    assert any("down" in r.getMessage() and not r.exc_info for r in caplog.records)
