"""Path confinement: a path argument becomes an absolute path inside the project root.

The root check runs on the resolved path, so neither `../` nor a symlink
pointing out of the project gets past it. `tools.allow_outside_root` lifts
the check (the user's choice, never a project's config).
"""

from __future__ import annotations

from pathlib import Path

from agent_cli.core.text import clean
from agent_cli.tools.base import ToolContext, ToolError

__all__ = ["display_path", "resolve_path"]


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
    """`path` relative to the root when it is inside it (what the model should type back), else absolute.
    A name that is not UTF-8 shows its undecodable bytes as U+FFFD."""
    root = ctx.root.resolve()
    if path.is_relative_to(root):
        rel = path.relative_to(root).as_posix()
        return clean(rel) or "."
    return clean(str(path))
