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
    READY = "Ready"
    DEGRADED = "Degraded"
    AUTOSCALING_READY = "AutoscalingReady"
    CACHE_READY = "CacheReady"  # extension


class Reason(enum.StrEnum):
    """Condition reasons. Progress reasons explain a False ``Ready``; failure reasons set ``Degraded``."""

    # Ready=True
    SERVING = "Serving"
    # progress (Ready=False)
    ACTIVATING = "Activating"
    STARTING = "Starting"
    MODEL_LOADING = "ModelLoading"
    SCHEDULING_DELAYED = "SchedulingDelayed"
    SCALED_TO_ZERO = "ScaledToZero"
    # hard activation failures (Degraded=True)
    IMAGE_PULL_FAILED = "ImagePullFailed"
    OOM_KILLED = "OOMKilled"
    CRASH_LOOP_BACK_OFF = "CrashLoopBackOff"
    CONTAINER_RESTARTING = "ContainerRestarting"
    PROGRESS_DEADLINE_EXCEEDED = "ProgressDeadlineExceeded"
    PREWARM_FAILED = "PrewarmFailed"
    HEALTHY = "Healthy"
    # configuration (Ready=False, AutoscalingReady, CacheReady)
    RUNTIME_NOT_FOUND = "RuntimeNotFound"
    RUNTIME_AMBIGUOUS = "RuntimeAmbiguous"
    INVALID_SPEC = "InvalidSpec"
    NOT_IMPLEMENTED = "NotImplemented"
    SCALED_OBJECT_CRD_MISSING = "ScaledObjectCRDMissing"
    CONFIGURED = "Configured"
    CACHE_SPEC_CHANGED = "CacheSpecChanged"
    PREWARMING = "Prewarming"
    PREWARMED = "Prewarmed"


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
