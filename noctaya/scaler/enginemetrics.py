"""Reading the engines' own metrics: every Ready backend replica's Prometheus endpoint, each period.

The process serving KEDA (the co-located scaler, or the aggregate scaler) runs one
:class:`EngineReader`; a round finds the Ready replicas (the headless Service's DNS answer, or the
endpoints file of ``noctaya dev``), reads each one's metrics endpoint at once and keeps the newest
:class:`Round`. Nothing here sends a request to the gateway or the backend Service, so reading
never counts as demand and never wakes a cold model; with no Ready replica nothing is read.

Bounds of one round (``noctaya.contract.engines.EngineSignalSection``): DNS and each read end within
``timeout``; a response is read up to ``maxResponseBytes`` (a bigger one, or one announcing a bigger
``Content-Length``, is refused), uncompressed only, without following redirects, without proxies
from the environment; at most ``maxReplicas`` replicas. The text is parsed off the event loop, on
one worker thread, with ``prometheus_client.parser.text_string_to_metric_families``. That parser
is not made for hostile input: a comment line of many blanks or a sample line of many labels
costs it time quadratic in the line's length, a line it cannot read raises ``ValueError`` (an
integer of more than 4300 digits too), ``NaN`` and ``+Inf`` are values, a ``counter`` has
``_total`` appended to its samples' names, and samples of one name apart from their ``# TYPE`` line
come as separate families. So only the lines of the wanted names (their samples, ``# TYPE`` and
``# HELP``) go to it, each at most ``maxLineBytes`` long; every sample line is counted, and a
response of more than ``maxSeries`` is refused; samples are matched by name over all families.

A replica's outcome is ``ok`` or one reason (``unreachable``, ``timeout``, ``http_status``,
``too_large``, ``malformed``, ``too_many_series``, ``missing``, ``invalid_value``); a change of
it is logged once (a warning going bad, info coming back) and every read is counted.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import io
import logging
import math
import socket
from collections.abc import Sequence
from typing import Final

import aiohttp
import prometheus_client
from prometheus_client import parser

from noctaya.contract import engines

logger = logging.getLogger(__name__)

ACCEPT: Final = "text/plain;version=0.0.4"
#: the outcomes of one replica's read, as counted in ``noctaya_engine_reads_total``
REASONS: Final = (
    "ok",
    "unreachable",
    "timeout",
    "http_status",
    "too_large",
    "malformed",
    "too_many_series",
    "missing",
    "invalid_value",
)
MAX_ENDPOINTS_FILE_BYTES: Final = 256 << 10
#: failures kept in a round's document (the count is always whole)
MAX_LISTED_FAILURES: Final = 8


class Unreadable(Exception):
    """A replica's metrics could not be used; ``reason`` is one of :data:`REASONS`."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


@dataclasses.dataclass(frozen=True, kw_only=True)
class Values:
    """What one replica reports: waiting requests and KV-cache use (None: not asked for)."""

    queue: float | None = None
    kv_cache: float | None = None


@dataclasses.dataclass(frozen=True, kw_only=True)
class Failure:
    replica: str
    reason: str
    detail: str


@dataclasses.dataclass(frozen=True, kw_only=True)
class Round:
    """One read of every Ready replica: the sums over the replicas read, and what failed."""

    at: float  # monotonic time the round ended
    replicas: int  # Ready replicas found
    queue: float = 0.0
    kv_cache: float = 0.0
    failures: tuple[Failure, ...] = ()
    problem: str | None = None  # the round itself failed (DNS, endpoints file, too many replicas)

    @property
    def complete(self) -> bool:
        """Every Ready replica was read with valid values (and at least one was)."""
        return self.problem is None and not self.failures and self.replicas > 0

    def document(self) -> dict[str, object]:
        """For ``/noctaya/queue`` and the aggregate scaler's ``/healthz``: no replica address (those
        pages are open); reasons only."""
        return {
            "replicas": self.replicas,
            "read": self.replicas - len(self.failures) if self.problem is None else 0,
            "queue": self.queue,
            "kvCache": self.kv_cache,
            "problem": self.problem,
            "failures": [
                {"reason": f.reason, "detail": f.detail} for f in self.failures[:MAX_LISTED_FAILURES]
            ],
        }


# ------------------------------------------------------------------------------------------ parsing
def _wanted_line(line: str, names: frozenset[str]) -> bool:
    """A sample, ``# TYPE`` or ``# HELP`` line of one of ``names`` (a cheap look, not a parse)."""
    if line.startswith("#"):
        parts = line.split(None, 3)
        return len(parts) >= 3 and parts[1] in ("TYPE", "HELP") and parts[2] in names
    end = len(line)
    for stop in ("{", " ", "\t"):
        at = line.find(stop, 0, end)
        if at != -1:
            end = at
    return line[:end] in names


def parse_values(
    body: bytes,
    *,
    queue_metrics: Sequence[str],
    kv_cache_metrics: Sequence[str],
    max_series: int,
    max_line_bytes: int,
    max_queue_value: float,
) -> Values:
    """The wanted values of one metrics response; :class:`Unreadable` says why not.

    The first name of each list with a sample counts; a queue is the sum of its series, a KV-cache
    use the largest. Runs on a worker thread: its cost is linear in ``len(body)``."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise Unreadable("malformed", "the response is not UTF-8 text") from None
    names = frozenset((*queue_metrics, *kv_cache_metrics))
    kept: list[str] = []
    series = 0
    for raw in io.StringIO(text):  # lazily: a page of a million series stops at the bound
        line = raw.strip()
        if not line:
            continue
        if not line.startswith("#"):
            series += 1
            if series > max_series:
                raise Unreadable("too_many_series", f"more than {max_series} series in one response")
        if _wanted_line(line, names):
            if len(line) > max_line_bytes:
                raise Unreadable("malformed", f"a line of a read metric is over {max_line_bytes} characters")
            kept.append(line)
    found: dict[str, list[float]] = {}
    try:
        for family in parser.text_string_to_metric_families("\n".join(kept)):
            for sample in family.samples:
                if sample.name in names:
                    found.setdefault(sample.name, []).append(float(sample.value))
    except ValueError as exc:
        raise Unreadable("malformed", f"not the Prometheus text format: {str(exc)[:120]!r}") from None
    queue = _first(found, queue_metrics)
    kv = _first(found, kv_cache_metrics)
    values = Values(
        queue=None if queue is None else _checked(math.fsum(queue), upper=max_queue_value, what="queue"),
        kv_cache=None if kv is None else _checked(max(kv), upper=1.0, what="KV-cache use"),
    )
    if queue_metrics and values.queue is None:
        raise Unreadable("missing", f"none of {', '.join(queue_metrics)} in the response")
    if kv_cache_metrics and values.kv_cache is None:
        raise Unreadable("missing", f"none of {', '.join(kv_cache_metrics)} in the response")
    return values


def _first(found: dict[str, list[float]], names: Sequence[str]) -> list[float] | None:
    for name in names:
        if name in found:
            return found[name]
    return None


def _checked(value: float, *, upper: float, what: str) -> float:
    if math.isnan(value) or not 0.0 <= value <= upper:
        raise Unreadable("invalid_value", f"{what} {value!r} is not within 0..{upper:g}")
    return value


# --------------------------------------------------------------------------------------- discovery
async def dns_replicas(*, host: str, port: int) -> list[str]:
    """``address:port`` of every A/AAAA record of ``host`` (a headless Service lists its Ready Pods);
    a name that does not exist (no Pod Ready yet) has none."""
    loop = asyncio.get_running_loop()
    try:
        infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    except socket.gaierror as exc:
        if exc.errno in (socket.EAI_NONAME, getattr(socket, "EAI_NODATA", socket.EAI_NONAME)):
            return []
        raise Unreadable("unreachable", f"DNS lookup of {host}: {exc.strerror or exc}") from None
    seen: dict[str, None] = {}
    for family, _type, _proto, _name, sockaddr in infos:
        address = str(sockaddr[0])
        seen[f"[{address}]:{port}" if family == socket.AF_INET6 else f"{address}:{port}"] = None
    return sorted(seen)


def file_replicas(*, path: str) -> list[str]:
    """The ``host:port`` lines of ``path`` (a missing file: none yet)."""
    try:
        with open(path, "rb") as handle:
            raw = handle.read(MAX_ENDPOINTS_FILE_BYTES + 1)
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise Unreadable("unreachable", f"endpoints file: {exc.strerror or exc}") from None
    if len(raw) > MAX_ENDPOINTS_FILE_BYTES:
        raise Unreadable("too_large", f"endpoints file over {MAX_ENDPOINTS_FILE_BYTES} bytes")
    lines = raw.decode("utf-8", "replace").split("\n")
    endpoints = sorted({line.strip() for line in lines if line.strip() and not line.startswith("#")})
    for endpoint in endpoints:
        host, sep, port = endpoint.rpartition(":")
        if not sep or not host or not port.isdigit() or not 1 <= int(port) <= 65535:
            raise Unreadable("malformed", f"endpoints file: {endpoint[:64]!r} is not host:port")
    return endpoints


# ---------------------------------------------------------------------------------------- metrics
class EngineMetrics:
    """The reader's metrics, in the registry of the process serving KEDA."""

    def __init__(self, *, registry: prometheus_client.CollectorRegistry) -> None:
        self.reads = prometheus_client.Counter(
            "noctaya_engine_reads",
            "Reads of a backend replica's metrics endpoint by outcome",
            ["result"],
            registry=registry,
        )
        for reason in REASONS:  # every outcome visible at zero
            self.reads.labels(result=reason)
        self.replicas = prometheus_client.Gauge(
            "noctaya_engine_replicas", "Ready backend replicas found in the last round", registry=registry
        )
        self.failed = prometheus_client.Gauge(
            "noctaya_engine_replicas_unreadable",
            "Ready backend replicas whose metrics could not be used in the last round",
            registry=registry,
        )
        self.queue = prometheus_client.Gauge(
            "noctaya_engine_queue",
            "Engines' waiting requests summed over the replicas of the last complete round",
            registry=registry,
        )
        self.kv_cache = prometheus_client.Gauge(
            "noctaya_engine_kv_cache",
            "Engines' KV-cache use summed over the replicas of the last complete round",
            registry=registry,
        )
        self.fallback = prometheus_client.Gauge(
            "noctaya_engine_fallback",
            "1 while the served metric falls back to the gateways' count (a replica unreadable or stale)",
            registry=registry,
        )
        self.read_seconds = prometheus_client.Histogram(
            "noctaya_engine_round_seconds",
            "Duration of one round over every Ready replica",
            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0),
            registry=registry,
        )
        self.interval = prometheus_client.Gauge(
            "noctaya_engine_interval_seconds", "Period of the rounds (engine.interval)", registry=registry
        )
        self.timeout = prometheus_client.Gauge(
            "noctaya_engine_timeout_seconds",
            "Longest read of one replica (engine.timeout)",
            registry=registry,
        )
        self.max_bytes = prometheus_client.Gauge(
            "noctaya_engine_response_bytes_max",
            "Largest metrics response read (engine.maxResponseBytes)",
            registry=registry,
        )
        self.max_series = prometheus_client.Gauge(
            "noctaya_engine_series_max",
            "Most sample lines in one metrics response (engine.maxSeries)",
            registry=registry,
        )
        self.max_replicas = prometheus_client.Gauge(
            "noctaya_engine_replicas_max",
            "Most replicas read each round (engine.maxReplicas)",
            registry=registry,
        )


# ----------------------------------------------------------------------------------------- reader
class EngineReader:
    """Reads every Ready replica each ``interval``; :attr:`latest` is the newest round."""

    def __init__(
        self,
        *,
        section: engines.EngineSignalSection,
        metrics: EngineMetrics | None = None,  # None when nobody scrapes (tests, bench)
    ) -> None:
        self.section = section
        self.metrics = metrics
        self.latest: Round | None = None
        self.rounds = 0
        self._states: dict[str, str] = {}  # replica -> last outcome ("ok" or a reason), for the log
        self._problem: str | None = None
        self._session: aiohttp.ClientSession | None = None
        # one worker: parses run one after another, never more than one response held per thread
        self._parser = concurrent.futures.ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="noctaya-engine-parse"
        )
        self._changed = asyncio.Event()
        if metrics is not None:
            metrics.interval.set(section.interval)
            metrics.timeout.set(section.timeout)
            metrics.max_bytes.set(section.max_response_bytes)
            metrics.max_series.set(section.max_series)
            metrics.max_replicas.set(section.max_replicas)

    async def __aenter__(self) -> EngineReader:
        """Open the client session (rounds need it); :meth:`run` does this itself."""
        connector = aiohttp.TCPConnector(limit=min(64, self.section.max_replicas), keepalive_timeout=30)
        self._session = aiohttp.ClientSession(
            connector=connector,
            auto_decompress=False,
            trust_env=False,  # no proxy from the environment between us and a Pod
            cookie_jar=aiohttp.DummyCookieJar(),
            skip_auto_headers=("User-Agent",),
        )
        return self

    async def __aexit__(self, *_exc: object) -> None:
        session, self._session = self._session, None
        if session is not None:
            await session.close()

    def close(self) -> None:
        """Let the parse thread go (it ends after the parse it may be running)."""
        self._parser.shutdown(wait=False, cancel_futures=True)

    async def run(self) -> None:
        """Read every ``interval`` until cancelled (a round that overruns starts the next at once)."""
        loop = asyncio.get_running_loop()
        try:
            async with self:
                while True:
                    started = loop.time()
                    await self.read_once()
                    await asyncio.sleep(max(0.0, self.section.interval - (loop.time() - started)))
        finally:
            self.close()

    async def wait_round(self) -> Round:
        """The next round to end (for tests and the bench)."""
        self._changed.clear()
        await self._changed.wait()
        assert self.latest is not None
        return self.latest

    async def read_once(self) -> Round:
        """One round now."""
        loop = asyncio.get_running_loop()
        started = loop.time()
        section = self.section
        problem: str | None = None
        replicas: list[str] = []
        try:
            async with asyncio.timeout(section.timeout):
                if section.host is not None:
                    replicas = await dns_replicas(host=section.host, port=section.port)
                else:
                    assert section.endpoints_file is not None
                    replicas = file_replicas(path=section.endpoints_file)
        except TimeoutError:
            problem = f"finding the replicas took over {section.timeout:g}s"
        except Unreadable as exc:
            problem = exc.detail
        if problem is None and len(replicas) > section.max_replicas:
            problem = f"{len(replicas)} Ready replicas, more than maxReplicas ({section.max_replicas})"
        self._note_problem(problem)
        failures: list[Failure] = []
        queue = kv = 0.0
        if problem is None and replicas:
            outcomes = await asyncio.gather(*(self._read(replica) for replica in replicas))
            for outcome in outcomes:
                if isinstance(outcome, Failure):
                    failures.append(outcome)
                else:
                    queue += outcome.queue or 0.0
                    kv += outcome.kv_cache or 0.0
        self._forget_gone(replicas if problem is None else list(self._states))
        result = Round(
            at=loop.time(),
            replicas=len(replicas),
            queue=queue,
            kv_cache=kv,
            failures=tuple(failures),
            problem=problem,
        )
        self.latest = result
        self.rounds += 1
        if self.metrics is not None:
            self.metrics.read_seconds.observe(loop.time() - started)
            self.metrics.replicas.set(result.replicas)
            self.metrics.failed.set(len(failures))
            if result.complete:
                self.metrics.queue.set(queue)
                self.metrics.kv_cache.set(kv)
        self._changed.set()
        return result

    async def _read(self, replica: str) -> Values | Failure:
        try:
            async with asyncio.timeout(self.section.timeout):
                body = await self._fetch(replica)
            loop = asyncio.get_running_loop()
            s = self.section
            values = await loop.run_in_executor(
                self._parser,
                lambda: parse_values(
                    body,
                    queue_metrics=s.queue_metrics if s.queue_target is not None else (),
                    kv_cache_metrics=s.kv_cache_metrics if s.kv_cache_target is not None else (),
                    max_series=s.max_series,
                    max_line_bytes=s.max_line_bytes,
                    max_queue_value=s.max_queue_value,
                ),
            )
        except TimeoutError:
            return self._outcome(
                replica, Unreadable("timeout", f"no whole answer within {self.section.timeout:g}s")
            )
        except Unreadable as exc:
            return self._outcome(replica, exc)
        self._outcome(replica, None)
        return values

    async def _fetch(self, replica: str) -> bytes:
        assert self._session is not None
        limit = self.section.max_response_bytes
        url = f"http://{replica}{self.section.path}"
        try:
            async with self._session.get(
                url,
                allow_redirects=False,
                headers={"Accept": ACCEPT, "Accept-Encoding": "identity"},
            ) as response:
                if response.status != 200:
                    raise Unreadable("http_status", f"HTTP {response.status}")
                encoding = response.headers.get("Content-Encoding", "identity").strip().lower()
                if encoding not in ("", "identity"):
                    raise Unreadable(
                        "malformed", f"a {encoding[:32]!r}-encoded response (asked for identity)"
                    )
                if response.content_length is not None and response.content_length > limit:
                    raise Unreadable("too_large", f"Content-Length over {limit} bytes")
                chunks: list[bytes] = []
                size = 0
                while chunk := await response.content.read(limit + 1 - size):
                    chunks.append(chunk)
                    size += len(chunk)
                    if size > limit:
                        raise Unreadable("too_large", f"a response over {limit} bytes")
                return b"".join(chunks)
        except aiohttp.ClientResponseError as exc:  # a response head aiohttp could not parse
            raise Unreadable("malformed", f"HTTP: {exc.message[:120]}") from None
        except (aiohttp.ClientError, OSError) as exc:
            raise Unreadable("unreachable", str(exc)[:200] or type(exc).__name__) from None

    def _outcome(self, replica: str, error: Unreadable | None) -> Failure:
        reason = "ok" if error is None else error.reason
        if self.metrics is not None:
            self.metrics.reads.labels(result=reason).inc()
        previous = self._states.get(replica)
        self._states[replica] = reason
        if error is not None and previous != reason:
            logger.warning(
                "engine metrics of replica %s unusable (%s: %s); the served metric falls back to the "
                "gateways' count",
                replica,
                reason,
                error.detail,
            )
        elif error is None and previous not in (None, "ok"):
            logger.info("engine metrics of replica %s readable again", replica)
        return Failure(replica=replica, reason=reason, detail="" if error is None else error.detail)

    def _note_problem(self, problem: str | None) -> None:
        if problem != self._problem:
            if problem is not None:
                logger.warning(
                    "engine metrics: %s; the served metric falls back to the gateways' count", problem
                )
            else:
                logger.info("engine metrics: replicas found again")
        self._problem = problem

    def _forget_gone(self, present: Sequence[str]) -> None:
        keep = set(present)
        for replica in [r for r in self._states if r not in keep]:
            del self._states[replica]
