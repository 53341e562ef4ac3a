"""Throwaway certificates: a CA and the pairs it signs, made with the ``openssl`` command.

``make_bundle`` is for ``noctaya dev --scaler-tls``: the local runner can run the ExternalScaler with
mutual TLS exactly as a cluster would (server certificate for ``localhost``/``127.0.0.1``, client
certificate for the local KEDA), valid for one day. ``make_authority`` and ``issue`` are the two steps
it is made of, also used for KEDA's certificates of the local control plane (``noctaya.dev.cluster``).
Keys are P-256, written with mode 0600 into a directory the caller owns.
"""

from __future__ import annotations

import dataclasses
import pathlib
import shutil
import subprocess

OPENSSL_TIMEOUT = 30.0


class CertificateError(Exception):
    """The certificates could not be made (no openssl, or it failed)."""


@dataclasses.dataclass(frozen=True)
class Bundle:
    """PEM file paths: the CA, the server pair and the client pair."""

    ca_cert: pathlib.Path
    ca_key: pathlib.Path
    server_cert: pathlib.Path
    server_key: pathlib.Path
    client_cert: pathlib.Path
    client_key: pathlib.Path


def _openssl(*args: str, cwd: pathlib.Path) -> None:
    binary = shutil.which("openssl")
    if binary is None:
        raise CertificateError("the openssl command is needed to make TLS certificates")
    try:
        subprocess.run([binary, *args], cwd=cwd, check=True, capture_output=True, timeout=OPENSSL_TIMEOUT)
    except subprocess.CalledProcessError as exc:
        raise CertificateError(
            f"openssl {args[0]} failed: {exc.stderr.decode(errors='replace')[-500:]}"
        ) from exc
    except subprocess.TimeoutExpired as exc:
        raise CertificateError(f"openssl {args[0]} timed out") from exc


def _key_args(name: str) -> list[str]:
    return ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", f"{name}.key"]


def issue(
    *,
    directory: pathlib.Path,
    name: str,
    subject: str,
    ca: str,
    extensions: str,
    days: int,
) -> None:
    """Write ``<name>.key`` and ``<name>.crt`` for ``CN=<subject>``, signed by ``<ca>.crt``/``<ca>.key``
    (all in ``directory``), with ``extensions`` (``openssl x509 -extfile`` lines) and valid ``days``."""
    _openssl("req", *_key_args(name), "-out", f"{name}.csr", "-subj", f"/CN={subject}", cwd=directory)
    (directory / f"{name}.ext").write_text(extensions)
    _openssl(
        "x509",
        "-req",
        "-in",
        f"{name}.csr",
        "-CA",
        f"{ca}.crt",
        "-CAkey",
        f"{ca}.key",
        "-CAcreateserial",
        "-out",
        f"{name}.crt",
        "-days",
        str(days),
        "-extfile",
        f"{name}.ext",
        cwd=directory,
    )
    (directory / f"{name}.key").chmod(0o600)


def make_authority(*, directory: pathlib.Path, name: str, days: int) -> None:
    """Write a self-signed CA, ``<name>.crt`` and ``<name>.key`` (``CN=<name>``), into ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    _openssl(
        "req",
        "-x509",
        *_key_args(name),
        "-out",
        f"{name}.crt",
        "-days",
        str(days),
        "-subj",
        f"/CN={name}",
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign,cRLSign",
        cwd=directory,
    )
    (directory / f"{name}.key").chmod(0o600)


def make_bundle(*, directory: pathlib.Path, ca_name: str = "noctaya-dev-ca") -> Bundle:
    """Write a fresh CA and server/client pairs signed by it into ``directory``."""
    make_authority(directory=directory, name=ca_name, days=1)
    issue(
        directory=directory,
        name="server",
        subject="server",
        ca=ca_name,
        extensions="subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n",
        days=1,
    )
    issue(
        directory=directory,
        name="client",
        subject="client",
        ca=ca_name,
        extensions="extendedKeyUsage=clientAuth\n",
        days=1,
    )
    return Bundle(
        ca_cert=directory / f"{ca_name}.crt",
        ca_key=directory / f"{ca_name}.key",
        server_cert=directory / "server.crt",
        server_key=directory / "server.key",
        client_cert=directory / "client.crt",
        client_key=directory / "client.key",
    )
