"""``bench.gateway``'s choice of peers, the medians it prints over interleaved repetitions, and the
count of requests a gateway held as cold that it reads to say a warm phase was not all warm."""

from __future__ import annotations

import asyncio
import collections
import itertools
import math
import re

import aiohttp
import pytest

from bench import gateway, processes
from noctaya.dev import fake_engine
from noctaya.gateway import keys, testing


def test_peers_are_parsed_in_the_order_given() -> None:
    assert gateway.parse_peers("noctaya,nginx,interceptor") == ("noctaya", "nginx", "interceptor")
    assert gateway.parse_peers(" interceptor , noctaya") == ("interceptor", "noctaya")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("noctaya,envoy", "unknown peer 'envoy'"),
        ("noctaya,,nginx", "unknown peer ''"),
        ("noctaya,nginx,nginx", "named twice"),
        ("nginx,interceptor", "noctaya (the gateway measured against the others) must be one of them"),
    ],
)
def test_a_bad_peer_list_is_refused_naming_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=r"^--peers: ") as caught:
        gateway.parse_peers(text)
    assert message in str(caught.value)


def test_every_repetition_runs_every_target_once_in_the_orders_chosen() -> None:
    order: list[str] = []

    def run(name: str, target: gateway.Target) -> gateway.Figures:
        order.append(name)
        return {"index": float(len(order))}

    targets: dict[str, gateway.Target] = {"direct": ("d", None), "gateway": ("g", 1), "nginx": ("n", 2)}
    runs = gateway.interleaved(targets, repeat=3, run=run)
    assert order == ["direct", "gateway", "nginx", "gateway", "direct", "nginx", "nginx", "direct", "gateway"]
    assert [run["index"] for run in runs["direct"]] == [1.0, 5.0, 8.0]


def test_each_run_records_what_other_guests_took_of_the_machine_meanwhile(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the machine's times as read before and after each run: 100 ticks each, the second run's 25 stolen
    readings = iter([(0, 0), (100, 0), (100, 0), (200, 25)])

    def now() -> processes.MachineTimes:
        total, steal = next(readings)
        return processes.MachineTimes(busy=total - steal, steal=steal, total=total, cpus=2)

    monkeypatch.setattr(processes.MachineTimes, "now", staticmethod(now))
    figures = iter([{"p50": 1.0}, {"p50": 2.0}])
    runs = gateway.interleaved({"gateway": ("g", 1)}, repeat=2, run=lambda name, target: next(figures))
    assert runs["gateway"] == [{"p50": 1.0, "stolen": 0.0}, {"p50": 2.0, "stolen": 25.0}]


def test_what_other_guests_took_is_listed_per_target_in_the_order_of_the_repetitions() -> None:
    runs: gateway.Runs = {
        "direct": [{"stolen": 0.04}, {"stolen": 12.345}],
        "gateway": [{"stolen": math.nan}, {"stolen": 0.0}],
    }
    line = gateway.stolen_line(runs)
    assert line == "   % stolen while each repetition ran: direct 0.0 12.3; gateway - 0.0"


@pytest.mark.parametrize(("count", "most"), [(2, 2), (3, 2), (4, 1), (5, 1)])
def test_a_target_runs_first_or_after_a_given_neighbour_as_rarely_as_can_be(count: int, most: int) -> None:
    names = ["direct", "gateway", "compared", "nginx", "interceptor"][:count]
    orders = gateway.running_orders(names, repeat=3)
    assert all(sorted(order) == sorted(names) for order in orders)
    places: collections.Counter[tuple[str | None, str]] = collections.Counter(
        (None, order[0]) for order in orders
    )
    places.update(pair for order in orders for pair in itertools.pairwise(order))
    # with 4 targets or more, 3 repetitions need no place twice; with 2 or 3 they must reuse some
    assert max(places.values()) == most, orders


def test_added_latency_is_taken_against_the_direct_run_of_the_same_repetition() -> None:
    runs: gateway.Runs = {
        "direct": [{"p50": 1.0, "p99": 2.0}, {"p50": 5.0, "p99": 9.0}],
        "gateway": [{"p50": 1.5, "p99": 4.0}, {"p50": 5.25, "p99": 10.0}],
    }
    gateway.added_latency(runs)
    assert [(run["added_p50"], run["added_p99"]) for run in runs["gateway"]] == [(0.5, 2.0), (0.25, 1.0)]
    assert all(math.isnan(run["added_p50"]) for run in runs["direct"])


def test_medians_leave_out_figures_that_could_not_be_computed() -> None:
    medians = gateway.median_figures(
        [{"rps": 3.0, "cpu": math.nan}, {"rps": 1.0, "cpu": math.nan}, {"rps": 2.0, "cpu": 4.0}]
    )
    assert medians["rps"] == 2.0
    assert medians["cpu"] == 4.0
    assert math.isnan(gateway.median_figures([{"cpu": math.nan}])["cpu"])


async def test_the_requests_a_gateway_held_as_cold_are_read_from_its_metrics() -> None:
    engine = fake_engine.FakeEngine(ready_override=False)
    async with (
        fake_engine.running(engine) as running,
        testing.GatewayStarter(backend_url=running.url) as starter,
        aiohttp.ClientSession() as http,
    ):
        gateway = await starter.start()
        assert await asyncio.to_thread(processes.cold_admitted, gateway.url) == 0
        held = asyncio.create_task(http.post(gateway.url + "/v1/chat/completions", json={"model": "m"}))
        await gateway.wait_for(lambda: gateway.app[keys.ADMISSION].queued == 1)
        engine.ready_override = True
        async with await held as response:
            assert response.status == 200
        assert await asyncio.to_thread(processes.cold_admitted, gateway.url) == 1


@pytest.mark.parametrize("tokens", ["0", "257", "x"])
def test_sse_tokens_out_of_range_are_refused(tokens: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        gateway.main(["--sse-tokens", tokens])
    assert exited.value.code == 2
    assert "--sse-tokens" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["--sse-token-delay", "-1", "--phases", "sse"], "from 0 to 1,000"),
        (["--sse-token-delay", "nan", "--phases", "sse"], "from 0 to 1,000"),
        (["--sse-token-delay", "5"], "only with --phases sse"),
        (["--sse-token-delay", "5", "--phases", "requests,sse"], "only with --phases sse"),
    ],
)
def test_a_paced_engine_is_refused_out_of_range_or_beside_other_phases(
    argv: list[str], named: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        gateway.main(argv)
    assert exited.value.code == 2
    assert named in capsys.readouterr().err


_STAT = """cpu  {user} 0 {system} {idle} 5 0 {softirq} {steal} 0 0
cpu0 1 0 1 1 0 0 0 0 0 0
cpu1 1 0 1 1 0 0 0 0 0 0
intr 12345
ctxt 6789
"""


def test_how_busy_the_machine_was_is_read_from_its_cpu_line() -> None:
    before = processes.MachineTimes.parse(_STAT.format(user=100, system=50, idle=800, softirq=10, steal=5))
    assert (before.busy, before.steal, before.total, before.cpus) == (160, 5, 970, 2)
    # over the phase: 150 busy ticks, 6 stolen, 44 idle (of 200)
    after = processes.MachineTimes.parse(_STAT.format(user=200, system=90, idle=844, softirq=20, steal=11))
    assert after.since(before) == "2 CPUs 75 % busy, 3.0 % stolen"
    assert after.stolen_since(before) == 3.0
    assert before.since(before) == "2 CPUs: no time elapsed"
    assert math.isnan(before.stolen_since(before))


@pytest.mark.parametrize(
    "text", ["", "cpu0 1 2 3 4 5 6 7 8\n", "cpu  1 2 3 4 5 6 7\n", "cpu  1 2 3 x 5 6 7 8\n"]
)
def test_a_stat_without_a_whole_cpu_line_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        processes.MachineTimes.parse(text)


def test_this_machine_s_times_are_read_and_move_forward(capsys: pytest.CaptureFixture[str]) -> None:
    before = processes.MachineTimes.now()
    with gateway.watched_machine():
        # until the clock ticks (every CPU adds one a tick, busy or idle): the line then has figures
        while processes.MachineTimes.now().total == before.total:
            sum(range(10_000))
    line = capsys.readouterr().out
    assert re.fullmatch(rf"   machine while it ran: {before.cpus} CPUs \d+ % busy, \d+\.\d % stolen\n", line)
    after = processes.MachineTimes.now()
    assert after.cpus == before.cpus >= 1
    assert after.total > before.total and after.busy >= before.busy and after.steal >= before.steal
    assert after.total >= after.busy + after.steal > 0
