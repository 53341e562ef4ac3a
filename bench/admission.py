"""Cold-queue operation cost: the fair admission against a plain FIFO queue, in the same run.

    .venv/bin/python -m bench.admission [--requests 200000] [--tenants 1,16,64] [--repeat 5]

Each round queues ``--requests`` tickets (spread over the tenants in turn), then grants them all one
by one through a single in-flight slot (grant, release): the whole life of a cold request in
admission, without sockets. The baseline does the same with the structure admission used before
tenants existed: one ordered dict of futures granted in arrival order; a second baseline adds what
every admission pays per change (a ticket, the counts mirrored into demand), so the gap between it
and the fair admission is the cost of fairness itself. Figures are nanoseconds per
request (best of ``--repeat``) and the ratio to the baseline; a full queue's displacement path is
measured too (every arrival displaces, the most expensive case: a scan over the waiting tenants;
one round there is a displacing arrival, its leaving and a refill, three operations).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import time

from noctaya.gateway import admission, demand


def _fair(requests: int, tenants: int) -> float:
    async def run() -> float:
        a = admission.Admission(
            max_queue=requests, max_in_flight=1, demand=demand.Demand(), max_tenants=max(tenants, 1)
        )
        names = [f"tenant-{i}" for i in range(tenants)]
        started = time.perf_counter()
        for i in range(requests):
            a.enqueue(tenant=names[i % tenants])
        a.set_ready(True)  # grants the first ticket
        for _ in range(requests):
            a.release()  # hands the slot to the next tenant's oldest ticket
        elapsed = time.perf_counter() - started
        assert a.idle
        return elapsed

    return asyncio.run(run())


def _baseline(requests: int) -> float:
    async def run() -> float:
        loop = asyncio.get_running_loop()
        queue: collections.OrderedDict[int, asyncio.Future[None]] = collections.OrderedDict()
        started = time.perf_counter()
        for _ in range(requests):
            future = loop.create_future()
            queue[id(future)] = future
            _ = loop.time()
        in_flight = 0
        while queue:
            _, future = queue.popitem(last=False)
            future.set_result(None)
            in_flight += 1
            in_flight -= 1
        return time.perf_counter() - started

    return asyncio.run(run())


def _baseline_publishing(requests: int) -> float:
    """The FIFO plus what any admission pays per change: a Ticket and the counts mirrored into
    demand (the gauges and the scaler read them), so the ratio to it is the cost of fairness alone."""

    async def run() -> float:
        loop = asyncio.get_running_loop()
        the_demand = demand.Demand()
        queue: collections.OrderedDict[int, admission.Ticket] = collections.OrderedDict()
        started = time.perf_counter()
        for _ in range(requests):
            ticket = admission.Ticket(future=loop.create_future(), enqueued_at=loop.time(), tenant="")
            queue[id(ticket)] = ticket
            the_demand.set_counts(queued=len(queue), in_flight=0)
        in_flight = 1
        while queue:
            _, ticket = queue.popitem(last=False)
            ticket.future.set_result(None)
            the_demand.set_counts(queued=len(queue), in_flight=in_flight)
            in_flight -= 1
            in_flight += 1
        return time.perf_counter() - started

    return asyncio.run(run())


def _displacing(requests: int, tenants: int) -> float:
    async def run() -> float:
        a = admission.Admission(
            max_queue=64, max_in_flight=1, demand=demand.Demand(), max_tenants=tenants + 1
        )
        # a displaced ticket's waiter would read its 429; here nobody waits, so nobody reads it
        asyncio.get_running_loop().set_exception_handler(lambda _loop, _context: None)
        for i in range(64):
            a.enqueue(tenant=f"hog-{i % tenants}")
        started = time.perf_counter()
        for i in range(requests):
            ticket = a.enqueue(tenant="newcomer")  # displaces the newest ticket of the biggest hog
            a.leave(ticket)
            a.enqueue(tenant=f"hog-{i % tenants}")  # the queue is full again
        return time.perf_counter() - started

    return asyncio.run(run())


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.admission", description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=200_000)
    parser.add_argument("--tenants", default="1,16,64")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    n = args.requests
    base = min(_baseline(n) for _ in range(args.repeat)) / n * 1e9
    publishing = min(_baseline_publishing(n) for _ in range(args.repeat)) / n * 1e9

    def row(case: str, ns: float) -> None:
        print(f"{case:<40}{ns:>12.0f}{ns / base:>10.2f}{ns / publishing:>14.2f}")

    print(f"{'case':<40}{'ns/request':>12}{'vs FIFO':>10}{'vs publishing':>14}")
    row("baseline: one ordered dict, FIFO", base)
    row("FIFO + tickets + demand publishing", publishing)
    for tenants in (int(t) for t in args.tenants.split(",")):
        row(
            f"fair admission, {tenants} tenant(s)",
            min(_fair(n, tenants) for _ in range(args.repeat)) / n * 1e9,
        )
    for tenants in (int(t) for t in args.tenants.split(",")):
        worst = min(_displacing(n // 10, tenants) for _ in range(args.repeat)) / (n // 10) * 1e9
        row(f"full queue, displacing ({tenants} hogs)", worst)


if __name__ == "__main__":
    main()
