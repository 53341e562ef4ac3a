"""Runtime selection: which InferenceRuntime serves an LLMService.

- ``spec.runtime.name``: exactly that runtime; missing -> ``RuntimeNotFound``.
- ``spec.runtime.selector.vendor``: vendors are tried in list order; the first vendor that has any
  runtime wins. Within it the highest ``priority`` wins; a tie at the top is ``RuntimeAmbiguous`` and
  the message names every tied runtime (sorted), so the user knows what to disambiguate.

Selection is pure: it looks only at the objects given, so the operator (from its cache of runtimes)
and offline synth (from the documents on the command line) choose the same runtime.
"""

from __future__ import annotations

from collections.abc import Iterable

from noctaya.api import inferenceruntime, llmservice


class SelectionError(ValueError):
    """No runtime, or no single runtime, fits. ``reason`` is the LLMService condition reason."""

    def __init__(self, message: str, *, reason: llmservice.Reason) -> None:
        super().__init__(message)
        self.reason = reason


def select_runtime(
    *, service: llmservice.LLMService, runtimes: Iterable[inferenceruntime.InferenceRuntime]
) -> inferenceruntime.InferenceRuntime:
    """The runtime ``service`` uses, or ``SelectionError`` with a reason and a specific message."""
    ref = service.spec.runtime
    candidates = list(runtimes)
    if ref.name is not None:
        for runtime in candidates:
            if runtime.name == ref.name:
                return runtime
        raise SelectionError(
            f"spec.runtime.name: InferenceRuntime {ref.name!r} not found",
            reason=llmservice.Reason.RUNTIME_NOT_FOUND,
        )
    if ref.selector is None:  # the model forbids this; keep the error specific anyway
        raise SelectionError(
            "spec.runtime: set name or selector.vendor", reason=llmservice.Reason.INVALID_SPEC
        )
    for vendor in ref.selector.vendor:
        matching = [r for r in candidates if r.spec.vendor == vendor]
        if not matching:
            continue
        top = max(r.spec.priority for r in matching)
        best = sorted(r.name for r in matching if r.spec.priority == top)
        if len(best) > 1:
            raise SelectionError(
                f"spec.runtime.selector.vendor: vendor {vendor.value!r} has {len(best)} InferenceRuntimes "
                f"with the top priority {top}: {', '.join(best)}; give one a higher priority or pin "
                "spec.runtime.name",
                reason=llmservice.Reason.RUNTIME_AMBIGUOUS,
            )
        return next(r for r in matching if r.name == best[0])
    wanted = ", ".join(v.value for v in ref.selector.vendor)
    raise SelectionError(
        f"spec.runtime.selector.vendor: no InferenceRuntime for vendor(s) {wanted}",
        reason=llmservice.Reason.RUNTIME_NOT_FOUND,
    )
