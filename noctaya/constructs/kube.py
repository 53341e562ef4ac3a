"""Typed L1 values from plain Kubernetes JSON: probes, tolerations, env vars, quantities, ports.

The runtime layer speaks Kubernetes' JSON shapes (camelCase dicts, as the API models and CRDs do); the
L1 classes of ``cdk8s_plus_28.k8s`` take typed structs. These functions are the one place where the
former become the latter. Only the fields of the core types that an InferenceRuntime can carry are
translated; an unknown field is an error, not silently dropped.

Quantities and int-or-string values are jsii objects (one Node.js round trip each), so they are
memoised: the same value is created once per process.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

from cdk8s_plus_28 import k8s


class TranslationError(ValueError):
    """A Kubernetes value with a field the translation does not know (the message names it)."""


@functools.lru_cache(maxsize=512)
def quantity(value: str | int) -> k8s.Quantity:
    """A Kubernetes quantity (``"500m"``, ``"32Gi"``, ``2``)."""
    if isinstance(value, int):
        return k8s.Quantity.from_number(value)
    return k8s.Quantity.from_string(value)


@functools.lru_cache(maxsize=512)
def int_or_string(value: str | int) -> k8s.IntOrString:
    """A port or percentage that may be a number or a name."""
    if isinstance(value, int):
        return k8s.IntOrString.from_number(value)
    return k8s.IntOrString.from_string(value)


def quantities(values: Mapping[str, str | int]) -> dict[str, k8s.Quantity]:
    """A resource list (``{"cpu": "4", "memory": "32Gi"}``), keys sorted."""
    return {name: quantity(values[name]) for name in sorted(values)}


def resources(values: Mapping[str, Mapping[str, str | int]]) -> k8s.ResourceRequirements | None:
    """Container resources from ``{"requests": {...}, "limits": {...}}``; ``None`` when both are empty."""
    requests = values.get("requests") or {}
    limits = values.get("limits") or {}
    if not requests and not limits:
        return None
    return k8s.ResourceRequirements(requests=quantities(requests) or None, limits=quantities(limits) or None)


def _check(kind: str, data: Mapping[str, Any], known: set[str]) -> None:
    unknown = sorted(set(data) - known)
    if unknown:
        raise TranslationError(f"{kind}: unsupported field(s) {', '.join(unknown)}")


def _port(value: Any) -> k8s.IntOrString:
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise TranslationError(f"port: expected a number or a name, got {value!r}")
    return int_or_string(value)


def _handler_parts(kind: str, data: Mapping[str, Any]) -> dict[str, Any]:
    parts: dict[str, Any] = {}
    if (http := data.get("httpGet")) is not None:
        _check(f"{kind}.httpGet", http, {"path", "port", "host", "scheme", "httpHeaders"})
        parts["http_get"] = k8s.HttpGetAction(
            port=_port(http["port"]),
            path=http.get("path"),
            host=http.get("host"),
            scheme=http.get("scheme"),
            http_headers=[k8s.HttpHeader(name=h["name"], value=h["value"]) for h in http["httpHeaders"]]
            if http.get("httpHeaders")
            else None,
        )
    if (tcp := data.get("tcpSocket")) is not None:
        _check(f"{kind}.tcpSocket", tcp, {"port", "host"})
        parts["tcp_socket"] = k8s.TcpSocketAction(port=_port(tcp["port"]), host=tcp.get("host"))
    if (exec_ := data.get("exec")) is not None:
        _check(f"{kind}.exec", exec_, {"command"})
        parts["exec"] = k8s.ExecAction(command=list(exec_.get("command") or []))
    return parts


_PROBE_TIMINGS = {
    "initialDelaySeconds": "initial_delay_seconds",
    "periodSeconds": "period_seconds",
    "timeoutSeconds": "timeout_seconds",
    "successThreshold": "success_threshold",
    "failureThreshold": "failure_threshold",
    "terminationGracePeriodSeconds": "termination_grace_period_seconds",
}


def probe(data: Mapping[str, Any], *, kind: str = "probe") -> k8s.Probe:
    """A core/v1 Probe from its JSON shape."""
    _check(kind, data, {"httpGet", "tcpSocket", "exec", "grpc", *_PROBE_TIMINGS})
    parts = _handler_parts(kind, data)
    if (grpc := data.get("grpc")) is not None:
        _check(f"{kind}.grpc", grpc, {"port", "service"})
        parts["grpc"] = k8s.GrpcAction(port=int(grpc["port"]), service=grpc.get("service"))
    timings: dict[str, Any] = {
        attr: int(data[key]) for key, attr in _PROBE_TIMINGS.items() if data.get(key) is not None
    }
    return k8s.Probe(**parts, **timings)


def toleration(data: Mapping[str, Any]) -> k8s.Toleration:
    """A core/v1 Toleration from its JSON shape."""
    _check("toleration", data, {"key", "operator", "value", "effect", "tolerationSeconds"})
    seconds = data.get("tolerationSeconds")
    return k8s.Toleration(
        key=data.get("key"),
        operator=data.get("operator"),
        value=data.get("value"),
        effect=data.get("effect"),
        toleration_seconds=int(seconds) if seconds is not None else None,
    )


def env_var(data: Mapping[str, Any]) -> k8s.EnvVar:
    """A core/v1 EnvVar (literal value or valueFrom a Secret/ConfigMap key, field or resource)."""
    _check("env", data, {"name", "value", "valueFrom"})
    source = data.get("valueFrom")
    if source is None:
        return k8s.EnvVar(name=data["name"], value=data.get("value"))
    _check(
        f"env[{data['name']}].valueFrom",
        source,
        {"secretKeyRef", "configMapKeyRef", "fieldRef", "resourceFieldRef"},
    )
    parts: dict[str, Any] = {}
    if (ref := source.get("secretKeyRef")) is not None:
        parts["secret_key_ref"] = k8s.SecretKeySelector(
            key=ref["key"], name=ref.get("name"), optional=ref.get("optional")
        )
    if (ref := source.get("configMapKeyRef")) is not None:
        parts["config_map_key_ref"] = k8s.ConfigMapKeySelector(
            key=ref["key"], name=ref.get("name"), optional=ref.get("optional")
        )
    if (ref := source.get("fieldRef")) is not None:
        parts["field_ref"] = k8s.ObjectFieldSelector(
            field_path=ref["fieldPath"], api_version=ref.get("apiVersion")
        )
    if (ref := source.get("resourceFieldRef")) is not None:
        divisor = ref.get("divisor")
        parts["resource_field_ref"] = k8s.ResourceFieldSelector(
            resource=ref["resource"],
            container_name=ref.get("containerName"),
            divisor=quantity(divisor) if divisor is not None else None,
        )
    return k8s.EnvVar(name=data["name"], value_from=k8s.EnvVarSource(**parts))


def env_vars(values: Sequence[Mapping[str, Any]]) -> list[k8s.EnvVar]:
    """Env vars in the given order."""
    return [env_var(v) for v in values]


def pull_secrets(names: Sequence[str]) -> list[k8s.LocalObjectReference] | None:
    """imagePullSecrets from Secret names; ``None`` when there are none."""
    return [k8s.LocalObjectReference(name=n) for n in names] or None
