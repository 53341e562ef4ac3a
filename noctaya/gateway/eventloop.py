"""The running event loop, asked for once by what asks for it on every request.

asyncio's ``get_running_loop`` (and ``current_task`` without a loop) checks the process id each time
it is asked, a ``getpid`` system call: several per proxied request. :class:`RunningLoop` asks once,
the first time it is called inside the loop, and hands back the same loop after.
"""

from __future__ import annotations

import asyncio

__all__ = ["RunningLoop"]


class RunningLoop:
    """``loop = running()``: the loop this object was first called on."""

    __slots__ = ("_loop",)

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None

    def __call__(self) -> asyncio.AbstractEventLoop:
        loop = self._loop
        if loop is None:
            loop = self._loop = asyncio.get_running_loop()
        return loop
