"""What a peer is: the key every per-peer bound counts by (connections, the scaler's streams) and
that a tenant key may use.

A peer is a client host, not a socket address:

- an IPv4 address is its own peer; an IPv4-mapped IPv6 address (``::ffff:10.0.0.1``, what a
  dual-stack listener sees) is folded into that IPv4 address;
- an IPv6 address counts by its prefix (``ipv6_prefix`` bits, /64 by default: what one host or one
  subscriber is usually given), so a host rotating through the addresses of its prefix is one peer;
- a connection from a trusted proxy (``trusted_proxies``: CIDRs of the ingress or load balancer in
  front) is not one peer: it carries many clients. The bound on connections per peer leaves it out
  (only the overall bound applies), and for a request :meth:`Peers.of_request` names the client
  from ``X-Forwarded-For``, read right to left past every trusted hop (the first address a trusted
  hop did not add is the client; a list made only of trusted hops names the leftmost).

Anything that is not an IP address (a Unix socket, a malformed ``X-Forwarded-For`` entry) is kept
as it is, shortened to :data:`MAX_KEY` characters, so it still counts against one key.
"""

from __future__ import annotations

import dataclasses
import functools
import ipaddress
from collections.abc import Iterable

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address

MAX_KEY = 64
"""Longest key kept for a peer that is not an IP address."""
MAX_FORWARDED_HOPS = 32
"""Most ``X-Forwarded-For`` entries looked at, from the right."""


def parse_networks(values: Iterable[str]) -> tuple[Network, ...]:
    """CIDRs (``10.0.0.0/8``, ``fd00::/8``, a bare address is a /32 or /128); raises ``ValueError``."""
    return tuple(ipaddress.ip_network(value.strip(), strict=False) for value in values)


def _address(text: str) -> Address | None:
    text = text.strip()
    if text.startswith("[") and "]" in text:  # "[2001:db8::1]:443", as some proxies write it
        text = text[1 : text.index("]")]
    elif text.count(":") == 1:  # "10.0.0.1:443"
        text = text.partition(":")[0]
    try:
        address = ipaddress.ip_address(text.partition("%")[0])  # a zone index names no other host
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


@dataclasses.dataclass(frozen=True, kw_only=True)
class Peers:
    """The peer definition of one listener (see the module docstring)."""

    #: bits of an IPv6 address that name its peer (from 32 to 128)
    ipv6_prefix: int = 64
    #: proxies whose ``X-Forwarded-For`` names the client; their own connections have no peer bound
    trusted_proxies: tuple[Network, ...] = ()

    def __post_init__(self) -> None:
        if not 32 <= self.ipv6_prefix <= 128:
            raise ValueError(f"ipv6_prefix must be from 32 to 128, got {self.ipv6_prefix}")

    def key(self, host: str) -> str:
        """The peer of a socket's address (``peername[0]``)."""
        return _key(host, self.ipv6_prefix)

    def trusted(self, host: str) -> bool:
        """Whether ``host`` is a trusted proxy."""
        if not self.trusted_proxies:
            return False
        address = _address(host)
        return address is not None and any(address in network for network in self.trusted_proxies)

    def of_connection(self, host: str) -> str | None:
        """The peer a connection from ``host`` counts against, or None for a trusted proxy's."""
        return None if self.trusted(host) else self.key(host)

    def of_request(self, host: str, forwarded_for: str | None) -> str:
        """The client of a request that came over a connection from ``host``: ``host``'s peer unless
        ``host`` is a trusted proxy, then the client ``forwarded_for`` names past the trusted hops."""
        if forwarded_for is None or not self.trusted(host):
            return self.key(host)
        hops = [hop for hop in forwarded_for.split(",")[-MAX_FORWARDED_HOPS:] if hop.strip()]
        if not hops:
            return self.key(host)
        for hop in reversed(hops):
            if not self.trusted(hop):
                return self.key(hop)
        return self.key(hops[0])


@functools.lru_cache(maxsize=4096)
def _key(host: str, ipv6_prefix: int) -> str:
    address = _address(host)
    if address is None:
        return "".join(c if c.isprintable() else "?" for c in host.strip()[:MAX_KEY]) or "unknown"
    if isinstance(address, ipaddress.IPv4Address):
        return str(address)
    return str(ipaddress.IPv6Network((address, ipv6_prefix), strict=False))


DEFAULT = Peers()
