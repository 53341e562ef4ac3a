"""A chunked body passed on as it came: its framing followed and checked, its bytes not re-framed.

A backend's chunked answer relayed to a client that takes chunked framing too (HTTP/1.1) needs no
decoding: :class:`Framing` reads the chunk-size lines as the bytes go by and hands back what to write
to the client, most of the time the very buffer the backend's read produced. A read of many whole
chunks (a backend that writes faster than the gateway reads) is checked all at once, in C, rather
than chunk by chunk. What the client gets is always canonical framing (``HEX CRLF data CRLF``, the
size with no leading zero): what llhttp's lax response parsing accepts beyond it (leading zeros,
spaces after the size, chunk extensions, a bare LF after an extension or a chunk's data) is rewritten
for that chunk alone, and the end (the last chunk and any trailer fields) is not passed on: the relay
writes the end itself (trailers were never passed on: aiohttp's relay drops them too).

- A chunk no larger than ``hold`` whose end has not arrived yet is held, not passed on in part, so
  the client's stream stays at a chunk boundary (:attr:`Framing.boundary`) while the backend's
  bytes are in flight and an error event can still follow if the backend fails. A larger chunk is
  passed on as it arrives. What is held is kept as the reads that brought it and joined once, when
  enough has come (a backend sending a byte at a time costs no copy per byte).
- Bounds: a chunk-size line (size, spaces, extensions) of at most ``max_line`` bytes (and
  extensions of at most 4 KiB), a size of at most 15 hex digits past at most 16 leading zeros,
  trailer fields of at most ``max_trailer`` bytes together; anything else is :class:`BadFraming`,
  and so is a chunk whose data is not followed by its line end.
"""

from __future__ import annotations

import re

__all__ = ["BadFraming", "Framing"]

_SIZE_LINE = re.compile(rb"(0{0,16}[0-9A-Fa-f]{1,15})([ \t]*(?:;[\t\x20-\x7e\x80-\xff]{0,4096}\r?|\r))\n")
"""A chunk-size line as llhttp's lax parsing reads it: the size (up to 16 leading zeros), spaces,
extensions with no control character, then CRLF (a bare LF only after an extension: llhttp refuses
one right after the size). A line is canonical when it is the size alone, with no leading zero, and
CRLF (see :func:`_canonical`)."""

_CANONICAL = re.compile(rb"([1-9a-f][0-9a-f]{0,14})\r\n")
"""The size line almost every server writes (lower-case hex, no leading zero, CRLF): tried first."""

_SIZE, _DATA, _LINE_END, _TRAILER, _DONE = range(5)


class BadFraming(ValueError):
    """The body's chunked framing is broken or beyond a bound (the message names which)."""


class Framing:
    """The framing of one chunked body, followed as it passes (see the module)."""

    __slots__ = (
        "_held",
        "_held_size",
        "_hold",
        "_left",
        "_max_line",
        "_max_trailer",
        "_need",
        "_state",
        "_trailer",
        "_whole",
        "ended",
        "extra",
    )

    def __init__(self, *, hold: int = 64 * 1024, max_line: int = 4096, max_trailer: int = 64 * 1024) -> None:
        self._hold = hold
        self._max_line = max_line
        self._max_trailer = max_trailer
        self._state = _SIZE
        # the start of a line or of a small chunk, waiting for its end: the reads that brought it
        self._held: list[bytes] = []
        self._held_size = 0
        # held bytes needed before they are looked at again (0: a line, looked at again once a read
        # brings a line end)
        self._need = 0
        self._left = 0  # data bytes of a large chunk not yet passed on
        self._trailer = 0  # trailer bytes read
        # reads may be checked whole (:func:`_whole_chunks`) when the bounds the chunk-by-chunk reader
        # holds its end to are met by any such end: the last chunk's line (``0 CRLF``, 3 bytes) within
        # ``max_line`` and the empty trailer section (CRLF) within ``max_trailer``
        self._whole = max_line >= 3 and max_trailer >= 2
        #: bytes that came after the body's end (the connection cannot be reused)
        self.extra = False
        #: the last chunk and its trailer section have been read (an attribute, not a property: it is
        #: read after every read of a relayed stream)
        self.ended = False

    @property
    def boundary(self) -> bool:
        """What was passed on ends at a chunk boundary (no chunk passed on in part)."""
        return self._state in (_SIZE, _TRAILER, _DONE)

    def feed(self, data: bytes) -> bytes:
        """The part of ``data`` (following what came before) to pass on now, canonically framed;
        ``b""`` when nothing is to be passed yet. Raises :class:`BadFraming`."""
        start = 0  # where the look below begins: what is before it passes as it came
        if self._state == _SIZE and not self._held:
            # the usual read of a relayed event stream: whole chunks, canonically framed, checked
            # together in C (see :func:`_whole_chunks`), one chunk included; a read past
            # ``_CHECKED_WHOLE`` only when its first chunk may end inside it (the first read of a
            # large chunk is not cut at every CRLF of its data); anything else is looked at below,
            # after the first chunk when it is whole
            long = len(data) > _CHECKED_WHOLE
            found = _CANONICAL.match(data) if long else None
            if (
                self._whole
                and data[-1:] == b"\n"
                and (not long or (found is not None and len(data) >= _SMALLEST[found.end() - 2]))
                and (ended := _whole_chunks(data)) is not None
            ):
                if not ended:
                    return data
                self._state = _DONE
                self.ended = True
                return data[: -len(_LAST)]
            if not long:
                found = _CANONICAL.match(data)
            if found is not None:
                if data.endswith(b"\r\n"):
                    # one chunk (its data may hold a CRLF): its size line is the length between
                    between = len(data) - found.end() - 2
                    if 0 < between < _LOOKED_UP and _SIZES[between] == found[1]:
                        return data
                stop = found.end() + int(found[1], 16)
                if data.startswith(b"\r\n", stop):
                    start = stop + 2
                    if start == len(data):  # one whole chunk (of 4 KiB or more, or not checked whole)
                        return data
        elif self._held:
            held = self._held
            held.append(data)
            self._held_size += len(data)
            if self._need:
                if self._held_size < self._need:
                    return b""
            elif b"\n" not in data:  # a line not yet whole: within its bound, it waits
                if self._state == _TRAILER:
                    if self._trailer + self._held_size > self._max_trailer:
                        raise BadFraming("the trailer fields are too long")
                elif self._held_size >= self._max_line:
                    raise BadFraming("a chunk-size line is not valid or too long")
                return b""
            data = b"".join(held)
            self._held = []
            self._held_size = self._need = 0
        state = self._state
        if state == _DONE:
            if data:
                self.extra = True
            return b""
        if state == _TRAILER:
            self._trailers(data, 0)
            return b""
        size = len(data)
        pos = start
        if state == _DATA:  # inside a large chunk: its bytes pass as they come
            pos = min(self._left, size)
            self._left -= pos
            if self._left:
                return data
            state = _LINE_END
        out: list[bytes] = []
        run = 0  # start of the bytes passed on as they came
        stop_at = size  # end of what is passed on now (the rest is held, or is the body's end)
        if state == _LINE_END:
            end = _line_end(data, pos)
            if end < 0:
                self._state = _LINE_END
                self._keep(data, pos, need=2)
                return data[:pos]
            if end - pos != 2:  # a bare LF: written as CRLF
                out += (data[run:pos], b"\r\n")
                run = end
            pos = end
            state = _SIZE
        fast = _CANONICAL.match
        match = _SIZE_LINE.match
        max_line = self._max_line
        while pos < size:
            found = fast(data, pos)
            if found is not None:  # the common case first: a whole chunk, canonically framed
                start = found.end()
                stop = start + int(found[1], 16)
                if data[stop : stop + 2] == b"\r\n":
                    pos = stop + 2
                    continue
            found = match(data, pos)
            if found is None:
                if data.find(b"\n", pos, pos + max_line) >= 0 or size - pos >= max_line:
                    raise BadFraming("a chunk-size line is not valid or too long")
                self._keep(data, pos, need=0)
                stop_at = pos
                break
            start = found.end()
            if start - pos > max_line:
                raise BadFraming("a chunk-size line is too long")
            length = int(found[1], 16)
            stop = start + length
            if length == 0:  # the last chunk: trailer fields follow, then the end (none passed on)
                stop_at = pos
                state = _TRAILER
                pos = start
                break
            canonical = _canonical(found, data, pos)
            end = _line_end(data, stop)
            if end >= 0:  # the whole chunk is here
                if not canonical:
                    out += (data[run:pos], b"%x\r\n" % length)
                    run = start
                if end - stop != 2:
                    out += (data[run:stop], b"\r\n")
                    run = end
                pos = end
                continue
            if length <= self._hold:  # a small chunk not yet whole: held until it is
                self._keep(data, pos, need=stop + 1 - pos)
                stop_at = pos
                break
            # a large chunk: its size line and what of its data is here are passed on now
            if not canonical:
                out += (data[run:pos], b"%x\r\n" % length)
                run = start
            if stop < size:  # its data is here, its line end not yet (a lone CR)
                state = _LINE_END
                self._keep(data, stop, need=2)
                stop_at = stop
            else:
                state = _DATA
                self._left = stop - size
            break
        self._state = state
        if state == _TRAILER:
            self._trailers(data, pos)
        out.append(data[run:stop_at])
        return out[0] if len(out) == 1 else b"".join(out)

    def _keep(self, data: bytes, pos: int, *, need: int) -> None:
        """Hold ``data[pos:]`` until ``need`` bytes are held (0: until a read brings a line end)."""
        rest = data[pos:]
        self._held = [rest]
        self._held_size = len(rest)
        self._need = need

    def _trailers(self, data: bytes, pos: int) -> None:
        """Read trailer lines from ``pos`` up to the empty line that ends the body (dropped)."""
        size = len(data)
        while pos < size:
            end = data.find(b"\n", pos)
            if end < 0:
                if self._trailer + size - pos > self._max_trailer:
                    raise BadFraming("the trailer fields are too long")
                self._keep(data, pos, need=0)
                return
            line = data[pos:end]
            self._trailer += end + 1 - pos
            if self._trailer > self._max_trailer:
                raise BadFraming("the trailer fields are too long")
            pos = end + 1
            if line in (b"", b"\r"):
                self._state = _DONE
                self.ended = True
                if pos < size:
                    self.extra = True
                return


_LAST = b"0\r\n\r\n"
_CHECKED_WHOLE = 16 * 1024
"""The longest read ending in LF checked whole before anything else (most reads of an event stream
are far shorter). The check cuts the read at every CRLF: a longer read is checked whole only when its
first chunk may end inside it, so the first read of a large chunk of text is not cut line by line."""
_LOOKED_UP = 4096
_SIZES: list[bytes | None] = [None, *(b"%x" % n for n in range(1, _LOOKED_UP))]
"""The canonical size line of each length below 4 KiB (an event's usual size), looked up rather than
written for each chunk; ``None`` for 0, which no size line between chunks equals (a last chunk in the
middle: what follows it is not the body's)."""
_SMALLEST = [0, *(16 ** (digits - 1) for digits in range(1, 16))]
"""The smallest size a canonical size line of each number of hex digits gives (up to 15)."""


def _whole_chunks(data: bytes) -> bool | None:
    """Whether ``data`` is whole canonically framed chunks and nothing else (False), or such chunks
    then the last chunk with no trailer field (True); None when it is anything else (the caller reads
    it chunk by chunk). The look is in C, not per chunk in Python: ``data`` is cut at every CRLF and
    the pieces read as (size line, data) pairs. When every size line is its data's length in
    lower-case hex with no leading zero, those pairs are exactly how ``data`` parses, chunk by chunk
    from its start (each size line ends at the first CRLF after it, each chunk's data is as long as
    its size says and is followed by CRLF); a CRLF inside a chunk's data leaves some pair unequal, and
    ``data`` is then read chunk by chunk."""
    parts = data.split(b"\r\n")
    last = len(parts) - 1  # the piece after the last CRLF: empty when ``data`` ends in one
    if parts[last]:
        return None
    if last == 2:  # one chunk: its size looked up (a chunk of 4 KiB or more is read as before)
        length = len(parts[1])
        return False if length < _LOOKED_UP and _SIZES[length] == parts[0] else None
    end = last
    ended = last > 2 and not parts[last - 1] and parts[last - 2] == b"0"
    if ended:
        end -= 2
    # (an odd count of pieces leaves the two lists unequal; so does an empty payload)
    try:
        sizes = [_SIZES[len(payload)] for payload in parts[1:end:2]]
    except IndexError:  # a chunk of 4 KiB or more
        sizes = [b"%x" % len(payload) if payload else None for payload in parts[1:end:2]]
    if parts[0:end:2] != sizes:
        return None
    return ended


def _canonical(found: re.Match[bytes], data: bytes, pos: int) -> bool:
    """The size line matched at ``pos`` is the size alone, with no leading zero, then CRLF."""
    return found.end(1) + 2 == found.end() and data[pos] != 0x30


def _line_end(data: bytes, pos: int) -> int:
    """Where the line end at ``pos`` (CRLF, or a bare LF) stops; -1 when it has not all come yet;
    :class:`BadFraming` when something else is there (a chunk longer than its size said)."""
    if data.startswith(b"\r\n", pos):
        return pos + 2
    if data.startswith(b"\n", pos):
        return pos + 1
    if pos >= len(data) or (pos + 1 == len(data) and data[pos] == 0x0D):
        return -1
    raise BadFraming("a chunk's data is not followed by its line end")
