"""Value types written as Kubernetes strings (a duration, a quantity): how pydantic takes them.

A scalar type subclasses :class:`Scalar` and gives its coercion (``_coerce``: the value as it comes
in, to an instance, or a ``pydantic_core.PydanticCustomError`` saying what is wrong) and its JSON
schema (``JSON_SCHEMA``, what the CRDs declare for it). A model field of that type is validated by
the coercion alone (pydantic adds no conversion of its own) and always serialized as ``str()`` of
the value, its canonical Kubernetes form, in Python and JSON mode alike.
"""

from __future__ import annotations

from typing import Any, ClassVar

import pydantic
from pydantic_core import core_schema


class Scalar:
    """The pydantic hooks of a value type (see the module docstring); adds no instance state."""

    __slots__ = ()

    JSON_SCHEMA: ClassVar[dict[str, Any]]

    @classmethod
    def _coerce(cls, value: Any) -> Any:
        raise NotImplementedError

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: pydantic.GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        return core_schema.no_info_plain_validator_function(
            cls._coerce,
            serialization=core_schema.plain_serializer_function_ser_schema(str, when_used="always"),
        )

    @classmethod
    def __get_pydantic_json_schema__(
        cls, schema: core_schema.CoreSchema, handler: pydantic.GetJsonSchemaHandler
    ) -> dict[str, Any]:
        return dict(cls.JSON_SCHEMA)
