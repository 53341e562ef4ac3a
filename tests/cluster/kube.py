"""A small synchronous client of the real API server, for the cluster tier's assertions.

It reads the kubeconfig ``scripts/cluster.sh up`` writes (client certificate, key and CA as files or
inline data), speaks JSON over HTTPS with the standard library, and retries only what the server asks
to be retried (429 with ``Retry-After``, e.g. a new CRD's storage still initializing; at most 10 times,
at most 2 s apart): any other unexpected status is an :class:`ApiError` carrying the server's ``Status``
body. ``wait`` polls a condition until a
deadline and fails with the last value seen.
"""

from __future__ import annotations

import base64
import json
import pathlib
import ssl
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from typing import Any, TypeVar

import yaml

T = TypeVar("T")

APPLY = "application/apply-patch+yaml"
MERGE = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"


class ApiError(Exception):
    def __init__(self, *, status: int, body: dict[str, Any], method: str, path: str) -> None:
        super().__init__(f"{method} {path}: {status} {body.get('reason', '')}: {body.get('message', body)}")
        self.status = status
        self.body = body

    @property
    def causes(self) -> list[dict[str, Any]]:
        return list(self.body.get("details", {}).get("causes", []))


def _file(entry: dict[str, Any], key: str, tmp: pathlib.Path) -> str | None:
    if f"{key}-data" in entry:
        path = tmp / key
        path.write_bytes(base64.b64decode(entry[f"{key}-data"]))
        return str(path)
    value = entry.get(key)
    return str(value) if value else None


class Kube:
    """The API server named by ``kubeconfig``'s current context."""

    def __init__(self, *, kubeconfig: pathlib.Path, timeout: float = 30.0) -> None:
        config = yaml.safe_load(kubeconfig.read_text(encoding="utf-8"))
        context_name = config["current-context"]
        context = next(c["context"] for c in config["contexts"] if c["name"] == context_name)
        cluster = next(c["cluster"] for c in config["clusters"] if c["name"] == context["cluster"])
        user = next(u["user"] for u in config["users"] if u["name"] == context["user"])
        self.server = str(cluster["server"]).rstrip("/")
        self.timeout = timeout
        self._tmp = tempfile.TemporaryDirectory(prefix="noctaya-kube-")
        tmp = pathlib.Path(self._tmp.name)
        ca = _file(cluster, "certificate-authority", tmp)
        self._ssl = ssl.create_default_context(cafile=ca)
        if cluster.get("insecure-skip-tls-verify"):
            self._ssl.check_hostname = False
            self._ssl.verify_mode = ssl.CERT_NONE
        cert, key = _file(user, "client-certificate", tmp), _file(user, "client-key", tmp)
        if cert:
            self._ssl.load_cert_chain(cert, key)
        self._token = user.get("token")

    # ------------------------------------------------------------------ raw requests
    def request(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        content_type: str = "application/json",
        params: dict[str, str] | None = None,
    ) -> Any:
        url = self.server + path + ("?" + urllib.parse.urlencode(params) if params else "")
        data = None
        if body is not None:
            data = (yaml.safe_dump(body) if content_type == APPLY else json.dumps(body)).encode()
        req = urllib.request.Request(url, data=data, method=method)
        req.add_header("Accept", "application/json")
        if data is not None:
            req.add_header("Content-Type", content_type)
        if self._token:
            req.add_header("Authorization", f"Bearer {self._token}")
        for attempt in range(10):
            try:
                with urllib.request.urlopen(req, context=self._ssl, timeout=self.timeout) as resp:
                    raw = resp.read()
                break
            except urllib.error.HTTPError as exc:
                raw = exc.read()
                retry_after = exc.headers.get("Retry-After")
                if exc.code == 429 and retry_after and attempt < 9:
                    time.sleep(min(2.0, float(retry_after)))
                    continue
                try:
                    parsed = json.loads(raw)
                except ValueError:
                    parsed = {"message": raw.decode(errors="replace")}
                raise ApiError(status=exc.code, body=parsed, method=method, path=path) from None
        return json.loads(raw) if raw else None

    def get(self, path: str, **params: str) -> Any:
        return self.request("GET", path, params=params or None)

    def exists(self, path: str) -> bool:
        try:
            self.get(path)
        except ApiError as exc:
            if exc.status == 404:
                return False
            raise
        return True

    def create(self, collection: str, obj: dict[str, Any], *, dry_run: bool = False) -> Any:
        params = {"fieldManager": "noctaya-cluster-test"}
        if dry_run:
            params["dryRun"] = "All"
        return self.request("POST", collection, body=obj, params=params)

    def apply(self, path: str, obj: dict[str, Any], *, manager: str, force: bool = True) -> Any:
        params = {"fieldManager": manager}
        if force:
            params["force"] = "true"
        return self.request("PATCH", path, body=obj, content_type=APPLY, params=params)

    def patch(self, path: str, patch: Any, *, manager: str, content_type: str = MERGE) -> Any:
        return self.request(
            "PATCH", path, body=patch, content_type=content_type, params={"fieldManager": manager}
        )

    def delete(self, path: str, **params: str) -> Any:
        try:
            return self.request("DELETE", path, params=params or None)
        except ApiError as exc:
            if exc.status != 404:
                raise
            return None

    def close(self) -> None:
        self._tmp.cleanup()


def path_of(obj: dict[str, Any], *, plural: str) -> str:
    """The collection path of ``obj``'s kind (``plural`` as the API names it)."""
    group, _, version = obj["apiVersion"].rpartition("/")
    prefix = f"/apis/{group}/{version}" if group else f"/api/{version}"
    namespace = obj.get("metadata", {}).get("namespace")
    return f"{prefix}/namespaces/{namespace}/{plural}" if namespace else f"{prefix}/{plural}"


def wait(what: str, probe: Callable[[], T], done: Callable[[T], bool], *, timeout: float) -> T:
    """Call ``probe`` until ``done`` holds for its value (every 0.25 s); fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if done(value):
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}; last seen: {value!r}")
        time.sleep(0.25)
