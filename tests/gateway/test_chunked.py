"""The chunked framing followed as it passes (``noctaya.gateway.chunked``), over arbitrary bodies and
arbitrary reads (hypothesis, deterministic), against llhttp's own reading of the same bytes."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import re
from collections.abc import Iterator

import hypothesis
import pytest
from aiohttp import base_protocol, http_parser
from hypothesis import strategies as st

from noctaya.gateway import chunked

DETERMINISTIC = hypothesis.settings(
    derandomize=True, database=None, deadline=None, max_examples=300, print_blob=False
)

# how a chunk's size line and line end may be written by a backend that llhttp's lax mode reads
SIZE_STYLES = (
    "%x\r\n",
    "%X\r\n",
    "%x \r\n",
    "%x\t;name=value\r\n",
    '%x ;a="b c"\r\n',
    "000%x\r\n",
    "%x;ext\n",  # a bare LF after an extension: llhttp's lax mode takes it
)
END_STYLES = ("\r\n", "\n")


def canonical(payloads: list[bytes]) -> bytes:
    return b"".join(b"%x\r\n%b\r\n" % (len(p), p) for p in payloads)


CANONICAL_SIZE = re.compile(rb"([1-9a-fA-F][0-9a-fA-F]*)\r\n")
"""A size line passed on: hex digits (either case, no leading zero) and CRLF, nothing else."""


def llhttp_payload(body: bytes) -> bytes:
    """The payload llhttp (aiohttp's response parser, lax as the pool runs it) reads from ``body``."""
    loop = asyncio.new_event_loop()
    try:
        parser = http_parser.HttpResponseParser(
            base_protocol.BaseProtocol(loop), loop, 2**20, response_with_body=True, auto_decompress=False
        )
        messages, _, _ = parser.feed_data(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + body)
        ((_, payload),) = messages
        assert payload.is_eof()
        return payload.read_nowait()
    finally:
        loop.close()


def split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    return [data[a:b] for a, b in itertools.pairwise(points)]


def chunks_of(passed: bytes) -> list[bytes]:
    """Parse canonical framing strictly; every chunk whole."""
    found, pos = [], 0
    while pos < len(passed):
        line = CANONICAL_SIZE.match(passed, pos)
        assert line is not None, passed[pos : pos + 20]
        size = int(line.group(1), 16)
        assert size > 0
        data_end = line.end() + size
        assert passed[data_end : data_end + 2] == b"\r\n"
        found.append(passed[line.end() : data_end])
        pos = data_end + 2
    return found


@DETERMINISTIC
@hypothesis.given(
    payloads=st.lists(st.binary(min_size=1, max_size=300), max_size=12),
    styles=st.lists(
        st.tuples(st.sampled_from(SIZE_STYLES), st.sampled_from(END_STYLES)), min_size=12, max_size=12
    ),
    trailers=st.sampled_from(["", "X-Usage: 3\r\n", "A: 1\nB: 2\n"]),
    cuts=st.lists(st.integers(min_value=0, max_value=5000), max_size=10),
    hold=st.sampled_from([0, 16, 64 * 1024]),
)
def test_what_passes_is_the_canonical_framing_of_what_llhttp_reads(
    payloads: list[bytes], styles: list[tuple[str, str]], trailers: str, cuts: list[int], hold: int
) -> None:
    body = b"".join(
        (size % len(p)).encode() + p + end.encode() for p, (size, end) in zip(payloads, styles, strict=False)
    )
    body += b"0\r\n" + trailers.encode() + b"\r\n"
    framing = chunked.Framing(hold=hold)
    passed = b""
    for piece in split(body, cuts):
        passed += framing.feed(piece)
        if framing.boundary:  # nothing passed in part: it parses as whole chunks
            chunks_of(passed)
    assert framing.ended and not framing.extra
    assert chunks_of(passed) == payloads
    assert b"".join(payloads) == llhttp_payload(body)


def test_canonical_reads_pass_the_very_buffer() -> None:
    framing = chunked.Framing()
    data = canonical([b"data: one\n\n", b"data: two\n\n"])
    assert framing.feed(data) is data


def test_one_whole_chunk_a_read_passes_each_read_as_it_came() -> None:
    framing = chunked.Framing()
    for payload in (b"data: one\n\n", b"x" * 300, b"data: [DONE]\n\n"):
        data = canonical([payload])
        assert framing.feed(data) is data
        assert framing.boundary
    assert framing.feed(b"0\r\n\r\n") == b""
    assert framing.ended


def test_what_follows_a_whole_first_chunk_is_followed_from_there() -> None:
    framing = chunked.Framing(hold=8)
    assert framing.feed(b"1\r\na\r\n0002\r\nbc\r\n5\r\nhel") == b"1\r\na\r\n2\r\nbc\r\n"
    assert framing.feed(b"lo\r\n0\r\n\r\n") == b"5\r\nhello\r\n"
    assert framing.ended
    with pytest.raises(chunked.BadFraming):
        chunked.Framing().feed(b"1\r\na\r\nzz\r\n")


def test_a_whole_chunk_read_while_a_chunk_or_line_is_open_follows_what_came_before() -> None:
    inside = chunked.Framing(hold=0)  # inside a large chunk's data: the read is data, then a line end
    assert inside.feed(b"3\r\n") == b"3\r\n"
    with pytest.raises(chunked.BadFraming):
        inside.feed(b"1\r\nX\r\n")
    held = chunked.Framing()  # a size line begun: the read ends it
    assert held.feed(b"1") == b""
    assert held.feed(b"1\r\nX\r\n") == b""  # a chunk of 0x11 bytes, held until whole
    ended = chunked.Framing()
    assert ended.feed(b"0\r\n\r\n") == b""
    assert ended.feed(canonical([b"late"])) == b""
    assert ended.extra


@pytest.mark.parametrize(
    "data",
    [
        b"5\r\nhello!\r\n",  # one byte more than its size says, the length of a whole chunk of 6
        b"7\r\nhello\r\n",  # its size takes in the line end, and what follows has none
        b"5\r\nhelloXY",  # a whole chunk's length, with no line end after its data
    ],
)
def test_a_read_the_length_of_a_whole_chunk_but_not_one_is_refused(data: bytes) -> None:
    with pytest.raises(chunked.BadFraming):
        chunked.Framing(hold=0).feed(data + b"0\r\n\r\n")
    with pytest.raises(chunked.BadFraming):
        framing = chunked.Framing(hold=0)
        framing.feed(data)
        framing.feed(b"0\r\n\r\n")


def test_a_small_chunk_cut_short_is_held_and_a_large_one_passes_as_it_comes() -> None:
    framing = chunked.Framing(hold=8)
    reads = [
        (b"5\r\nhel", b""),
        (b"lo\r\n", b"5\r\nhello\r\n"),
        (b"10;x=y\r\n0123", b"10\r\n0123"),
        (b"456789abcdef\r", b"456789abcdef"),
        (b"\n0\r\n\r\n", b"\r\n"),
    ]
    at_boundary = []
    for data, passed in reads:
        assert framing.feed(data) == passed
        at_boundary.append(framing.boundary)
    assert at_boundary == [True, True, False, False, True]
    assert framing.ended


def test_bytes_after_the_end_are_noticed() -> None:
    framing = chunked.Framing()
    assert framing.feed(b"1\r\na\r\n0\r\n\r\nHTTP/1.1") == b"1\r\na\r\n"
    assert framing.ended and framing.extra


@pytest.mark.parametrize(
    ("body", "named"),
    [
        (b"zz\r\n", "chunk-size line"),
        (b"-1\r\n", "chunk-size line"),
        (b"+a\r\n", "chunk-size line"),
        (b"0x5\r\n", "chunk-size line"),
        (b"1_0\r\n", "chunk-size line"),
        (b"1" * 16 + b"\r\n", "chunk-size line"),
        (b"3\r\nabcd\r\n", "line end"),
        (b"3\r\nabc\rX", "line end"),
        (b"3\nabc\r\n", "chunk-size line"),  # llhttp refuses a bare LF after the size too
        (b"3;a=\x01\r\nabc\r\n", "chunk-size line"),
        (b"1;" + b"e" * 5000, "chunk-size line"),
        (b"0\r\n" + b"T: v\r\n" * 20000, "trailer"),
    ],
)
def test_broken_framing_is_refused_by_name(body: bytes, named: str) -> None:
    with pytest.raises(chunked.BadFraming, match=named):
        chunked.Framing().feed(body)


def test_a_chunk_trickling_in_a_byte_at_a_time_passes_whole_once() -> None:
    framing = chunked.Framing()
    data = b"data: " + bytes(range(256)) * 16 + b"\n\n"
    body = b"%x\r\n%b\r\n0\r\n\r\n" % (len(data), data)
    passed = [framing.feed(body[i : i + 1]) for i in range(len(body))]
    assert [p for p in passed if p] == [b"%x\r\n%b\r\n" % (len(data), data)]
    assert framing.ended


def test_leading_zeros_are_not_passed_on() -> None:
    assert chunked.Framing().feed(b"0005\r\nhello\r\n") == b"5\r\nhello\r\n"


def test_a_size_line_trickling_in_is_held_within_its_bound() -> None:
    framing = chunked.Framing(max_line=8)
    assert framing.feed(b"a") == b""
    assert framing.feed(b"\r") == b""
    assert framing.feed(b"\n0123456789\r\n") == b"a\r\n0123456789\r\n"
    with pytest.raises(chunked.BadFraming):
        framing.feed(b"1;abcdefgh")


# payload bytes a fast backend's many-chunks read may hold that look like framing: CRLFs, bare line
# ends, hex digits and zeros (a read cut at every CRLF must not be taken for chunks it is not)
FRAMING_LOOKALIKES = st.lists(
    st.sampled_from([b"\r\n", b"\r", b"\n", b"0", b"a", b"1f", b"0\r\n\r\n", b"data: x\n\n"]),
    min_size=1,
    max_size=8,
).map(b"".join)


@DETERMINISTIC
@hypothesis.given(
    payloads=st.lists(FRAMING_LOOKALIKES, min_size=2, max_size=40),
    ending=st.sampled_from([b"", b"0\r\n\r\n", b"0\r\nX: 1\r\n\r\n", b"0\r\n\r\nHTTP/1.1", b"0\r\n"]),
    cuts=st.lists(st.integers(min_value=0, max_value=5000), max_size=3),
)
def test_many_whole_chunks_a_read_pass_as_they_came_and_end_where_llhttp_ends(
    payloads: list[bytes], ending: bytes, cuts: list[int]
) -> None:
    body = canonical(payloads) + ending
    framing = chunked.Framing()
    passed = [framing.feed(piece) for piece in split(body, cuts)]
    if not cuts:
        assert passed[0] is body if not ending else passed[0] == canonical(payloads)
    assert chunks_of(b"".join(passed)) == payloads
    assert framing.ended == (ending.startswith(b"0\r\n") and ending.count(b"\r\n") >= 2)
    assert framing.extra == ending.endswith(b"HTTP/1.1")
    if framing.ended and not framing.extra:
        assert b"".join(payloads) == llhttp_payload(body)


@contextlib.contextmanager
def whole_checks() -> Iterator[list[bool | None]]:
    """What each check of a whole read (``chunked._whole_chunks``) answered, while in the block."""
    answers: list[bool | None] = []
    check = chunked._whole_chunks

    def recorded(data: bytes) -> bool | None:
        answers.append(check(data))
        return answers[-1]

    chunked._whole_chunks = recorded
    try:
        yield answers
    finally:
        chunked._whole_chunks = check


def byte_by_byte(body: bytes, framing: chunked.Framing) -> bytes:
    """What ``framing`` passes of ``body`` fed a byte a read (never a read of whole chunks)."""
    return b"".join(framing.feed(body[i : i + 1]) for i in range(len(body)))


# CRLF-free payloads that still look like framing: a read of them is checked whole, never chunk by chunk
CRLF_FREE_LOOKALIKES = st.lists(
    st.sampled_from([b"0", b"\r", b"\n", b"0\r", b"\n0", b"a", b"F", b"data: x\n\n"]), min_size=1, max_size=8
).map(b"".join)


@hypothesis.settings(DETERMINISTIC, max_examples=120)  # read a byte at a time too: bounded for a busy CI
@hypothesis.given(
    payloads=st.lists(CRLF_FREE_LOOKALIKES, min_size=2, max_size=24).filter(
        lambda payloads: all(b"\r\n" not in p and not p.endswith(b"\r") for p in payloads)
    ),
    ended=st.booleans(),
)
def test_a_read_of_whole_chunks_is_checked_whole_and_passes_what_the_chunk_by_chunk_reader_does(
    payloads: list[bytes], ended: bool
) -> None:
    body = canonical(payloads) + (b"0\r\n\r\n" if ended else b"")
    with whole_checks() as checked:
        whole = chunked.Framing()
        passed = whole.feed(body)
    assert checked == [ended]  # the whole read, at once
    slow = chunked.Framing()
    assert passed == byte_by_byte(body, slow) == canonical(payloads)
    assert (whole.ended, whole.extra, whole.boundary) == (slow.ended, slow.extra, slow.boundary)
    assert whole.ended is ended
    if ended:
        assert b"".join(payloads) == llhttp_payload(body)


@pytest.mark.parametrize(
    "body",
    [
        b"1\r\na\r\n0\r\n\r\n1\r\nb\r\n",  # a last chunk in the middle: what follows is not the body's
        b"1\r\na\r\n0\r\n\r\n0\r\n\r\n",  # two ends
        b"1\r\na\r\n4\r\nb\r\nc\r\n",  # a CRLF inside a chunk's data, the pieces' lengths wrong
    ],
)
def test_a_read_that_only_looks_like_whole_chunks_is_read_chunk_by_chunk(body: bytes) -> None:
    framing = chunked.Framing()
    with whole_checks() as checked:
        passed = framing.feed(body)
    assert checked == [None]  # refused whole: read chunk by chunk
    slow = chunked.Framing()
    assert passed == byte_by_byte(body, slow)
    assert (framing.ended, framing.extra) == (slow.ended, slow.extra)
    if body.startswith(b"1\r\na\r\n0"):
        assert passed == b"1\r\na\r\n"
        assert framing.ended and framing.extra
    else:
        assert passed == body
        assert chunks_of(passed) == [b"a", b"b\r\nc"]
        assert not framing.ended


@pytest.mark.parametrize("size", [4095, 4096, 4097, 70_000])
def test_chunks_past_the_sizes_looked_up_are_checked_whole_too(size: int) -> None:
    """Size lines of chunks below 4 KiB are looked up, larger ones written: both read whole."""
    payloads = [b"x" * size, b"data: 1\n\n", b"y" * size]
    body = canonical(payloads) + b"0\r\n\r\n"
    framing = chunked.Framing(hold=2 * size)
    with whole_checks() as checked:
        assert framing.feed(body) == canonical(payloads)
    assert checked == [True]
    assert framing.ended and not framing.extra
    # a size line one short of a large chunk's data: refused whole, then broken framing
    wrong = canonical(payloads[:2]) + b"%x\r\n%b\r\n" % (size - 1, payloads[2])
    with whole_checks() as checked, pytest.raises(chunked.BadFraming):
        chunked.Framing(hold=2 * size).feed(wrong)
    assert checked == [None]


@pytest.mark.parametrize(
    ("read", "whole"),
    [
        (b"a\r\n", False),  # a size line alone: shorter than any chunk it starts
        (b"3\r\nab\r\n", False),  # one byte short of its size
        (b"1\r\nab\r\n", False),  # one byte past its size
        (b"4\r\na\r\nb\r\n", True),  # a CRLF inside its data
        (b"5\r\na\r\nb\r\n", False),  # a bare LF after its data: written as CRLF
        (b"fff\r\n" + b"x" * 4095 + b"\r\n", True),  # the last length looked up
        (b"1000\r\n" + b"x" * 4096 + b"\r\n", True),  # the first one written
    ],
)
def test_a_read_that_may_be_one_whole_chunk_passes_what_byte_by_byte_reading_does(
    read: bytes, whole: bool
) -> None:
    """A read ending in CRLF after a canonical size line is one whole chunk when the size line is the
    length of what lies between (looked up below 4 KiB); anything else is read as before."""
    fed, slow = chunked.Framing(), chunked.Framing()
    try:
        passed: bytes | None = fed.feed(read)
    except chunked.BadFraming:
        passed = None
    try:
        expected: bytes | None = byte_by_byte(read, slow)
    except chunked.BadFraming:
        expected = None
    assert passed == expected
    assert (passed is read) == whole  # a whole chunk passes as the very buffer
    if whole:
        assert fed.boundary and slow.boundary


def test_the_first_read_of_a_large_chunk_is_not_cut_at_its_crlfs() -> None:
    """A read that ends in CRLF inside a chunk whose size alone is past the read's length cannot be
    whole chunks: it is not checked whole (its text, lines of it, is not cut at every CRLF)."""
    text = b"line of text\r\n" * 4096  # 57,344 bytes of a 1 MiB chunk
    with whole_checks() as checked:
        framing = chunked.Framing()
        assert framing.feed(b"100000\r\n" + text) == b"100000\r\n" + text
    assert checked == []
    assert not framing.boundary


def test_a_short_read_ending_in_a_line_end_is_checked_whole_first() -> None:
    """A read of at most ``_CHECKED_WHOLE`` bytes ending in LF is checked whole before anything
    else: one whole chunk passes as the very buffer; the start of a large chunk (a line of text
    ending the read) is refused whole once, then read as before."""
    event = b"data: {}\n\n"
    one = b"%x\r\n%b\r\n" % (len(event), event)
    with whole_checks() as checked:
        framing = chunked.Framing()
        assert framing.feed(one) is one
    assert checked == [False]
    assert framing.boundary
    start = b"100000\r\n" + b"line of text\r\n" * 100
    assert len(start) <= chunked._CHECKED_WHOLE
    with whole_checks() as checked:
        framing = chunked.Framing()
        assert framing.feed(start) == start
        assert framing.feed(b"more text\r\n") == b"more text\r\n"  # inside the chunk: not checked
    assert checked == [None]
    assert not framing.boundary
    past = b"100000\r\n" + b"x" * chunked._CHECKED_WHOLE + b"\r\n"
    with whole_checks() as checked:
        assert chunked.Framing().feed(past) == past
    assert checked == []  # longer: its first chunk's size alone is past it


def test_many_whole_chunks_then_the_end_pass_without_it() -> None:
    framing = chunked.Framing()
    events = [b"data: %d\n\n" % i for i in range(300)]
    assert framing.feed(canonical(events) + b"0\r\n\r\n") == canonical(events)
    assert framing.ended and not framing.extra
    upper = chunked.Framing()  # an upper-case size after a whole chunk: read chunk by chunk, as it came
    body = b"1\r\na\r\nA\r\n0123456789\r\n"
    assert upper.feed(body) == body and upper.boundary


def test_a_read_is_not_checked_whole_where_its_end_would_break_a_bound() -> None:
    """The chunk-by-chunk reader holds the last chunk's line to ``max_line`` and its end to
    ``max_trailer``: bounds that small keep the check of whole reads away."""
    with pytest.raises(chunked.BadFraming, match="trailer"):
        chunked.Framing(max_trailer=1).feed(b"1\r\na\r\n0\r\n\r\n")
    with pytest.raises(chunked.BadFraming, match="chunk-size line"):
        chunked.Framing(max_line=2).feed(b"1\r\n\x00\r\n0\r\n\r\n")
