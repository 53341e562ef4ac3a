"""Fixtures of the runtime tests: ``make_service(**spec)`` and ``make_runtime(name, **spec)`` build
LLMService and InferenceRuntime objects from the spec fields a test is about (``tests/factories.py``).
"""

from __future__ import annotations

import pathlib
import sys
from collections.abc import Callable

import pytest

from noctaya.api import inferenceruntime, llmservice

ROOT = pathlib.Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # the shared helpers are imported as tests.<module>
    sys.path.insert(0, str(ROOT))

from tests import factories  # noqa: E402

ServiceFactory = Callable[..., llmservice.LLMService]
RuntimeFactory = Callable[..., inferenceruntime.InferenceRuntime]


@pytest.fixture
def make_service() -> ServiceFactory:
    return factories.service


@pytest.fixture
def make_runtime() -> RuntimeFactory:
    return factories.runtime
