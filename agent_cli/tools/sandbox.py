"""Argument checking and path resolution shared by the tools.

Owns two things: turning a raw JSON argument into a typed value (or a
`ToolError` naming the argument), and turning a path argument into an
absolute, symlink-resolved path inside the project root. The root check runs
on the resolved path, so neither `../` nor a symlink pointing out of the
project gets past it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agent_cli.tools.base import ToolContext, ToolError

__all__ = [
    "display_path",
    "optional_bool",
    "optional_int",
    "optional_number",
    "optional_str",
    "require_str",
    "resolve_path",
]


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


def resolve_path(ctx: ToolContext, raw: str, *, name: str = "path") -> Path:
    """An absolute, symlink-resolved path for `raw`, refused if it leaves the project root.

    Relative paths are taken against `ctx.root`; `~` is expanded. The target need
    not exist (write_file creates it), but every existing symlink on the way is
    followed before the root check.
    """
    if "\0" in raw:
        raise ToolError(f"argument {name!r} contains a NUL character")
    root = ctx.root.resolve()
    candidate = Path(raw.strip()).expanduser()
    if not candidate.is_absolute():
        candidate = root / candidate
    try:
        resolved = candidate.resolve()
    except (OSError, RuntimeError) as exc:  # symlink loops
        raise ToolError(f"cannot resolve {raw!r}: {exc}") from exc
    if not ctx.allow_outside_root and not resolved.is_relative_to(root):
        via = "" if resolved == candidate else f" (it resolves to {resolved})"
        raise ToolError(
            f"path is outside the project root {root}: {raw!r}{via}. "
            "Use a path inside the project, or ask the user to enable tools.allow_outside_root."
        )
    return resolved


def display_path(ctx: ToolContext, path: Path) -> str:
    """`path` relative to the root when it is inside it (what the model should type back), else absolute."""
    root = ctx.root.resolve()
    if path.is_relative_to(root):
        rel = path.relative_to(root).as_posix()
        return rel or "."
    return str(path)


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
