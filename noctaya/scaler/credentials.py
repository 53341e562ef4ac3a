"""Server TLS and mutual TLS for the ExternalScaler, from mounted PEM files that may rotate.

Certificates come from Secret volumes (cert-manager or any issuer); Kubernetes swaps a Secret
volume's files atomically when the Secret changes. gRPC asks ``fetch()`` before every new TLS
handshake; it looks at the files' identity (``noctaya.contract.files``) and rereads them only when that
changed, so a rotated certificate serves the next connection without a restart. A rotation caught
half-written or unreadable keeps the previous certificate and is logged; it never takes the scaler
down. A CA file makes client certificates mandatory (mutual TLS), as KEDA's TriggerAuthentication
``caCert``/``tlsClientCert``/``tlsClientKey`` expects.
"""

from __future__ import annotations

import logging
import pathlib
import threading

import grpc

from noctaya.contract import files

logger = logging.getLogger(__name__)

MAX_PEM_BYTES = 1 << 20  # a certificate chain or key larger than this is not a PEM we accept

_Identity = tuple[files.Identity, ...]


class CredentialsError(Exception):
    """The configured certificate files cannot be used."""


class CertificateFiles:
    """A server certificate chain, its key and an optional client CA, reread when they change."""

    def __init__(self, *, cert_file: str, key_file: str, ca_file: str | None) -> None:
        self.cert_file = pathlib.Path(cert_file)
        self.key_file = pathlib.Path(key_file)
        self.ca_file = pathlib.Path(ca_file) if ca_file else None
        self._lock = threading.Lock()  # gRPC calls fetch() from its own threads
        self._identity: _Identity = ()
        self.reloads = 0

    @property
    def mutual(self) -> bool:
        return self.ca_file is not None

    def _paths(self) -> list[pathlib.Path]:
        return [self.cert_file, self.key_file, *([self.ca_file] if self.ca_file else [])]

    def _current_identity(self) -> _Identity:
        """What each file resolves to now (through the ..data symlink of a Secret volume)."""
        identity = []
        for path in self._paths():
            try:
                identity.append(files.identity(path))
            except files.FileProblem as exc:
                raise CredentialsError(f"{str(path)!r}: {exc}") from None
        return tuple(identity)

    def _read(self, path: pathlib.Path, *, what: str) -> bytes:
        # a regular file only, opened non-blocking: a FIFO in its place cannot hang a handshake
        try:
            data = files.read_regular(path, limit=MAX_PEM_BYTES)
        except files.FileProblem as exc:
            raise CredentialsError(f"{what} {str(path)!r}: {exc}") from None
        if b"-----BEGIN " not in data:
            raise CredentialsError(f"{what} {str(path)!r} holds no PEM block")
        return data

    def _configuration(self) -> grpc.ServerCertificateConfiguration:
        chain = self._read(self.cert_file, what="certFile")
        key = self._read(self.key_file, what="keyFile")
        ca = self._read(self.ca_file, what="caFile") if self.ca_file else None
        return grpc.ssl_server_certificate_configuration([(key, chain)], root_certificates=ca)

    def initial(self) -> grpc.ServerCertificateConfiguration:
        """Load the files now; errors name the file and are fatal at startup."""
        with self._lock:
            identity = self._current_identity()
            config = self._configuration()
            self._identity = identity
            return config

    def fetch(self) -> grpc.ServerCertificateConfiguration | None:
        """A new configuration when the files changed since the last load, else None."""
        with self._lock:
            try:
                identity = self._current_identity()
                if identity == self._identity:
                    return None
                config = self._configuration()
            except CredentialsError as exc:
                logger.warning(
                    "scaler TLS files changed but cannot be loaded, keeping the previous certificate: %s", exc
                )
                return None
            self._identity = identity
            self.reloads += 1
            logger.info("scaler TLS certificate reloaded from %s", self.cert_file)
            return config

    def server_credentials(self) -> grpc.ServerCredentials:
        return grpc.dynamic_ssl_server_credentials(
            self.initial(), self.fetch, require_client_authentication=self.mutual
        )


def channel_credentials(
    *, ca_file: str, cert_file: str | None = None, key_file: str | None = None
) -> grpc.ChannelCredentials:
    """Client credentials as KEDA builds them from ``caCert``, ``tlsClientCert``, ``tlsClientKey``."""
    ca = pathlib.Path(ca_file).read_bytes()
    cert = pathlib.Path(cert_file).read_bytes() if cert_file else None
    key = pathlib.Path(key_file).read_bytes() if key_file else None
    return grpc.ssl_channel_credentials(root_certificates=ca, private_key=key, certificate_chain=cert)
