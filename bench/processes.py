"""Child processes of the benchmarks: start them, wait until they answer, measure them, stop them.

``Process`` is one child started by a benchmark (stopped by its own pid); CPU seconds and RSS are read
from ``/proc``, and so is :class:`MachineTimes`, how busy the whole machine was while a phase ran
(its other work and, on a shared host, what other guests took: both disturb the figures); nginx runs
from a temporary config as the reference reverse proxy.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import math
import os
import pathlib
import shutil
import signal
import subprocess
import sys

import aiohttp
from prometheus_client import parser

from noctaya.dev import processes as dev_processes

PYTHON = sys.executable


_RESERVED: list[dev_processes.PortReservation] = []


def reserved_port() -> int:
    """A loopback port held until this run ends (``noctaya.dev.processes.PortReservation``): no other
    process can take it meanwhile, a child that binds it with ``SO_REUSEADDR`` (the gateway, the
    scaler, the fake engine, nginx) listens on it, and while nothing listens a connect is refused at
    once. A server in this process binds its own socket instead (port 0 read back, or a bound socket
    handed over)."""
    _RESERVED.append(dev_processes.PortReservation())
    return _RESERVED[-1].port


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (from /proc), in seconds."""
    fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclasses.dataclass(frozen=True)
class MachineTimes:
    """The machine's CPU time since boot, in clock ticks summed over its CPUs (``/proc/stat``)."""

    busy: int  # user, nice, system, irq and softirq (guest time is inside user and nice already)
    steal: int  # taken by the hypervisor for other guests while this one wanted to run
    total: int  # all of it: busy, steal, idle and I/O wait
    cpus: int

    @classmethod
    def parse(cls, text: str) -> MachineTimes:
        """From the text of ``/proc/stat``: its ``cpu`` line (the sum over CPUs) and its ``cpuN``
        lines (counted). ``ValueError`` when the ``cpu`` line is missing or short."""
        lines = text.splitlines()
        summed = next((line.split() for line in lines if line.startswith("cpu ")), None)
        if summed is None or len(summed) < 9:
            raise ValueError("/proc/stat: no 'cpu' line with user to steal times")
        user, nice, system, idle, iowait, irq, softirq, steal = (int(value) for value in summed[1:9])
        cpus = sum(1 for line in lines if line.startswith("cpu") and line[3:4].isdigit())
        return cls(
            busy=user + nice + system + irq + softirq,
            steal=steal,
            total=user + nice + system + idle + iowait + irq + softirq + steal,
            cpus=max(cpus, 1),
        )

    @classmethod
    def now(cls) -> MachineTimes:
        return cls.parse(pathlib.Path("/proc/stat").read_text())

    def stolen_since(self, before: MachineTimes) -> float:
        """The percentage of the CPUs' time from ``before`` to these times that other guests took
        (NaN when no clock tick passed)."""
        total = self.total - before.total
        return 100 * (self.steal - before.steal) / total if total > 0 else math.nan

    def since(self, before: MachineTimes) -> str:
        """How busy the machine's CPUs were from ``before`` to these times, and how much of their
        time other guests took: ``"2 CPUs 84 % busy, 0.3 % stolen"``."""
        total = self.total - before.total
        if total <= 0:
            return f"{self.cpus} CPUs: no time elapsed"
        busy = 100 * (self.busy - before.busy) / total
        return f"{self.cpus} CPUs {busy:.0f} % busy, {self.stolen_since(before):.1f} % stolen"


def rss_mib(pid: int) -> float:
    for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


class Process:
    """A child process we started; stopped with SIGTERM (then SIGKILL) by its own pid."""

    def __init__(
        self,
        name: str,
        argv: list[str],
        *,
        log: pathlib.Path,
        cwd: pathlib.Path | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        self.name = name
        self.log = log
        self._file = log.open("wb")
        self.popen = subprocess.Popen(
            argv,
            stdout=self._file,
            stderr=subprocess.STDOUT,
            env={**(os.environ if env is None else env), "PYTHONUNBUFFERED": "1"},
            cwd=cwd,
        )

    @property
    def pid(self) -> int:
        return self.popen.pid

    def stop(self) -> None:
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGTERM)
            try:
                self.popen.wait(15)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait(5)
        self._file.close()


def wait_http(url: str, *, within: float = 20.0, ready_key: str | None = None) -> None:
    async def poll() -> None:
        async with asyncio.timeout(within), aiohttp.ClientSession() as session:
            while True:
                with contextlib.suppress(aiohttp.ClientError):
                    async with session.get(url) as response:
                        if ready_key is None and response.status < 500:
                            return
                        if ready_key is not None and (await response.json()).get(ready_key):
                            return
                await asyncio.sleep(0.05)

    asyncio.run(poll())


def cold_admitted(url: str) -> float:
    """Requests a gateway at ``url`` has held as cold so far (its ``/metrics``): a warm phase that
    raises it measured some requests on the cold path."""

    async def read() -> str:
        async with aiohttp.ClientSession() as session, session.get(url + "/metrics") as response:
            response.raise_for_status()
            return await response.text()

    for family in parser.text_string_to_metric_families(asyncio.run(read())):
        for sample in family.samples:
            if sample.name == "noctaya_gateway_admitted_total" and sample.labels.get("path") == "cold":
                return sample.value
    return 0.0


NGINX_CONF = """
worker_processes 1;
daemon off;
pid {tmp}/nginx.pid;
error_log {tmp}/nginx-error.log warn;
worker_rlimit_nofile 20000;
events {{ worker_connections 19000; }}
http {{
    access_log off;
    client_body_temp_path {tmp}/body;
    proxy_temp_path {tmp}/proxy;
    fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi;
    scgi_temp_path {tmp}/scgi;
    upstream backend {{ server 127.0.0.1:{backend}; keepalive 1024; }}
    server {{
        listen 127.0.0.1:{port} backlog=4096;
        location / {{
            proxy_pass http://backend;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_buffering off;
            proxy_request_buffering off;
            proxy_read_timeout 300s;
        }}
    }}
    upstream held {{ server 127.0.0.1:{held_backend}; }}
    server {{
        listen 127.0.0.1:{held_port} backlog=4096;
        location / {{
            proxy_pass http://held;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_buffering off;
            proxy_request_buffering off;
            proxy_read_timeout 3600s;
        }}
    }}
    server {{
        listen 127.0.0.1:{reject_port} backlog=4096;
        location / {{
            default_type application/json;
            add_header Retry-After 10 always;
            return 429 '{{"error":{{"message":"queue full","type":"rate_limit_exceeded"}}}}';
        }}
    }}
}}
"""


class PeerMissing(Exception):
    """A peer the run was asked for cannot run (the message says what is missing)."""


def nginx_binary() -> str | None:
    return shutil.which("nginx") or ("/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else None)


NGINX_HELD_MAX = 7_000
"""Streams nginx holds at most here: each takes a client and an upstream connection, one worker has
19,000 connections (20,000 descriptors is the hard limit of this machine's processes), and near 9,000
held its worker ran out of them."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class Nginx:
    """A started nginx: ``port`` proxies to the backend, ``reject_port`` answers a static 429, and
    ``held_port`` proxies to whatever listens on ``held_backend`` (a holding server, started later)."""

    process: Process
    port: int
    reject_port: int
    held_port: int
    held_backend: int


def start_nginx(tmp: pathlib.Path, *, backend: int, required: bool = False) -> Nginx | None:
    """nginx in front of ``backend``; None (said on stdout) when it is not installed or does not
    start, unless ``required``: then :class:`PeerMissing`."""
    binary = nginx_binary()
    if binary is None:
        if required:
            raise PeerMissing("nginx not found (install it with: apt-get install -y nginx)")
        print("nginx not found: the nginx column is skipped (install it with: apt-get install -y nginx)")
        return None
    port, reject_port, held_port, held_backend = (reserved_port() for _ in range(4))
    conf = tmp / "nginx.conf"
    conf.write_text(
        NGINX_CONF.format(
            tmp=tmp,
            backend=backend,
            port=port,
            reject_port=reject_port,
            held_port=held_port,
            held_backend=held_backend,
        )
    )
    process = Process("nginx", [binary, "-c", str(conf), "-p", str(tmp)], log=tmp / "nginx.log")
    try:
        wait_http(f"http://127.0.0.1:{port}/health")
    except TimeoutError:
        process.stop()
        if required:
            raise PeerMissing(f"nginx did not start (see {tmp / 'nginx-error.log'})") from None
        print(f"nginx did not start (see {tmp / 'nginx-error.log'}): the nginx column is skipped")
        return None
    return Nginx(
        process=process, port=port, reject_port=reject_port, held_port=held_port, held_backend=held_backend
    )


def nginx_worker_pid(master: Process) -> int:
    """nginx serves from its worker; CPU is counted there (plus the master, which is idle)."""
    children = pathlib.Path(f"/proc/{master.pid}/task/{master.pid}/children")
    pids = [int(p) for p in children.read_text().split()] if children.exists() else []
    return pids[0] if pids else master.pid
