"""Runtime selection.

Aspects: a pinned name wins regardless of vendor and priority; a missing pinned name is
RuntimeNotFound; vendors are tried in list order and the first vendor with any runtime wins even at a
lower priority; within a vendor the highest priority wins; a tie at the top is RuntimeAmbiguous naming
every tied runtime (sorted) and the vendor; lower-priority ties do not matter; no runtime for any vendor
is RuntimeNotFound naming the vendors; selection does not depend on the order runtimes are given.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import pytest

from noctaya.api import inferenceruntime, llmservice
from noctaya.runtime import selection

MakeService = Callable[..., llmservice.LLMService]
MakeRuntime = Callable[..., inferenceruntime.InferenceRuntime]


def test_pinned_name_wins(make_service: MakeService, make_runtime: MakeRuntime) -> None:
    runtimes = [
        make_runtime("a", priority=100),
        make_runtime("b", vendor="amd", accelerator={"resourceName": "amd.com/gpu"}),
    ]
    service = make_service(runtime={"name": "b", "selector": None})
    assert selection.select_runtime(service=service, runtimes=runtimes).name == "b"


def test_pinned_name_missing(make_service: MakeService, make_runtime: MakeRuntime) -> None:
    service = make_service(runtime={"name": "nope", "selector": None})
    with pytest.raises(selection.SelectionError) as info:
        selection.select_runtime(service=service, runtimes=[make_runtime("a")])
    assert info.value.reason is llmservice.Reason.RUNTIME_NOT_FOUND
    assert "spec.runtime.name" in str(info.value) and "'nope'" in str(info.value)


def test_vendor_list_order_beats_priority(make_service: MakeService, make_runtime: MakeRuntime) -> None:
    runtimes = [
        make_runtime("nv", priority=100),
        make_runtime("amd", vendor="amd", priority=-5, accelerator={"resourceName": "amd.com/gpu"}),
    ]
    service = make_service(runtime={"selector": {"vendor": ["amd", "nvidia"]}})
    assert selection.select_runtime(service=service, runtimes=runtimes).name == "amd"
    service = make_service(runtime={"selector": {"vendor": ["ascend", "nvidia"]}})
    assert selection.select_runtime(service=service, runtimes=runtimes).name == "nv"


def test_highest_priority_wins_within_vendor(make_service: MakeService, make_runtime: MakeRuntime) -> None:
    runtimes = [
        make_runtime("low", priority=1),
        make_runtime("high", priority=7),
        make_runtime("mid", priority=3),
    ]
    for order in itertools.permutations(runtimes):
        assert selection.select_runtime(service=make_service(), runtimes=order).name == "high"


def test_tie_at_the_top_names_every_tied_runtime(
    make_service: MakeService, make_runtime: MakeRuntime
) -> None:
    runtimes = [
        make_runtime("zeta", priority=5),
        make_runtime("alpha", priority=5),
        make_runtime("low", priority=1),
    ]
    with pytest.raises(selection.SelectionError) as info:
        selection.select_runtime(service=make_service(), runtimes=runtimes)
    assert info.value.reason is llmservice.Reason.RUNTIME_AMBIGUOUS
    message = str(info.value)
    assert "alpha, zeta" in message and "'nvidia'" in message and "priority 5" in message
    assert "low" not in message


def test_tie_below_the_top_is_fine(make_service: MakeService, make_runtime: MakeRuntime) -> None:
    runtimes = [make_runtime("a", priority=1), make_runtime("b", priority=1), make_runtime("top", priority=2)]
    assert selection.select_runtime(service=make_service(), runtimes=runtimes).name == "top"


def test_no_runtime_for_any_vendor(make_service: MakeService, make_runtime: MakeRuntime) -> None:
    service = make_service(runtime={"selector": {"vendor": ["ascend", "cpu"]}})
    with pytest.raises(selection.SelectionError) as info:
        selection.select_runtime(service=service, runtimes=[make_runtime("nv")])
    assert info.value.reason is llmservice.Reason.RUNTIME_NOT_FOUND
    assert "ascend, cpu" in str(info.value)
