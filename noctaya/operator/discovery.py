"""Is the KEDA ScaledObject API served? A cached discovery read, re-read when stale or invalidated.

The answer is kept ``ttl_present`` seconds when the API is served and ``ttl_absent`` when it is not
(so an install of KEDA is seen soon); the watch of the ScaledObject CRD invalidates it at once.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Final

from noctaya.operator import apiclient

KEDA_GROUP_VERSION: Final = "keda.sh/v1alpha1"
KEDA_CRD: Final = "scaledobjects.keda.sh"


class Discovery:
    """Whether the KEDA ScaledObject API is served; cached, re-read when stale or invalidated."""

    def __init__(
        self,
        *,
        client: apiclient.Client,
        ttl_present: float = 300.0,
        ttl_absent: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._client = client
        self._ttl_present, self._ttl_absent = ttl_present, ttl_absent
        self._clock = clock
        self._known: tuple[bool, float] | None = None

    def invalidate(self) -> None:
        self._known = None

    async def has_scaled_objects(self) -> bool:
        now = self._clock()
        if self._known is not None:
            present, at = self._known
            if now - at < (self._ttl_present if present else self._ttl_absent):
                return present
        served = await self._client.resources_of(KEDA_GROUP_VERSION)
        present = served is not None and "scaledobjects" in served
        self._known = (present, now)
        return present
