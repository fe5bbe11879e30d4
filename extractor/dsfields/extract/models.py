"""Describe pydantic config models (v2 ``model_fields`` and v1 ``__fields__``) as plain records.

DeepSpeed moved from pydantic 1 to 2 in 0.15; both spellings must give the same record shape so
snapshots of old and new releases can be compared field by field.
"""

from __future__ import annotations

import enum
import functools
import types
import typing
from dataclasses import dataclass, field
from typing import Any

import pydantic

try:  # pydantic 2 keeps the v1 API importable; DeepSpeed < 0.15 is written against it
    from pydantic import v1 as _v1

    _MODEL_BASES: tuple[type, ...] = (pydantic.BaseModel, _v1.BaseModel)
except ImportError:
    _MODEL_BASES = (pydantic.BaseModel,)

from dsfields.extract.jsonvalue import stable_repr, to_json

CONSTRAINT_ATTRS = (
    "gt",
    "ge",
    "lt",
    "le",
    "multiple_of",
    "min_length",
    "max_length",
    "min_items",
    "max_items",
    "pattern",
    "regex",
)
DEPRECATION_KEYS = ("deprecated", "new_param", "deprecated_msg", "set_new_param")


@dataclass
class ModelField:
    """One declared field of one model, independent of the pydantic major version."""

    name: str
    key: str
    annotation: Any
    default: Any
    default_factory: Any
    required: bool
    constraints: dict[str, Any]
    extra: dict[str, Any]
    description: str | None


@dataclass
class ModelInfo:
    cls: type
    strict: bool
    extra_mode: str
    fields: list[ModelField] = field(default_factory=list)


def is_model_class(obj: Any) -> bool:
    return isinstance(obj, type) and issubclass(obj, _MODEL_BASES)


def _undefined(value: Any) -> bool:
    return type(value).__name__ in ("PydanticUndefinedType", "UndefinedType")


@functools.cache
def describe_model(cls: type) -> ModelInfo:
    """Cached: placement and coverage ask about the same classes many times (treat as read-only)."""
    if isinstance(getattr(cls, "model_fields", None), dict) and hasattr(cls, "model_config"):
        return _describe_v2(cls)
    return _describe_v1(cls)


def _describe_v2(cls: type) -> ModelInfo:
    extra_mode = str(cls.model_config.get("extra") or "ignore")  # type: ignore[attr-defined]
    info = ModelInfo(cls, extra_mode == "forbid", extra_mode)
    for name, f in cls.model_fields.items():  # type: ignore[attr-defined]
        constraints: dict[str, Any] = {}
        for meta in f.metadata:
            for attr in CONSTRAINT_ATTRS:
                value = getattr(meta, attr, None)
                if value is not None:
                    constraints[attr] = to_json(value)[0]
        extra = f.json_schema_extra if isinstance(f.json_schema_extra, dict) else {}
        info.fields.append(
            ModelField(
                name=name,
                key=f.alias or name,
                annotation=f.annotation,
                default=None if _undefined(f.default) else f.default,
                default_factory=f.default_factory,
                required=f.is_required(),
                constraints=constraints,
                extra=dict(extra),
                description=f.description,
            )
        )
    return info


def _describe_v1(cls: type) -> ModelInfo:
    config = cls.__config__  # type: ignore[attr-defined]
    raw = getattr(config, "extra", "ignore")
    extra_mode = str(getattr(raw, "value", raw))
    info = ModelInfo(cls, extra_mode == "forbid", extra_mode)
    for name, f in cls.__fields__.items():  # type: ignore[attr-defined]
        fi = f.field_info
        constraints = {a: to_json(getattr(fi, a))[0] for a in CONSTRAINT_ATTRS if getattr(fi, a, None) is not None}
        info.fields.append(
            ModelField(
                name=name,
                key=f.alias or name,
                annotation=_unconstrained(getattr(f, "annotation", None) or f.outer_type_),
                default=None if _undefined(f.default) else f.default,
                default_factory=f.default_factory,
                required=bool(f.required),
                constraints=constraints,
                extra=dict(fi.extra or {}),
                description=fi.description,
            )
        )
    return info


def _unconstrained(annotation: Any) -> Any:
    """pydantic 1 turns ``int = Field(ge=0)`` into a generated ``ConstrainedIntValue`` class: report ``int``.

    The constraints themselves are kept separately; the generated class name would otherwise show
    up as a type change between pydantic-1 and pydantic-2 releases.
    """
    if isinstance(annotation, type) and annotation.__name__.startswith("Constrained"):
        for base in annotation.__mro__[1:]:
            if base.__module__ == "builtins" and base is not object:
                return base
    return annotation


def _args(annotation: Any) -> tuple[Any, ...]:
    return typing.get_args(annotation)


def _is_union(origin: Any) -> bool:
    return origin is typing.Union or origin is types.UnionType


def type_repr(annotation: Any) -> str:
    """A readable spelling of an annotation: ``Optional[int]``, ``list[str]``, ``ZeroStageEnum``."""
    if annotation is None or annotation is type(None):
        return "None"
    origin = typing.get_origin(annotation)
    if origin is not None:
        args = _args(annotation)
        if _is_union(origin):
            rest = [a for a in args if a is not type(None)]
            inner = " | ".join(type_repr(a) for a in rest)
            return f"Optional[{inner}]" if len(rest) < len(args) else inner
        if origin is typing.Literal:
            return "Literal[" + ", ".join(repr(a) for a in args) + "]"
        if str(origin) == "typing.Annotated" or origin is getattr(typing, "Annotated", None):
            return type_repr(args[0])
        name = getattr(origin, "__name__", str(origin))
        return f"{name}[{', '.join(type_repr(a) for a in args)}]" if args else name
    if isinstance(annotation, type):
        return annotation.__name__
    if isinstance(annotation, typing.ForwardRef):
        return annotation.__forward_arg__
    return stable_repr(annotation).replace("typing.", "")


_JSON_OF: dict[type, str] = {bool: "boolean", int: "integer", float: "number", str: "string"}


def json_types(annotation: Any) -> list[str]:
    """JSON types a value for this annotation may have (sorted); ``[]`` means anything."""
    found: set[str] = set()
    anything = False

    def walk(a: Any) -> None:
        nonlocal anything
        if a is None or a is type(None):
            found.add("null")
            return
        origin = typing.get_origin(a)
        if origin is not None:
            if _is_union(origin):
                for arg in _args(a):
                    walk(arg)
            elif origin is typing.Literal:
                for lit in _args(a):
                    found.add(_JSON_OF.get(type(lit), "null" if lit is None else "string"))
            elif origin in (list, tuple, set, frozenset, typing.List, typing.Tuple, typing.Set):  # noqa: UP006
                found.add("array")
            elif origin in (dict, typing.Dict):  # noqa: UP006
                found.add("object")
            elif str(origin) == "typing.Annotated" or origin is getattr(typing, "Annotated", None):
                walk(_args(a)[0])
            else:
                anything = True
            return
        if isinstance(a, type):
            if issubclass(a, enum.Enum):
                for member in a:
                    value = member.value
                    found.add(_JSON_OF.get(type(value), "string") if not isinstance(value, bool) else "boolean")
                return
            for py, js in _JSON_OF.items():
                if issubclass(a, py):
                    found.add(js)
                    if py is float:
                        found.add("integer")  # pydantic accepts ints for float fields
                    return
            if a in (list, tuple, set, frozenset):
                found.add("array")
                return
            if a is dict:
                found.add("object")
                return
            if is_model_class(a):
                found.add("object")
                return
        anything = True

    walk(annotation)
    return [] if anything else sorted(found)


def nested_models(annotation: Any) -> list[type]:
    """Model classes a field's value is validated into (``Model``, ``Optional[Model]``, unions)."""
    out: list[type] = []

    def walk(a: Any) -> None:
        if is_model_class(a):
            out.append(a)
            return
        origin = typing.get_origin(a)
        if origin is not None and (_is_union(origin) or str(origin) == "typing.Annotated"):
            for arg in _args(a):
                walk(arg)

    walk(annotation)
    return out


def enums_in(annotation: Any) -> list[type[enum.Enum]]:
    out: list[type[enum.Enum]] = []

    def walk(a: Any) -> None:
        if isinstance(a, type) and issubclass(a, enum.Enum):
            out.append(a)
            return
        for arg in _args(a):
            walk(arg)

    walk(annotation)
    return out


def literal_choices(annotation: Any) -> list[Any]:
    out: list[Any] = []

    def walk(a: Any) -> None:
        origin = typing.get_origin(a)
        if origin is typing.Literal:
            out.extend(to_json(v)[0] for v in _args(a))
        elif origin is not None:
            for arg in _args(a):
                walk(arg)

    walk(annotation)
    return out
