"""Throwaway certificates for ``noctaya dev --scaler-tls``: a CA, a server and a client pair.

The local runner can run the ExternalScaler with mutual TLS exactly as a cluster would (server
certificate for ``localhost``/``127.0.0.1``, client certificate for the local KEDA), so the TLS path
is exercised on one machine. Keys are P-256, made with the ``openssl`` command, valid for one day,
written with mode 0600 into a directory the caller owns.
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


def _leaf(directory: pathlib.Path, *, name: str, ca: str, extensions: str) -> None:
    _openssl("req", *_key_args(name), "-out", f"{name}.csr", "-subj", f"/CN={name}", cwd=directory)
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
        "1",
        "-extfile",
        f"{name}.ext",
        cwd=directory,
    )


def make_bundle(*, directory: pathlib.Path, ca_name: str = "noctaya-dev-ca") -> Bundle:
    """Write a fresh CA and server/client pairs signed by it into ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    _openssl(
        "req",
        "-x509",
        *_key_args(ca_name),
        "-out",
        f"{ca_name}.crt",
        "-days",
        "1",
        "-subj",
        f"/CN={ca_name}",
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign,cRLSign",
        cwd=directory,
    )
    _leaf(
        directory,
        name="server",
        ca=ca_name,
        extensions="subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n",
    )
    _leaf(directory, name="client", ca=ca_name, extensions="extendedKeyUsage=clientAuth\n")
    for path in directory.glob("*.key"):
        path.chmod(0o600)
    return Bundle(
        ca_cert=directory / f"{ca_name}.crt",
        ca_key=directory / f"{ca_name}.key",
        server_cert=directory / "server.crt",
        server_key=directory / "server.key",
        client_cert=directory / "client.crt",
        client_key=directory / "client.key",
    )
