"""Smoke."""

from __future__ import annotations

import pytest
from scenario import LLMSERVICES, NS, RUNTIMES, runtime_body, service_body, status_of


@pytest.mark.timeout(30)
async def test_smoke(server, cluster, operators, wait_for):
    server.upsert(RUNTIMES, runtime_body())
    server.upsert(LLMSERVICES, service_body())
    await operators()
    await wait_for(lambda: status_of(server).get("phase") == "Ready", within=20, message="Ready")
    print(status_of(server))
    for key in sorted(server.store):
        if key[1] == NS:
            print(key)
