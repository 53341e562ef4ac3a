"""Value types written as Kubernetes strings (a duration, a quantity): how pydantic takes them.

A scalar type subclasses :class:`Scalar` and says what it takes: ``ACCEPTS`` (the input types its
``parse`` reads; ``bool`` is never one of them, though Python counts it an ``int``), ``parse`` (whose
``ValueError`` says what is wrong), ``ERROR`` (the pydantic error type: ``<ERROR>`` for a value that
does not parse, ``<ERROR>_type`` for an input of another type, whose message is ``TYPE_MESSAGE``) and
``JSON_SCHEMA`` (what the CRDs declare for it). A model field of that type is validated by that alone
(pydantic adds no conversion of its own) and always serialized as ``str()`` of the value, its
canonical Kubernetes form, in Python and JSON mode alike.
"""

from __future__ import annotations

from typing import Any, ClassVar, Self

import pydantic
import pydantic_core
from pydantic_core import core_schema


class Scalar:
    """The pydantic side of a value type (see the module docstring); adds no instance state."""

    __slots__ = ()

    ACCEPTS: ClassVar[tuple[type, ...]]
    ERROR: ClassVar[str]
    TYPE_MESSAGE: ClassVar[str]
    JSON_SCHEMA: ClassVar[dict[str, Any]]

    @classmethod
    def parse(cls, text: Any) -> Self:
        raise NotImplementedError

    @classmethod
    def coerce(cls, value: Any) -> Self:
        """``value`` as an instance: itself, or parsed; a pydantic error saying what is wrong."""
        if isinstance(value, cls):
            return value
        if isinstance(value, cls.ACCEPTS) and not isinstance(value, bool):
            try:
                return cls.parse(value)
            except ValueError as exc:
                raise pydantic_core.PydanticCustomError(cls.ERROR, str(exc)) from None
        raise pydantic_core.PydanticCustomError(
            f"{cls.ERROR}_type", cls.TYPE_MESSAGE + ", got {type}", {"type": type(value).__name__}
        )

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: pydantic.GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        return core_schema.no_info_plain_validator_function(
            cls.coerce,
            serialization=core_schema.plain_serializer_function_ser_schema(str, when_used="always"),
        )

    @classmethod
    def __get_pydantic_json_schema__(
        cls, schema: core_schema.CoreSchema, handler: pydantic.GetJsonSchemaHandler
    ) -> dict[str, Any]:
        return dict(cls.JSON_SCHEMA)
