"""What a gateway memory limit admits (``noctaya.api.gatewaymemory.fit``), for any limit and bounds.

Aspects: bounds that fit are used as asked; a smaller limit lowers the unpinned bounds, never a pinned
one, never below a floor, and the result always fits; a limit that cannot hold the pinned bounds with
the others at their floors is refused naming every term; the Go examples' 256Mi and 512Mi render.
"""

from __future__ import annotations

import dataclasses

import hypothesis
import pytest
from hypothesis import strategies as st

from noctaya.api import gatewaymemory

MIB = 1 << 20
NAMES = list(gatewaymemory.KEYS)
bounds = st.builds(
    gatewaymemory.Bounds,
    max_queued_body_bytes=st.integers(1, gatewaymemory.MAX_QUEUED_BODY_BYTES),
    max_connections=st.integers(1, 100_000),
    websocket_max_open=st.integers(1, 10_000),
    websocket_max_message_bytes=st.integers(1, gatewaymemory.MAX_MESSAGE_BYTES),
)


@hypothesis.given(
    base=bounds,
    limit=st.integers(1, 64 << 30),
    pinned=st.sets(st.sampled_from(NAMES)),
)
@hypothesis.settings(max_examples=300, deadline=None)
def test_a_fit_always_fits_keeps_the_pinned_bounds_and_lowers_only_the_others(
    base: gatewaymemory.Bounds, limit: int, pinned: set[str]
) -> None:
    asked = {name: getattr(base, name) for name in pinned}
    try:
        fit = gatewaymemory.fit(limit_bytes=limit, limit=str(limit), base=base, pinned=asked)
    except ValueError as exc:
        assert f"gateway memory limit {limit}: the gateway needs at least" in str(exc)
        # refused only when even the floors (the pinned values kept) exceed the limit; of the two
        # WebSocket bounds only one is lowered: the open count, or the message size when it is pinned
        lowered = [n for n in NAMES if n not in pinned]
        if "websocket_max_open" in lowered and "websocket_max_message_bytes" in lowered:
            lowered.remove("websocket_max_message_bytes")
        lowest = {name: min(getattr(base, name), getattr(gatewaymemory.FLOORS, name)) for name in lowered}
        assert dataclasses.replace(base, **lowest).worst_case_bytes() > limit
        return
    assert fit.bounds.worst_case_bytes() <= limit or not fit.derived
    assert fit.bounds.worst_case_bytes() <= limit or fit.bounds == base  # no limit problem: as asked
    for name in NAMES:
        value = getattr(fit.bounds, name)
        assert value <= getattr(base, name)
        assert value >= min(getattr(base, name), getattr(gatewaymemory.FLOORS, name))
        if name in pinned:
            assert value == getattr(base, name)
        assert (gatewaymemory.KEYS[name] in fit.derived) == (value != getattr(base, name))


@pytest.mark.parametrize("limit", [256, 512])
def test_the_go_examples_limits_render_with_bounds_derived_to_fit(limit: int) -> None:
    fit = gatewaymemory.fit(
        limit_bytes=limit * MIB, limit=f"{limit}Mi", base=gatewaymemory.DEFAULTS, pinned={}
    )
    assert fit.bounds.worst_case_bytes() <= limit * MIB
    assert fit.derived == ("maxQueuedBodyBytes", "maxConnections", "websocketMaxOpen")
    statement = fit.statement()
    assert statement is not None and statement.startswith(
        f"bounds derived to fit the gateway memory limit {limit}Mi"
    )


def test_the_defaults_fit_1gi_as_they_are_and_their_worst_case_is_864_mib() -> None:
    assert gatewaymemory.DEFAULTS.worst_case_bytes() == 864 * MIB
    fit = gatewaymemory.fit(limit_bytes=1 << 30, limit="1Gi", base=gatewaymemory.DEFAULTS, pinned={})
    assert fit.bounds == gatewaymemory.DEFAULTS and fit.statement() is None


def test_a_limit_too_small_for_the_floors_is_refused_naming_each_term() -> None:
    with pytest.raises(ValueError) as caught:
        gatewaymemory.fit(limit_bytes=100 * MIB, limit="100Mi", base=gatewaymemory.DEFAULTS, pinned={})
    assert str(caught.value) == (
        "gateway memory limit 100Mi: the gateway needs at least 119 MiB (with maxQueuedBodyBytes at its "
        "floor 1048576, maxConnections at its floor 16, websocketMaxOpen at its floor 1): 96 MiB at rest + "
        "maxQueuedBodyBytes 1 MiB + maxConnections 16 x 384 KiB + websocketMaxOpen 1 x 4 x "
        "websocketMaxMessageBytes 4 MiB; raise the limit"
    )
    with pytest.raises(ValueError, match=r"maxConnections 1000 x 384 KiB.*or lower the bounds set in spec"):
        gatewaymemory.fit(
            limit_bytes=256 * MIB,
            limit="256Mi",
            base=gatewaymemory.DEFAULTS,
            pinned={"max_connections": 1000},
        )
