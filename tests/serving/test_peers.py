"""What a peer is (``noctaya.serving.peers``): the key of every per-peer bound and of the peer tenant.

Aspects: an IPv4 address is its own peer and an IPv4-mapped IPv6 address folds into it; IPv6
addresses count by their prefix (/64 by default, configurable); a trusted proxy's connections have
no peer, and its ``X-Forwarded-For`` is read right to left past trusted hops; anything else is kept
printable and short.
"""

from __future__ import annotations

import pytest

from noctaya.serving import peers


@pytest.mark.parametrize(
    ("host", "key"),
    [
        ("10.0.0.1", "10.0.0.1"),
        ("::ffff:10.0.0.1", "10.0.0.1"),
        ("2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"),
        ("2001:db8:1:2:ffff::1", "2001:db8:1:2::/64"),
        ("fe80::1%eth0", "fe80::/64"),
        ("[2001:db8::1]:443", "2001:db8::/64"),
        ("10.0.0.1:443", "10.0.0.1"),
        ("unix", "unix"),
        ("a\x1b]0;x\x07" + "b" * 100, "a?]0;x?" + "b" * 57),
    ],
)
def test_a_peer_is_a_host_not_an_address(host: str, key: str) -> None:
    assert peers.DEFAULT.key(host) == key


def test_the_ipv6_prefix_is_configurable_and_bounded() -> None:
    assert peers.Peers(ipv6_prefix=128).key("2001:db8::1") == "2001:db8::1/128"
    assert peers.Peers(ipv6_prefix=48).key("2001:db8:1:2::1") == "2001:db8:1::/48"
    with pytest.raises(ValueError, match="ipv6_prefix"):
        peers.Peers(ipv6_prefix=16)


def test_a_trusted_proxy_has_no_peer_and_forwarded_for_names_the_client() -> None:
    table = peers.Peers(trusted_proxies=peers.parse_networks(["10.0.0.0/8", "fd00::/8"]))
    assert table.of_connection("10.1.2.3") is None
    assert table.of_connection("192.0.2.7") == "192.0.2.7"
    # the rightmost hop a trusted proxy did not add is the client
    assert table.of_request("10.1.2.3", "198.51.100.9, 203.0.113.5, 10.9.9.9") == "203.0.113.5"
    assert table.of_request("10.1.2.3", "2001:db8::7") == "2001:db8::/64"
    assert table.of_request("10.1.2.3", "10.2.2.2, 10.3.3.3") == "10.2.2.2"  # only trusted hops
    assert table.of_request("10.1.2.3", " , ") == "10.1.2.3"
    assert table.of_request("10.1.2.3", None) == "10.1.2.3"
    # an untrusted peer's header is not believed
    assert table.of_request("192.0.2.7", "203.0.113.5") == "192.0.2.7"
