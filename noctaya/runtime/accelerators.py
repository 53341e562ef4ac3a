"""Thin accelerator adapters: an InferenceRuntime's accelerator block in, Kubernetes pod fields out.

An adapter never implements vendor runtime behaviour (device discovery, visible-device variables,
driver setup): device plugins and the engine image do that. It only translates what the cluster needs
to place and admit the Pod:

- the extended resource (``nvidia.com/gpu``, ``huawei.com/Ascend910``, ``amd.com/gpu``,
  ``habana.ai/gaudi``) with the whole-device count, as request and limit (extended resources cannot be
  overcommitted, so Kubernetes requires both to be equal);
- node selectors and tolerations, copied in order;
- the scheduler: ``schedulerName`` and, for Volcano only, the queue annotation
  ``scheduling.volcano.sh/queue-name``;
- environment variables a vendor needs at the Kubernetes level (none of the built-in ones do);
- host files the vendor's serving images expect from the node (``ascend``: the driver directory,
  ``npu-smi``, ``dcmi`` and ``/etc/ascend_install.info``; see ``noctaya.runtime.mounts``).

``cpu`` requests no extended resource at all: its CPU and memory come from ``spec.resources``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, Final

from noctaya.runtime import mounts

VOLCANO_SCHEDULER: Final = "volcano"
VOLCANO_QUEUE_ANNOTATION: Final = "scheduling.volcano.sh/queue-name"


class AcceleratorError(ValueError):
    """An accelerator block that cannot be translated (the message names the field)."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class AcceleratorRequest:
    """What the InferenceRuntime and the LLMService ask for, already validated by the API models.

    ``tolerations`` are Kubernetes Toleration objects in their JSON shape (camelCase keys).
    """

    vendor: str
    resource_name: str
    count: int = 1
    node_selector: Mapping[str, str] = dataclasses.field(default_factory=dict)
    tolerations: Sequence[Mapping[str, Any]] = ()
    scheduler_name: str | None = None
    queue: str | None = None


@dataclasses.dataclass(frozen=True, kw_only=True)
class Placement:
    """The Kubernetes translation of an accelerator request, merged into backend (and prewarm) Pods.

    ``resources`` go to the serving container's requests and limits; the prewarm Job takes everything
    except ``resources`` (it never holds an accelerator).
    """

    resources: Mapping[str, int]
    node_selector: Mapping[str, str]
    tolerations: tuple[Mapping[str, Any], ...]
    scheduler_name: str | None
    pod_annotations: Mapping[str, str]
    env: Mapping[str, str]
    #: node files mounted read-only into the serving container (not into the prewarm Job)
    host_files: tuple[mounts.HostFile, ...] = ()


@dataclasses.dataclass(frozen=True, kw_only=True)
class AcceleratorAdapter:
    """One vendor: its usual extended resource name and whether it requests one at all."""

    vendor: str
    default_resource_name: str | None
    requests_device: bool = True
    host_files: tuple[mounts.HostFile, ...] = ()

    def translate(self, request: AcceleratorRequest) -> Placement:
        if request.vendor != self.vendor:
            raise AcceleratorError(
                f"spec.vendor: adapter {self.vendor!r} cannot translate {request.vendor!r}"
            )
        if request.count < 1:
            raise AcceleratorError(f"spec.resources.accelerators: must be >= 1, got {request.count}")
        resources: dict[str, int] = {}
        if self.requests_device:
            name = request.resource_name or self.default_resource_name
            if not name:
                raise AcceleratorError("spec.accelerator.resourceName: required for vendor " + self.vendor)
            resources[name] = request.count
        annotations: dict[str, str] = {}
        if request.queue:
            if request.scheduler_name != VOLCANO_SCHEDULER:
                raise AcceleratorError(
                    "spec.accelerator.scheduler.queue: only supported with scheduler name 'volcano', "
                    f"got {request.scheduler_name!r}"
                )
            annotations[VOLCANO_QUEUE_ANNOTATION] = request.queue
        return Placement(
            resources=resources,
            node_selector=dict(sorted(request.node_selector.items())),
            tolerations=tuple(dict(t) for t in request.tolerations),
            scheduler_name=request.scheduler_name or None,
            pod_annotations=annotations,
            env={},
            host_files=self.host_files,
        )


#: what Ascend serving images (vllm-ascend, MindIE) read from the host
ASCEND_HOST_FILES: Final = (
    mounts.HostFile(name="ascend-driver", path="/usr/local/Ascend/driver", type="Directory"),
    mounts.HostFile(name="ascend-npu-smi", path="/usr/local/bin/npu-smi", type="File"),
    mounts.HostFile(name="ascend-dcmi", path="/usr/local/dcmi", type="Directory"),
    mounts.HostFile(name="ascend-install-info", path="/etc/ascend_install.info", type="File"),
)

ADAPTERS: Final[Mapping[str, AcceleratorAdapter]] = {
    adapter.vendor: adapter
    for adapter in (
        AcceleratorAdapter(vendor="nvidia", default_resource_name="nvidia.com/gpu"),
        AcceleratorAdapter(
            vendor="ascend", default_resource_name="huawei.com/Ascend910", host_files=ASCEND_HOST_FILES
        ),
        AcceleratorAdapter(vendor="amd", default_resource_name="amd.com/gpu"),
        AcceleratorAdapter(vendor="intel-gaudi", default_resource_name="habana.ai/gaudi"),
        AcceleratorAdapter(vendor="cpu", default_resource_name=None, requests_device=False),
    )
}


def adapter_for(vendor: str) -> AcceleratorAdapter:
    """The adapter of ``vendor``; an unknown vendor is a clear error naming the known ones."""
    try:
        return ADAPTERS[vendor]
    except KeyError:
        known = ", ".join(ADAPTERS)
        raise AcceleratorError(f"spec.vendor: unknown vendor {vendor!r} (known: {known})") from None


def translate(request: AcceleratorRequest) -> Placement:
    """Translate ``request`` with its vendor's adapter."""
    return adapter_for(request.vendor).translate(request)
