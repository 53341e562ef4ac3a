"""Membership of the aggregate scaler: the sum of each member's newest report.

Aspects: the sum follows the newest report of every member and listeners hear every change; stale
and replayed sequences are dropped without touching the sum; per-member demand and member count are
bounded; a silent member expires after the ttl and a withdrawn one leaves at once; a withdrawn or
expired member's older reports cannot bring it back, a newer one can; tombstones are bounded.
"""

from __future__ import annotations

from noctaya.scaler import membership

Outcome = membership.Outcome


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def make(clock: Clock, **kwargs: int) -> membership.Membership:
    return membership.Membership(
        max_members=kwargs.get("max_members", 3),
        max_member_demand=kwargs.get("max_member_demand", 100),
        ttl=10.0,
        clock=clock,
    )


def test_sum_of_newest_reports_with_notifications() -> None:
    m = make(Clock())
    heard: list[int] = []
    m.subscribe(heard.append)
    assert m.report(member="a", sequence=1, demand=3) is Outcome.ACCEPTED
    assert m.report(member="b", sequence=1, demand=4) is Outcome.ACCEPTED
    assert m.report(member="a", sequence=2, demand=1) is Outcome.ACCEPTED
    assert m.demand() == 5
    assert heard == [3, 7, 5]
    assert m.report(member="a", sequence=5, demand=1) is Outcome.ACCEPTED  # gaps are fine
    assert heard == [3, 7, 5]  # no change, no notification


def test_stale_and_replayed_sequences_are_dropped() -> None:
    m = make(Clock())
    m.report(member="a", sequence=10, demand=3)
    assert m.report(member="a", sequence=10, demand=50) is Outcome.STALE_SEQUENCE
    assert m.report(member="a", sequence=9, demand=50) is Outcome.STALE_SEQUENCE
    assert m.demand() == 3


def test_bounds_on_member_demand_and_member_count() -> None:
    m = make(Clock(), max_members=2, max_member_demand=10)
    assert m.report(member="a", sequence=1, demand=11) is Outcome.DEMAND_OUT_OF_RANGE
    assert m.report(member="a", sequence=1, demand=-1) is Outcome.DEMAND_OUT_OF_RANGE
    assert m.report(member="a", sequence=1, demand=10) is Outcome.ACCEPTED
    assert m.report(member="b", sequence=1, demand=10) is Outcome.ACCEPTED
    assert m.report(member="c", sequence=1, demand=1) is Outcome.TOO_MANY_MEMBERS
    assert m.report(member="a", sequence=2, demand=2) is Outcome.ACCEPTED  # known members still report
    assert (len(m), m.demand()) == (2, 12)


def test_silent_member_expires_after_ttl() -> None:
    clock = Clock()
    m = make(clock)
    m.report(member="a", sequence=1, demand=3)
    m.report(member="b", sequence=1, demand=4)
    clock.now += 6
    m.report(member="b", sequence=2, demand=4)
    assert m.next_expiry() == 4.0
    clock.now += 4
    assert m.expire() == []
    clock.now += 0.5
    assert m.expire() == ["a"]
    assert m.demand() == 4


def test_withdraw_removes_at_once_and_blocks_older_reports() -> None:
    clock = Clock()
    m = make(clock)
    removed: list[tuple[str, str]] = []
    m.on_removed = lambda member, cause: removed.append((member, cause))
    m.report(member="a", sequence=4, demand=3)
    assert m.withdraw(member="a", sequence=4) is Outcome.STALE_SEQUENCE
    assert m.withdraw(member="a", sequence=5) is Outcome.ACCEPTED
    assert m.demand() == 0
    assert m.report(member="a", sequence=4, demand=9) is Outcome.STALE_SEQUENCE  # delayed old report
    assert m.report(member="a", sequence=6, demand=2) is Outcome.ACCEPTED  # a newer one is the member
    assert m.demand() == 2
    clock.now += 20
    assert m.expire() == ["a"]
    assert removed == [("a", "withdrawn"), ("a", "expired")]
    assert m.report(member="a", sequence=6, demand=9) is Outcome.STALE_SEQUENCE  # tombstone holds


def test_withdraw_of_unknown_member_is_idempotent_and_tombstones_are_bounded() -> None:
    clock = Clock()
    m = make(clock, max_members=1)
    for i in range(50):
        assert m.withdraw(member=f"ghost{i}", sequence=1) is Outcome.ACCEPTED
    assert len(m._tombstones) <= 4
    assert m.demand() == 0
