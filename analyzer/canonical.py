"""Canonical JSON for analyzer results: sorted keys, no whitespace, UTF-8, round-trips.

The same analysis always gives the same bytes, so permalinks and regression diffs are
stable; `analysis_from_json` rebuilds the frozen dataclass tree from those bytes.
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from enum import Enum
from functools import cache
from typing import Any

from analyzer.errors import AnalyzerError
from analyzer.model import Analysis


class CanonicalJsonError(AnalyzerError):
    """JSON text does not describe the expected analyzer value."""

    def __init__(self, message: str, *, path: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path


def to_jsonable(value: Any) -> Any:
    """Turn a dataclass tree into plain JSON values (dicts, lists, strings, numbers)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, tuple | list):
        return [to_jsonable(item) for item in value]
    return value


def dumps_canonical(value: Any) -> str:
    """Serialize a dataclass tree to canonical JSON text."""
    return json.dumps(
        to_jsonable(value), sort_keys=True, ensure_ascii=False, separators=(",", ":")
    )


def analysis_to_json(analysis: Analysis) -> str:
    """Serialize an analysis to canonical JSON (it carries its analyzer version)."""
    return dumps_canonical(analysis)


def analysis_from_json(text: str) -> Analysis:
    """Rebuild an Analysis from its canonical JSON."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CanonicalJsonError(f"invalid JSON ({exc.msg} at offset {exc.pos})", path="$") from exc
    result = from_jsonable(Analysis, data, "$")
    assert isinstance(result, Analysis)
    return result


@cache
def _field_types(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def from_jsonable(tp: Any, data: Any, path: str) -> Any:
    """Convert plain JSON data into a value of type tp (dataclass, enum, tuple, scalar)."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        return _from_union(tp, data, path)
    if origin is tuple:
        return _from_tuple(tp, data, path)
    if dataclasses.is_dataclass(tp):
        return _from_dataclass(tp, data, path)
    if isinstance(tp, type) and issubclass(tp, Enum):
        return _from_enum(tp, data, path)
    return _from_scalar(tp, data, path)


def _from_union(tp: Any, data: Any, path: str) -> Any:
    options = typing.get_args(tp)
    if data is None and type(None) in options:
        return None
    concrete = [option for option in options if option is not type(None)]
    return from_jsonable(concrete[0], data, path)


def _from_tuple(tp: Any, data: Any, path: str) -> tuple[Any, ...]:
    if not isinstance(data, list):
        raise CanonicalJsonError(f"expected a list, found {type(data).__name__}", path=path)
    item_type = typing.get_args(tp)[0]
    return tuple(from_jsonable(item_type, item, f"{path}[{i}]") for i, item in enumerate(data))


def _from_dataclass(tp: Any, data: Any, path: str) -> Any:
    if not isinstance(data, dict):
        raise CanonicalJsonError(f"expected an object, found {type(data).__name__}", path=path)
    hints = _field_types(tp)
    values = {}
    for f in dataclasses.fields(tp):
        if f.name in data:
            values[f.name] = from_jsonable(hints[f.name], data[f.name], f"{path}.{f.name}")
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise CanonicalJsonError(f"missing field {f.name!r} of {tp.__name__}", path=path)
    return tp(**values)


def _from_enum(tp: type[Enum], data: Any, path: str) -> Enum:
    try:
        return tp(data)
    except ValueError as exc:
        allowed = ", ".join(str(member.value) for member in tp)
        raise CanonicalJsonError(f"expected one of {allowed}, found {data!r}", path=path) from exc


def _from_scalar(tp: Any, data: Any, path: str) -> Any:
    expected = {str: str, int: int, bool: bool}.get(tp)
    bool_mixup = tp is not bool and isinstance(data, bool)  # JSON true is not an int here
    if expected is None or isinstance(data, expected) and not bool_mixup:
        return data
    raise CanonicalJsonError(f"expected {tp.__name__}, found {data!r}", path=path)
