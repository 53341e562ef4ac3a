"""The aggregate scaler's members: the newest demand report of each gateway, summed.

Each gateway process is one member, named by a process-unique id, and numbers its reports with an
increasing sequence. A report carries the member's complete demand (not a delta), so the newest one
is all that counts and a lost report is repaired by the next heartbeat. The sum is the demand the
ExternalScaler serves; ``Membership`` satisfies ``DemandSource``.

Rules:
- a sequence not greater than the member's last one is stale or replayed, and dropped;
- demand above ``max_member_demand`` is refused (a gateway never holds more than its bounds);
- a new member beyond ``max_members`` is refused;
- a member silent for ``ttl`` expires; a graceful shutdown withdraws it at once;
- a withdrawn or expired member leaves a tombstone with its last sequence for ``ttl``, so a
  delayed or replayed older report cannot bring it back (tombstones are bounded too).
Memory only: after a restart, the gateways' heartbeats rebuild the sum within one interval.
"""

from __future__ import annotations

import collections
import dataclasses
import enum
import time
from collections.abc import Callable

from noctaya.contract import demand as demand_mod


class Outcome(enum.Enum):
    ACCEPTED = "accepted"
    STALE_SEQUENCE = "stale_sequence"
    TOO_MANY_MEMBERS = "too_many_members"
    DEMAND_OUT_OF_RANGE = "demand_out_of_range"


@dataclasses.dataclass
class Member:
    id: str
    sequence: int
    demand: int
    seen: float  # monotonic time of the newest accepted report


class Membership:
    def __init__(
        self,
        *,
        max_members: int,
        max_member_demand: int,
        ttl: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_members < 1 or max_member_demand < 0 or not ttl > 0:
            raise ValueError("max_members >= 1, max_member_demand >= 0 and ttl > 0 are required")
        self.max_members = max_members
        self.max_member_demand = max_member_demand
        self.ttl = ttl
        self._clock = clock
        self._members: dict[str, Member] = {}
        # member id -> (last sequence, time it left); insertion-ordered, oldest first
        self._tombstones: collections.OrderedDict[str, tuple[int, float]] = collections.OrderedDict()
        self._total = demand_mod.DemandSignal()
        self.on_removed: Callable[[str, str], None] | None = None  # (member, cause) for metrics

    # ---------------------------------------------------------------- DemandSource
    def demand(self) -> int:
        return self._total.demand()

    def subscribe(self, listener: demand_mod.Listener) -> demand_mod.Unsubscribe:
        return self._total.subscribe(listener)

    # ---------------------------------------------------------------- reading
    def __len__(self) -> int:
        return len(self._members)

    def members(self) -> list[Member]:
        return [dataclasses.replace(m) for m in self._members.values()]

    # ---------------------------------------------------------------- reports
    def report(self, *, member: str, sequence: int, demand: int) -> Outcome:
        now = self._clock()
        self._forget_old_tombstones(now)
        if not 0 <= demand <= self.max_member_demand:
            return Outcome.DEMAND_OUT_OF_RANGE
        current = self._members.get(member)
        if current is not None:
            if sequence <= current.sequence:
                return Outcome.STALE_SEQUENCE
            current.sequence, current.demand, current.seen = sequence, demand, now
        else:
            tomb = self._tombstones.get(member)
            if tomb is not None and sequence <= tomb[0]:
                return Outcome.STALE_SEQUENCE
            if len(self._members) >= self.max_members:
                return Outcome.TOO_MANY_MEMBERS
            self._tombstones.pop(member, None)
            self._members[member] = Member(id=member, sequence=sequence, demand=demand, seen=now)
        self._resum()
        return Outcome.ACCEPTED

    def withdraw(self, *, member: str, sequence: int) -> Outcome:
        """A graceful goodbye; an unknown member is accepted (idempotent) but still tombstoned."""
        now = self._clock()
        self._forget_old_tombstones(now)
        current = self._members.get(member)
        last = current.sequence if current is not None else self._tombstones.get(member, (0, 0.0))[0]
        if sequence <= last:
            return Outcome.STALE_SEQUENCE
        if current is None and len(self._tombstones) >= self.max_members and member not in self._tombstones:
            return Outcome.ACCEPTED  # nothing to remove; do not let unknown ids grow the tombstones
        self._remove(member, sequence=sequence, now=now, cause="withdrawn")
        self._resum()
        return Outcome.ACCEPTED

    def expire(self) -> list[str]:
        """Remove members silent for longer than ``ttl``; returns their ids."""
        now = self._clock()
        self._forget_old_tombstones(now)
        silent = [m.id for m in self._members.values() if now - m.seen > self.ttl]
        for member in silent:
            self._remove(member, sequence=self._members[member].sequence, now=now, cause="expired")
        if silent:
            self._resum()
        return silent

    def next_expiry(self) -> float | None:
        """Seconds until the next member would expire (None with no members)."""
        if not self._members:
            return None
        oldest = min(m.seen for m in self._members.values())
        return max(0.0, oldest + self.ttl - self._clock())

    # ---------------------------------------------------------------- internals
    def _remove(self, member: str, *, sequence: int, now: float, cause: str) -> None:
        existed = self._members.pop(member, None) is not None
        self._tombstones.pop(member, None)
        self._tombstones[member] = (sequence, now)
        while len(self._tombstones) > 4 * self.max_members:
            self._tombstones.popitem(last=False)
        if existed and self.on_removed is not None:
            self.on_removed(member, cause)

    def _forget_old_tombstones(self, now: float) -> None:
        while self._tombstones:
            member, (_, left) = next(iter(self._tombstones.items()))
            if now - left <= self.ttl:
                break
            del self._tombstones[member]

    def _resum(self) -> None:
        self._total.set(sum(m.demand for m in self._members.values()))
