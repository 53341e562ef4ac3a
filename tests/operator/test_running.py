"""The replica's filter in front of the loop's exception handler: what it quiets and what it passes on.

The end-to-end case (kopf's own scan leaving an error unread during an API outage) is in
``test_reconciliation_scenarios.py::test_a_long_outage_turns_liveness_red_then_green``.
"""

from __future__ import annotations

import asyncio
from typing import Any

from noctaya.operator import running


async def _fail() -> None:
    raise OSError("connection refused")


async def test_an_unread_error_of_a_task_that_is_not_kopf_s_reaches_the_handler_before() -> None:
    loop = asyncio.get_running_loop()
    seen: list[dict[str, Any]] = []
    previous = loop.get_exception_handler()
    loop.set_exception_handler(lambda _loop, context: seen.append(context))
    try:
        running.UnreadKopfErrors.install(loop)
        running.UnreadKopfErrors.install(loop)  # once per loop: a second replica adds no second layer
        handler = loop.get_exception_handler()
        assert isinstance(handler, running.UnreadKopfErrors)
        assert not isinstance(handler.previous, running.UnreadKopfErrors)
        task = asyncio.ensure_future(_fail())
        await asyncio.wait([task])
        context = {
            "message": "Task exception was never retrieved",
            "exception": task.exception(),
            "future": task,
        }
        loop.call_exception_handler(context)
        assert seen == [context]
    finally:
        loop.set_exception_handler(previous)
