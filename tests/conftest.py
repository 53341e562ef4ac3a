"""Fixtures shared by every test.

- jsii runs quietly (the Node.js deprecation banners are not test output).
- ``_no_asyncio_pending_tasks``: every test must leave no asyncio task behind; a leak fails the test.
- ``reserve_port``: loopback ports held for the test, for servers that must be named before they start.
- ``xdist_group`` marks hold under ``--dist loadgroup``: pytest-xdist 3.8 names a group by renaming
  ``item._nodeid``, which pytest 9.2 no longer reads (a node's id is ``item._id``), so without the hook
  below every worker ran grouped tests and each brought up its own copy of a shared fixture.
- hypothesis runs without its per-example time deadline and its too-slow health check: an example's
  wall time on a loaded 2-core machine says nothing about the property, and a timed assertion has no
  place in a unit test. A test that sets its own ``settings`` still inherits these.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Callable, Iterator

import hypothesis
import pytest
from _pytest.nodeid import NodeId

from noctaya.dev import processes

os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")
os.environ.setdefault("JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION", "1")
os.environ.setdefault("JSII_SILENCE_WARNING_UNTESTED_NODE_VERSION", "1")

hypothesis.settings.register_profile(
    "noctaya", deadline=None, suppress_health_check=[hypothesis.HealthCheck.too_slow]
)
hypothesis.settings.load_profile("noctaya")


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """In an xdist worker under ``--dist loadgroup``: end each grouped test's id with ``@<group>``, the
    suffix the controller's scheduler sends to one worker (what xdist itself means to do)."""
    if not getattr(config.option, "loadgroup", False):
        return
    for item in items:
        names = {
            str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
            for mark in item.iter_markers("xdist_group")
        }
        suffix = "@" + "_".join(sorted(names))
        if names and not item.nodeid.endswith(suffix):
            item._id = NodeId.parse(item.nodeid + suffix)


@pytest.fixture(autouse=True)
async def _no_asyncio_pending_tasks() -> AsyncIterator[None]:
    """Fail a test that leaves asyncio tasks running after all its other fixtures are torn down."""
    before = asyncio.all_tasks()
    yield
    current = asyncio.current_task()
    leaked: set[asyncio.Task[object]] = set()
    for _ in range(20):  # let tasks that were cancelled during teardown finish unwinding
        leaked = {t for t in asyncio.all_tasks() - before if t is not current and not t.done()}
        if not leaked:
            return
        await asyncio.sleep(0.01)
    for task in leaked:
        task.cancel()
    await asyncio.gather(*leaked, return_exceptions=True)
    pytest.fail(f"test leaked {len(leaked)} asyncio task(s): {sorted(repr(t) for t in leaked)[:5]}")


@pytest.fixture
def reserve_port() -> Iterator[Callable[[], int]]:
    """``reserve_port()`` -> a loopback port held until the test ends, for a server that must be named
    before it starts (a config, a child's command line, a client built first, a restart on the same
    port): nobody else can take it, a server binding it with ``SO_REUSEADDR`` listens on it, and with
    none listening a connection is refused (:class:`noctaya.dev.processes.PortReservation`). A server
    that can pick its own port (port 0, read back) does that instead."""
    held: list[processes.PortReservation] = []

    def reserve() -> int:
        held.append(processes.PortReservation())
        return held[-1].port

    yield reserve
    for reservation in held:
        reservation.close()
