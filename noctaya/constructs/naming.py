"""Names, labels, owner references and spec hashes shared by every owned object.

Every object of an LLMService ``<name>`` has a deterministic name (no hash suffix; charts are built
with ``disable_resource_name_hashes=True``): the public Service ``<name>`` is the gateway (what clients
call, as in the Go implementation), ``<name>-backend`` the backend Deployment and Service,
``<name>-gateway`` the gateway Deployment and config, ``<name>-scaler`` the ExternalScaler Service,
``<name>`` the ScaledObject, ``<name>-cache`` / ``<name>-prewarm`` the cache objects. Each object has
the discovery label ``serving.noctaya.io/llmservice``, the
``app.kubernetes.io`` labels and the owner references the caller supplies (the operator passes the
LLMService; offline synth passes none). Selector labels are a stable subset, because a Deployment's
selector is immutable.

Create-once objects (cache PVC, prewarm Job, scaler token Secret) carry a hash of their desired spec in
``serving.noctaya.io/spec-hash``; the operator compares it instead of replacing the object. The hash is
computed in Python from the inputs that shape the object (no extra round trip to the jsii kernel).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, TypeVar

import cdk8s
from cdk8s_plus_28 import k8s

from noctaya.api import meta

#: the discovery label is part of the API (``noctaya.api.meta``); re-exported for the constructs
LLMSERVICE_LABEL: Final = meta.LLMSERVICE_LABEL
SPEC_HASH_ANNOTATION: Final = "serving.noctaya.io/spec-hash"
#: on a Deployment rendered without ``replicas`` (KEDA owns them): the replicas it is created with (the
#: operator's first apply sets them, then hands the field to KEDA; see ``noctaya.operator.applying``)
INITIAL_REPLICAS_ANNOTATION: Final = "serving.noctaya.io/initial-replicas"
COMPONENT_LABEL: Final = "app.kubernetes.io/component"
PART_OF: Final = "noctaya"

_Ref = TypeVar("_Ref")


@dataclasses.dataclass(frozen=True, kw_only=True)
class OwnerReference:
    """An owner reference in Kubernetes' shape; the operator supplies the LLMService's."""

    api_version: str
    kind: str
    name: str
    uid: str
    controller: bool = True
    block_owner_deletion: bool = True

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> OwnerReference:
        """Read the camelCase dict form (``apiVersion``, ``kind``, ``name``, ``uid`` ...)."""
        try:
            return cls(
                api_version=str(data["apiVersion"]),
                kind=str(data["kind"]),
                name=str(data["name"]),
                uid=str(data["uid"]),
                controller=bool(data.get("controller", True)),
                block_owner_deletion=bool(data.get("blockOwnerDeletion", True)),
            )
        except KeyError as exc:
            raise ValueError(f"ownerReferences: missing field {exc.args[0]!r}") from None


@dataclasses.dataclass(frozen=True, kw_only=True)
class ServiceIdentity:
    """Which LLMService an object belongs to, and who owns it."""

    name: str
    namespace: str | None = None
    owner_references: tuple[OwnerReference, ...] = ()

    # ---- deterministic names (the Go implementation's: clients address the service by its own name)
    @property
    def endpoint(self) -> str:
        """The public Service: the gateway, the address clients use (``status.endpointURL``)."""
        return self.name

    @property
    def backend(self) -> str:
        """The backend Deployment and its Service (only the gateway and monitoring reach it)."""
        return f"{self.name}-backend"

    @property
    def gateway(self) -> str:
        """The gateway Deployment, its config ConfigMap and PodDisruptionBudget."""
        return f"{self.name}-gateway"

    @property
    def scaled_object(self) -> str:
        """The KEDA ScaledObject, named after the service it scales."""
        return self.name

    @property
    def scaler(self) -> str:
        return f"{self.name}-scaler"

    @property
    def scaler_token(self) -> str:
        return f"{self.name}-scaler-token"

    @property
    def cache(self) -> str:
        return f"{self.name}-cache"

    @property
    def prewarm(self) -> str:
        return f"{self.name}-prewarm"

    def service_host(self, service: str) -> str:
        """The in-cluster DNS name of Service ``service`` (``<svc>.<ns>.svc``)."""
        return f"{service}.{self.namespace or 'default'}.svc"

    def selector_labels(self, component: str) -> dict[str, str]:
        """The immutable selector of one component's Pods."""
        return {LLMSERVICE_LABEL: self.name, COMPONENT_LABEL: component}

    def labels(self, component: str) -> dict[str, str]:
        """Every label an object of ``component`` carries."""
        return {
            "app.kubernetes.io/name": f"llmservice-{component}",
            "app.kubernetes.io/instance": self.name,
            COMPONENT_LABEL: component,
            "app.kubernetes.io/part-of": PART_OF,
            "app.kubernetes.io/managed-by": PART_OF,
            LLMSERVICE_LABEL: self.name,
        }

    def metadata(
        self, *, name: str, component: str, annotations: Mapping[str, str] | None = None
    ) -> k8s.ObjectMeta:
        """Metadata of a Kubernetes L1 object: name, namespace, labels, annotations, owners."""
        return k8s.ObjectMeta(
            name=name,
            namespace=self.namespace,
            labels=self.labels(component),
            annotations=dict(annotations) if annotations else None,
            owner_references=self._owners(k8s.OwnerReference),
        )

    def _owners(self, cls: Callable[..., _Ref]) -> list[_Ref] | None:
        """The owner references as ``cls`` (the L1 struct or cdk8s' own: they take the same fields)."""
        return [cls(**dataclasses.asdict(ref)) for ref in self.owner_references] or None

    def api_metadata(
        self, *, name: str, component: str, annotations: Mapping[str, str] | None = None
    ) -> cdk8s.ApiObjectMetadata:
        """The same metadata for objects of imported CRDs (KEDA, Prometheus Operator)."""
        return cdk8s.ApiObjectMetadata(
            name=name,
            namespace=self.namespace,
            labels=self.labels(component),
            annotations=dict(annotations) if annotations else None,
            owner_references=self._owners(cdk8s.OwnerReference),
        )


def owner_references(refs: Sequence[Mapping[str, Any]]) -> tuple[OwnerReference, ...]:
    """Owner references from their camelCase dict form (as ``RenderSettings`` carries them)."""
    return tuple(OwnerReference.from_dict(ref) for ref in refs)


def spec_hash(spec: Any) -> str:
    """A stable hash of a JSON-compatible value: sha256 over canonical JSON, first 32 hex digits."""
    canonical = json.dumps(spec, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(canonical.encode()).hexdigest()[:32]


def props_hash(props: Any, *, exclude: tuple[str, ...] = ("identity",)) -> str:
    """The spec hash of a frozen ``<Family>Props``: every field except ``exclude`` (the identity carries
    owner references and labels, which are not part of the immutable workload).

    Fields still at their default are left out, here and in nested dataclasses, so a release that adds
    a defaulted field does not change the hash of objects that already exist.
    """
    fields = {k: v for k, v in _fields(props).items() if k not in exclude}
    return spec_hash(_plain(fields))


def _fields(value: Any) -> dict[str, Any]:
    out = {}
    for field in dataclasses.fields(value):
        current = getattr(value, field.name)
        if field.default is not dataclasses.MISSING and current == field.default:
            continue
        if field.default_factory is not dataclasses.MISSING and current == field.default_factory():
            continue
        out[field.name] = current
    return out


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {name: _plain(v) for name, v in _fields(value).items()}
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)
