"""Tool arguments: a raw JSON value becomes a typed value, or a `ToolError` naming the argument.

Models send numbers as strings and booleans as words; these helpers accept
what is unambiguous and refuse the rest with a message the model can act on.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from agent_cli.tools.base import ToolError

__all__ = ["optional_bool", "optional_int", "optional_number", "optional_str", "require_str"]


def require_str(args: Mapping[str, Any], name: str, *, allow_empty: bool = False) -> str:
    """The string argument `name`; missing, non-string or (unless allowed) empty is an error."""
    if name not in args or args[name] is None:
        raise ToolError(f"missing required argument {name!r}")
    value = args[name]
    if not isinstance(value, str):
        raise ToolError(f"argument {name!r} must be a string, got {_json_type(value)}")
    if not allow_empty and not value.strip():
        raise ToolError(f"argument {name!r} is empty")
    return value


def optional_str(args: Mapping[str, Any], name: str) -> str | None:
    """A string argument that may be absent or null; an empty string counts as absent."""
    value = args.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ToolError(f"argument {name!r} must be a string, got {_json_type(value)}")
    return value if value.strip() else None


def optional_int(args: Mapping[str, Any], name: str, default: int, *, minimum: int = 0) -> int:
    """An integer argument; models sometimes send "12" or 12.0, which are accepted."""
    value = args.get(name)
    if value is None:
        return default
    number = _coerce_number(value, name)
    if number != int(number):
        raise ToolError(f"argument {name!r} must be a whole number, got {value!r}")
    if number < minimum:
        raise ToolError(f"argument {name!r} must be at least {minimum}, got {value!r}")
    return int(number)


def optional_number(args: Mapping[str, Any], name: str, default: float) -> float:
    value = args.get(name)
    if value is None:
        return default
    return _coerce_number(value, name)


def optional_bool(args: Mapping[str, Any], name: str, default: bool = False) -> bool:
    value = args.get(name)
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise ToolError(f"argument {name!r} must be true or false, got {value!r}")


def _coerce_number(value: Any, name: str) -> float:
    if isinstance(value, bool):
        raise ToolError(f"argument {name!r} must be a number, got {value!r}")
    number: float | None = None
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            number = None
    if number is not None and math.isfinite(number):
        return number
    raise ToolError(f"argument {name!r} must be a number, got {value!r}")


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, list | tuple):
        return "an array"
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__
