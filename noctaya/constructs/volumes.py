"""Volumes in Pods: the model volume, its mount, the bounded wait for a readiness marker, and the
projected Secret files of Noctaya's own containers.

A :class:`noctaya.runtime.delivery.ModelVolume` names exactly one source (a claim, a node directory or
an emptyDir). Servers, the marker wait and the staging Job all mount it through these functions, so
the three always agree on name, path and read-only flag.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from typing import Final

from cdk8s_plus_28 import k8s

from noctaya.constructs import kube
from noctaya.runtime import delivery, mounts

#: how often the marker wait looks for the marker
MARKER_POLL_SECONDS: Final = 2
#: the user and group Noctaya's own containers run as
NONROOT_UID: Final = 65532


def volume(model: delivery.ModelVolume) -> k8s.Volume:
    """The Pod volume behind ``model``."""
    if model.claim_name:
        return k8s.Volume(
            name=model.name,
            persistent_volume_claim=k8s.PersistentVolumeClaimVolumeSource(
                claim_name=model.claim_name, read_only=model.read_only or None
            ),
        )
    if model.host_path:
        return k8s.Volume(
            name=model.name,
            host_path=k8s.HostPathVolumeSource(path=model.host_path, type="DirectoryOrCreate"),
        )
    return k8s.Volume(name=model.name, empty_dir=k8s.EmptyDirVolumeSource())


def extra_volume(extra: mounts.ExtraVolume) -> k8s.Volume:
    """An InferenceRuntime's (or an adapter's) volume: hostPath, ConfigMap, Secret (0440) or emptyDir."""
    if extra.host_path:
        return k8s.Volume(
            name=extra.name,
            host_path=k8s.HostPathVolumeSource(path=extra.host_path, type=extra.host_path_type),
        )
    if extra.config_map:
        return k8s.Volume(
            name=extra.name,
            config_map=k8s.ConfigMapVolumeSource(name=extra.config_map, optional=extra.optional or None),
        )
    if extra.secret:
        return k8s.Volume(
            name=extra.name,
            secret=k8s.SecretVolumeSource(
                secret_name=extra.secret, optional=extra.optional or None, default_mode=0o440
            ),
        )
    return k8s.Volume(
        name=extra.name,
        empty_dir=k8s.EmptyDirVolumeSource(
            medium=extra.medium, size_limit=kube.quantity(extra.size_limit) if extra.size_limit else None
        ),
    )


def extra_mount(extra: mounts.ExtraMount) -> k8s.VolumeMount:
    return k8s.VolumeMount(
        name=extra.name,
        mount_path=extra.mount_path,
        read_only=extra.read_only or None,
        sub_path=extra.sub_path,
    )


def secret_volume(*, name: str, secret: str, items: Mapping[str, str] | None = None) -> k8s.Volume:
    """A projected Secret volume, read-only files (0440), optional key selection (key -> path)."""
    projection = k8s.SecretProjection(
        name=secret, items=[k8s.KeyToPath(key=k, path=p) for k, p in items.items()] if items else None
    )
    return k8s.Volume(
        name=name,
        projected=k8s.ProjectedVolumeSource(
            default_mode=0o440, sources=[k8s.VolumeProjection(secret=projection)]
        ),
    )


def mount(model: delivery.ModelVolume, *, read_only: bool | None = None) -> k8s.VolumeMount:
    """The container mount of ``model`` (its own read-only flag unless overridden)."""
    ro = model.read_only if read_only is None else read_only
    return k8s.VolumeMount(
        name=model.name, mount_path=model.mount_path, read_only=ro or None, sub_path=model.sub_path
    )


def marker_wait_script(*, marker: str, timeout_seconds: int) -> str:
    """A POSIX sh loop that waits for ``marker`` at most ``timeout_seconds``, then fails."""
    attempts = max(1, -(-timeout_seconds // MARKER_POLL_SECONDS))
    quoted = shlex.quote(marker)
    return (
        f"i=0; until [ -f {quoted} ]; do "
        f'i=$((i+1)); if [ "$i" -gt {attempts} ]; then '
        f'echo "model not staged after {timeout_seconds}s: {marker} missing" >&2; exit 1; fi; '
        f'sleep {MARKER_POLL_SECONDS}; done; echo "model staged: {marker}"'
    )


def marker_wait_container(
    *, image: str, marker: str, timeout_seconds: int, model: delivery.ModelVolume
) -> k8s.Container:
    """An init container that blocks the server until the staging Job wrote ``marker``."""
    return k8s.Container(
        name="wait-for-model",
        image=image,
        command=["/bin/sh", "-c", marker_wait_script(marker=marker, timeout_seconds=timeout_seconds)],
        volume_mounts=[mount(model, read_only=True)],
        resources=k8s.ResourceRequirements(
            requests=kube.quantities({"cpu": "10m", "memory": "16Mi"}),
            limits=kube.quantities({"memory": "16Mi"}),
        ),
        security_context=restricted_security_context(),
    )


def engine_security_context() -> k8s.SecurityContext:
    """The serving container's security context, the same for every engine family (vLLM, SGLang, TGI,
    llama.cpp): no privilege escalation, no capability, the runtime's default seccomp profile. The user
    stays the image's: the engines' official images run as root and write their caches under its home,
    so ``runAsNonRoot`` is not set and the root filesystem stays writable. Accelerators reach the
    container through their device plugins, which need none of this. The backend Pods meet the
    ``baseline`` Pod Security Standard, and ``restricted`` but for ``runAsNonRoot``."""
    return k8s.SecurityContext(
        allow_privilege_escalation=False,
        capabilities=k8s.Capabilities(drop=["ALL"]),
        seccomp_profile=k8s.SeccompProfile(type="RuntimeDefault"),
    )


def restricted_security_context(*, read_only_root: bool = True) -> k8s.SecurityContext:
    """A container security context meeting the ``restricted`` Pod Security Standard."""
    return k8s.SecurityContext(
        allow_privilege_escalation=False,
        run_as_non_root=True,
        run_as_user=NONROOT_UID,
        read_only_root_filesystem=read_only_root,
        capabilities=k8s.Capabilities(drop=["ALL"]),
        seccomp_profile=k8s.SeccompProfile(type="RuntimeDefault"),
    )
