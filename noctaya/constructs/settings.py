"""Render settings: what the operator (or ``noctaya synth``) decides, rather than the LLMService.

The first four fields are the contract the operator codes against; the rest are pinned images and
bounds with documented defaults, overridable for air-gapped registries. The defaults are the
constructs' own (a prewarm Job rendered with them hashes as one rendered with its props' defaults).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, Final

from noctaya import __version__
from noctaya.api import gatewaymemory
from noctaya.constructs import backend, prewarm
from noctaya.contract import gateway as gateway_contract
from noctaya.runtime import delivery

#: the image that runs ``noctaya gateway`` and ``noctaya scaler``
DEFAULT_IMAGE: Final = f"ghcr.io/noctaya/noctaya:{__version__}"


@dataclasses.dataclass(frozen=True, kw_only=True)
class RenderSettings:
    """Operator-wide inputs of a render.

    - ``gateway_image``: image of gateways and aggregate scalers (``noctaya gateway|scaler``).
    - ``default_gateway_replicas``: gateways per LLMService when ``spec.endpoint.replicas`` is unset.
    - ``owner_references``: camelCase owner references put on every object (the LLMService's, from
      the operator; none offline).
    - ``scaler_token``: the aggregate scaler's shared token. The operator generates it once per
      LLMService and passes the same value on every render (so it never rotates); ``None`` leaves the
      token Secret out of the output — it must then exist in the cluster.
    - ``wait_image``: busybox-like image of the init container that waits for the cache marker.
    - ``hub_image`` / ``oras_image`` / ``stage_image``: prewarm Job images (see ``constructs.prewarm``);
      ``hub_image`` ``None`` runs the hub download in ``gateway_image`` (it ships the hub clients).
    - ``host_path_root``: node directory of HostPath caches.
    - ``marker_wait_seconds``: how long a server waits for a staging Job's marker before it fails.
    - ``prewarm_deadline_seconds`` / ``prewarm_backoff_limit``: bounds of the staging Job.
    - ``gateway_resources``: gateway container resources when ``spec.endpoint.resources`` is unset.
    - ``gateway_settings``: the gateways' tunables where the LLMService says nothing (the in-flight
      bound, probe periods, connect and body timeouts); the LLMService's own fields (``maxQueue``,
      cold-start mode and heartbeat, activation and drain timeouts, the runtime's readiness path) are
      laid over them. The aggregate scaler's per-member bound is ``maxQueue + maxInFlight``. The four
      memory bounds (``maxQueuedBodyBytes``, ``maxConnections``, ``websocketMaxOpen``,
      ``websocketMaxMessageBytes``) are lowered to fit a smaller gateway memory limit unless the
      LLMService sets them (``noctaya.api.gatewaymemory``).
    """

    gateway_image: str = DEFAULT_IMAGE
    default_gateway_replicas: int = 1
    owner_references: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    scaler_token: str | None = None
    wait_image: str = backend.WAIT_IMAGE
    hub_image: str | None = None
    oras_image: str = prewarm.ORAS_IMAGE
    stage_image: str = prewarm.STAGE_IMAGE
    host_path_root: str = delivery.HOST_PATH_ROOT
    marker_wait_seconds: int = backend.MARKER_WAIT_SECONDS
    prewarm_deadline_seconds: int = prewarm.DEADLINE_SECONDS
    prewarm_backoff_limit: int = prewarm.BACKOFF_LIMIT
    gateway_resources: Mapping[str, Mapping[str, str]] = dataclasses.field(
        default_factory=lambda: {
            "requests": {"cpu": "100m", "memory": "128Mi"},
            "limits": {"memory": gatewaymemory.DEFAULT_LIMIT},
        }
    )
    gateway_settings: gateway_contract.GatewaySettings = dataclasses.field(
        default_factory=gateway_contract.GatewaySettings
    )

    def __post_init__(self) -> None:
        if self.default_gateway_replicas < 1:
            raise ValueError(f"default_gateway_replicas: must be >= 1, got {self.default_gateway_replicas}")
        if self.scaler_token is not None and not self.scaler_token.strip():
            raise ValueError("scaler_token: must not be empty")
        if (
            self.marker_wait_seconds < 1
            or self.prewarm_deadline_seconds < 1
            or self.prewarm_backoff_limit < 0
        ):
            raise ValueError("marker_wait_seconds, prewarm_deadline_seconds: must be >= 1; backoff >= 0")
