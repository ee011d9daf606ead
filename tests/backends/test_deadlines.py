"""DeadlineWatch: one watcher ends the requests that outlive their deadline, and only those."""

from __future__ import annotations

import asyncio
import time

import pytest

from authpairs.backends.deadlines import DeadlineExceeded, DeadlineWatch


async def _request(watch: DeadlineWatch, seconds: float) -> str:
    """A request that takes ``seconds``, under the watch."""
    watched = watch.start()
    try:
        await asyncio.sleep(seconds)
    except asyncio.CancelledError:
        watch.raise_if_expired(watched)
        raise
    finally:
        watch.stop(watched)
    return "reply"


async def test_a_request_past_its_deadline_ends_within_a_tick() -> None:
    watch = DeadlineWatch(0.2)
    started = time.monotonic()
    with pytest.raises(DeadlineExceeded, match=r"within the 0\.2 s deadline"):
        await _request(watch, 5.0)
    elapsed = time.monotonic() - started
    assert 0.2 <= elapsed < 0.2 + watch.tick + 0.2
    assert asyncio.current_task().cancelling() == 0  # type: ignore[union-attr]


async def test_requests_within_the_deadline_are_untouched_and_the_watcher_stops() -> None:
    watch = DeadlineWatch(0.4)
    replies = await asyncio.gather(*(_request(watch, 0.05 * n) for n in range(6)))
    assert replies == ["reply"] * 6
    await asyncio.sleep(2 * watch.tick)
    assert watch._watcher is not None and watch._watcher.done()
    assert await _request(watch, 0.01) == "reply"  # a later request starts a new watcher


async def test_only_the_late_ones_of_many_are_stopped() -> None:
    watch = DeadlineWatch(0.3)
    results = await asyncio.gather(*(_request(watch, s) for s in (0.05, 2.0, 0.1, 3.0)),
                                   return_exceptions=True)
    assert results[0] == results[2] == "reply"
    assert isinstance(results[1], DeadlineExceeded) and isinstance(results[3], DeadlineExceeded)


async def test_a_cancellation_from_elsewhere_stays_a_cancellation() -> None:
    watch = DeadlineWatch(0.2)
    task = asyncio.ensure_future(_request(watch, 5.0))
    await asyncio.sleep(0.05)
    task.cancel()  # the run stops (Ctrl-C) before the deadline
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_a_cancellation_from_elsewhere_wins_over_an_expired_deadline() -> None:
    watch = DeadlineWatch(0.05)

    async def request_then_cancelled_too() -> str:
        watched = watch.start()
        try:
            while not watched.expired:  # hold the loop until the watch has cancelled us
                await asyncio.sleep(0)
        except asyncio.CancelledError:
            asyncio.current_task().cancel()  # type: ignore[union-attr]  # and the run stops
            watch.raise_if_expired(watched)
            raise
        finally:
            watch.stop(watched)
        return "reply"

    task = asyncio.ensure_future(request_then_cancelled_too())
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_close_stops_the_watcher() -> None:
    watch = DeadlineWatch(10.0)
    task = asyncio.ensure_future(_request(watch, 5.0))
    await asyncio.sleep(0.01)
    watcher = watch._watcher
    watch.close()
    await asyncio.sleep(0)
    assert watcher is not None and watcher.done()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


def test_the_tick_is_an_eighth_of_the_deadline_and_at_most_a_second() -> None:
    assert DeadlineWatch(0.8).tick == pytest.approx(0.1)
    assert DeadlineWatch(600.0).tick == 1.0
    assert DeadlineWatch(0.001).tick == 0.01
