"""The status an LLMService reports: phase, conditions and their reasons, cold-start timings.

Fields and values are listed in docs/api-reference.md (``phase``, ``resolvedRuntime``, ``replicas``,
``endpointURL``, ``conditions``), with the extensions marked (``CacheReady``, ``lastActivation``).
The operator writes it; ``noctaya.api.llmservice`` re-exports every name, so both spellings work.
"""

from __future__ import annotations

import enum
from typing import Annotated, Final

import pydantic

from noctaya.api import durations, meta


class Phase(enum.StrEnum):
    PENDING = "Pending"
    LOADING = "Loading"
    READY = "Ready"
    SCALED_TO_ZERO = "ScaledToZero"
    DEGRADED = "Degraded"


class ConditionType(enum.StrEnum):
    """The condition types an LLMService reports; the operator writes no other."""

    READY = "Ready"
    """At least one backend replica serves. When False, the reason is progress or the active failure."""
    DEGRADED = "Degraded"
    """Kubernetes observes a hard activation failure. False: Healthy, Inactive or Progressing."""
    AUTOSCALING_READY = "AutoscalingReady"
    """The KEDA ScaledObject with the external-push trigger is applied (False: no backend is created)."""
    RECONCILED = "Reconciled"
    """Extension: the spec is valid, a runtime is selected and every owned object matches the spec."""
    CACHE_READY = "CacheReady"
    """Extension: the model cache is staged (prewarm) and its create-once objects match the spec."""


class Reason(enum.StrEnum):
    """Every condition reason (and Event reason) the operator writes.

    Progress reasons explain a False ``Ready``; failure reasons set ``Degraded``; the names are the Go
    implementation's where they mean the same.
    """

    # Ready=True
    AVAILABLE = "Available"
    """Ready=True: at least one backend replica is Ready and serves."""
    # progress (Ready=False)
    ACTIVATING = "Activating"
    """Ready=False: the backend is requested and its Pods are not created yet."""
    STARTING = "Starting"
    """Ready=False: a backend Pod waits to be scheduled or pulls its image."""
    MODEL_LOADING = "ModelLoading"
    """Ready=False: the serving container runs and loads the model."""
    SCHEDULING_DELAYED = "SchedulingDelayed"
    """Ready=False: a backend Pod is unschedulable (no node fits yet)."""
    SCALED_TO_ZERO = "ScaledToZero"
    """Ready=False: the backend is scaled to zero; the next request activates it."""
    # hard activation failures (Degraded=True)
    IMAGE_PULL_FAILED = "ImagePullFailed"
    """Degraded=True: a backend image cannot be pulled."""
    OOM_KILLED = "OOMKilled"
    """Degraded=True: a backend container exceeded its memory limit."""
    CRASH_LOOP_BACK_OFF = "CrashLoopBackOff"
    """Degraded=True: a backend container keeps exiting."""
    CONTAINER_RESTARTING = "ContainerRestarting"
    """Degraded=True: a backend container restarted and has not recovered."""
    PROGRESS_DEADLINE_EXCEEDED = "ProgressDeadlineExceeded"
    """Degraded=True: the backend Deployment exceeded its progress deadline."""
    PREWARM_FAILED = "PrewarmFailed"
    """Degraded=True and CacheReady=False: the prewarm Job failed terminally."""
    # Degraded=False
    HEALTHY = "Healthy"
    """Degraded=False: backend replicas run and no activation failure is observed."""
    INACTIVE = "Inactive"
    """Degraded=False: the backend is scaled to zero (or not created yet); nothing can fail."""
    PROGRESSING = "Progressing"
    """Degraded=False: the backend is activating or rolling out, without a failure so far."""
    # configuration (Ready=False, Reconciled=False)
    RUNTIME_NOT_FOUND = "RuntimeNotFound"
    """No InferenceRuntime matches spec.runtime."""
    RUNTIME_AMBIGUOUS = "RuntimeAmbiguous"
    """Several InferenceRuntimes tie at the highest priority of the first matching vendor."""
    INVALID_SPEC = "InvalidSpec"
    """The spec (or an object rendered from it) is invalid; the message names the field or object."""
    NOT_IMPLEMENTED = "NotImplemented"
    """The spec asks for a reserved feature."""
    # Reconciled (extension)
    APPLIED = "Applied"
    """Extension, Reconciled=True: every owned object matches the spec."""
    OBJECT_SPEC_CHANGED = "ObjectSpecChanged"
    """Extension, Reconciled=False: a create-once object (not a cache one) differs from the spec."""
    OBJECT_NOT_CONTROLLED = "ObjectNotControlled"
    """Extension, Reconciled=False: an object of a name the service needs already exists and is not
    controlled by this LLMService; it is left untouched until it is renamed or deleted."""
    APPLY_REFUSED = "ApplyRefused"
    """Extension, Reconciled=False: the API server refused to write an owned object (quota, admission,
    RBAC, a terminating namespace, a server error); the message names the object and quotes the server,
    and the pass is retried with backoff."""
    RUNTIME_KEPT = "RuntimeKept"
    """Extension, Reconciled=True: the service stays on the runtime it runs although another one now
    ranks higher; the message names both (the change waits for a spec change or the opt-in annotation)."""
    # AutoscalingReady
    SCALED_OBJECT_APPLIED = "ScaledObjectApplied"
    """AutoscalingReady=True: the KEDA ScaledObject with the external-push trigger is applied."""
    AUTOSCALING_UNAVAILABLE = "AutoscalingUnavailable"
    """AutoscalingReady=False: the KEDA ScaledObject CRD is not installed; no backend is created."""
    SCALED_OBJECT_NOT_READY = "ScaledObjectNotReady"
    """Extension, AutoscalingReady=False: KEDA reports the applied ScaledObject is not Ready."""
    # CacheReady (extension)
    CACHE_SPEC_CHANGED = "CacheSpecChanged"
    """Extension, CacheReady=False: the cache claim or prewarm Job differs from the spec."""
    PREWARMING = "Prewarming"
    """Extension, CacheReady=False: the prewarm Job is staging the model."""
    PREWARMED = "Prewarmed"
    """Extension, CacheReady=True: the prewarm Job staged the model."""
    CACHE_CLAIM_UNBOUND = "CacheClaimUnbound"
    """Extension, CacheReady=False: the cache claim is not bound to a volume (no StorageClass or
    provisioner, no matching PersistentVolume); backend Pods wait for it (see the message)."""
    CACHE_NODE_FULL = "CacheNodeFull"
    """Extension, CacheReady=False: backend replicas share a ReadWriteOnce cache claim, so they all
    run on the node that holds it, and that node fits no more of them (see the message)."""


#: Reasons that mark a hard activation failure (``Degraded=True``).
FAILURE_REASONS: Final = frozenset(
    {
        Reason.IMAGE_PULL_FAILED,
        Reason.OOM_KILLED,
        Reason.CRASH_LOOP_BACK_OFF,
        Reason.CONTAINER_RESTARTING,
        Reason.PROGRESS_DEADLINE_EXCEEDED,
        Reason.PREWARM_FAILED,
    }
)
#: Reasons of a False ``Ready`` that only mean "still on its way".
PROGRESS_REASONS: Final = frozenset(
    {
        Reason.ACTIVATING,
        Reason.STARTING,
        Reason.MODEL_LOADING,
        Reason.SCHEDULING_DELAYED,
        Reason.SCALED_TO_ZERO,
        Reason.PREWARMING,
    }
)


class PhaseTiming(meta.ApiModel):
    """How long one cold-start stage took (e.g. ``Scheduled``, ``ImagePulled``, ``ModelLoaded``)."""

    name: Annotated[str, pydantic.Field(min_length=1, max_length=63)]
    """Stage name, e.g. Scheduled, ImagePulled, ModelLoaded."""
    duration: durations.Duration
    """How long the stage took."""


class Activation(meta.ApiModel):
    """Extension: timings of the last scale-from-zero activation."""

    started_at: meta.Timestamp
    """When the activation began."""
    ready_at: meta.Timestamp | None = None
    """When a backend replica became Ready."""
    phases: Annotated[list[PhaseTiming], pydantic.Field(max_length=16)] = pydantic.Field(default_factory=list)
    """Stage timings in order."""


class WarmWindow(meta.ApiModel):
    """Extension: the schedule window the backend is in, or the next one to open."""

    name: Annotated[str, pydantic.Field(min_length=1, max_length=63)]
    """The schedule (``spec.scaling.schedules[].name``)."""
    active: bool = False
    """True while the window is open."""
    start: meta.Timestamp | None = None
    """When the next window opens (unset while one is open)."""
    end: meta.Timestamp | None = None
    """When the open window closes, or the next one will."""
    min_replicas: Annotated[int, pydantic.Field(ge=1)] = 1
    """Backend replicas kept up during the window."""
    window: Annotated[str, pydantic.Field(max_length=128)] = ""
    """The window as an ISO 8601 interval, ``start/end`` (``now/end`` while open): the printer column."""


class LLMServiceStatus(meta.ApiModel):
    observed_generation: Annotated[int | None, pydantic.Field(ge=0)] = None
    """The generation this status was computed for."""
    phase: Phase | None = None
    """Pending, Loading, Ready, ScaledToZero or Degraded."""
    resolved_runtime: str | None = None
    """Name of the InferenceRuntime in use."""
    replicas: Annotated[int, pydantic.Field(ge=0)] = 0
    """Ready backend replicas (gateways excluded)."""
    endpoint_url: str | None = pydantic.Field(default=None, alias="endpointURL")
    """In-cluster base URL of the gateway, ending in /v1."""
    conditions: meta.Conditions = pydantic.Field(default_factory=list)
    """Ready, Degraded, AutoscalingReady and CacheReady."""
    last_activation: Activation | None = None  # extension
    """Extension: timings of the last scale-from-zero activation."""
    next_warm_window: WarmWindow | None = None  # extension
    """Extension: the schedule window open now, or the next to open (computed by the operator)."""
