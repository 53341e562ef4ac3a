"""Extra volumes of the serving container: vendor host files and the runtime's own volumes.

Two sources, merged into one list the backend renders after Noctaya's own volumes (cache or
``pvc://`` at ``/cache`` / ``/models``, ``/dev/shm``):

- the accelerator adapter's **host files** (:data:`noctaya.runtime.accelerators.ADAPTERS`): for
  ``ascend``, the driver files Ascend serving images expect from the host — ``/usr/local/Ascend/driver``,
  ``/usr/local/bin/npu-smi``, ``/usr/local/dcmi``, ``/etc/ascend_install.info`` — read-only hostPaths
  of the type they are (``Directory`` / ``File``), so a node without the driver fails the Pod with a
  clear hostPath event instead of an engine that cannot find its devices. The Go implementation mounts
  the same files; an Ascend runtime written for it needs nothing more here;
- the InferenceRuntime extension ``spec.container.volumes`` / ``volumeMounts``: anyone can add a
  hostPath, ConfigMap, Secret or emptyDir volume (a license file, a tokenizer config, another vendor's
  driver directory), at most 16 of each, names and paths validated by the API models and the CRD,
  never at Noctaya's own names or paths. A runtime mount at the path of an adapter default replaces
  that default (another driver location); a runtime volume may not take an adapter default's name.

Both, rather than one: the adapter makes the common case work with an unchanged Go runtime; the
extension covers what no adapter can know (site-specific paths, other vendors, config files).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from noctaya.api import inferenceruntime


class MountError(ValueError):
    """Extra volumes that cannot be rendered together (the message names the field)."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class ExtraVolume:
    """A volume of the backend Pod: exactly one of host path, ConfigMap, Secret or emptyDir."""

    name: str
    host_path: str | None = None
    host_path_type: str | None = None
    config_map: str | None = None
    secret: str | None = None
    optional: bool = False
    empty_dir: bool = False
    medium: str | None = None
    size_limit: str | None = None


@dataclasses.dataclass(frozen=True, kw_only=True)
class ExtraMount:
    """Where the serving container sees an :class:`ExtraVolume`."""

    name: str
    mount_path: str
    read_only: bool = False
    sub_path: str | None = None


@dataclasses.dataclass(frozen=True, kw_only=True)
class HostFile:
    """A node file or directory an adapter mounts read-only at the same path."""

    name: str
    path: str
    type: str  # Directory or File

    def volume(self) -> ExtraVolume:
        return ExtraVolume(name=self.name, host_path=self.path, host_path_type=self.type)

    def mount(self) -> ExtraMount:
        return ExtraMount(name=self.name, mount_path=self.path, read_only=True)


def from_runtime(volume: inferenceruntime.Volume) -> ExtraVolume:
    if volume.host_path is not None:
        return ExtraVolume(
            name=volume.name,
            host_path=volume.host_path.path,
            host_path_type=volume.host_path.type.value or None,
        )
    if volume.config_map is not None:
        return ExtraVolume(
            name=volume.name, config_map=volume.config_map.name, optional=volume.config_map.optional
        )
    if volume.secret is not None:
        return ExtraVolume(
            name=volume.name, secret=volume.secret.secret_name, optional=volume.secret.optional
        )
    empty = volume.empty_dir or inferenceruntime.EmptyDirSource()
    return ExtraVolume(
        name=volume.name,
        empty_dir=True,
        medium=empty.medium.value or None,
        size_limit=str(empty.size_limit) if empty.size_limit is not None else None,
    )


def merge(
    *, container: inferenceruntime.Container, host_files: Sequence[HostFile], vendor: str
) -> tuple[tuple[ExtraVolume, ...], tuple[ExtraMount, ...]]:
    """The runtime's volumes and mounts, then the adapter's host files the runtime does not replace."""
    defaults = {f.name: f for f in host_files}
    for i, volume in enumerate(container.volumes):
        if volume.name in defaults:
            raise MountError(
                f"spec.container.volumes[{i}].name: {volume.name!r} is the {vendor} adapter's own volume; "
                f"mount at {defaults[volume.name].path} to replace it"
            )
    replaced = {m.mount_path for m in container.volume_mounts}
    kept = [f for f in host_files if f.path not in replaced]
    volumes = tuple(from_runtime(v) for v in container.volumes) + tuple(f.volume() for f in kept)
    mounts = tuple(
        ExtraMount(name=m.name, mount_path=m.mount_path, read_only=m.read_only, sub_path=m.sub_path)
        for m in container.volume_mounts
    ) + tuple(f.mount() for f in kept)
    return volumes, mounts
