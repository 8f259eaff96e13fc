"""The config schema: every configurable key, its rule, and the one-line messages about it.

The keys are derived from the settings dataclasses (`settings.py`), so adding a
field there makes it configurable here: its type picks the rule (`str`,
`bool`, positive `int`, positive `float`, a `Literal` choice, a tuple of
strings); a few names refine it (`*_ratio` is a number in (0, 1), `api_key`
is a secret never echoed, `base_url` must be an http(s) URL, `max_retries`
may be 0). Pure functions, no I/O.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import json
import re
import types
import typing
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from agent_cli.config.settings import (
    ApprovalSettings,
    ContextSettings,
    ProviderSettings,
    SandboxSettings,
    ToolSettings,
    UiSettings,
    WebSettings,
)
from agent_cli.core.errors import ConfigError

__all__ = [
    "SECTIONS",
    "Field",
    "all_fields",
    "closest",
    "coerce",
    "config_error",
    "default_value",
    "show_value",
    "suggest_key",
]

SECTIONS: dict[str, type] = {
    "provider": ProviderSettings,
    "context": ContextSettings,
    "tools": ToolSettings,
    "approvals": ApprovalSettings,
    "sandbox": SandboxSettings,
    "web": WebSettings,
    "ui": UiSettings,
}


@dataclass(frozen=True, slots=True)
class Field:
    """One configurable key and the kind of value it takes."""

    key: str  # "section.name"
    kind: str  # str | secret | url | choice | bool | int | count | window | float | ratio | strings
    choices: tuple[str, ...] = ()


MIN_CONTEXT_WINDOW = 4_096
_RULES: dict[str, str] = {
    "str": "must be a string",
    "secret": "must be a non-empty string",
    "url": "must be an http:// or https:// URL",
    "bool": "must be true or false",
    "int": "must be a positive integer",
    "count": "must be a whole number, 0 or more",
    "window": f"must be a whole number of tokens, at least {MIN_CONTEXT_WINDOW:,} (the system prompt, "
    "the tools and a reply need that much)",
    "float": "must be a positive number",
    "ratio": "must be a number between 0 and 1",
    "strings": "must be a list of non-empty strings",
}


@functools.cache
def all_fields() -> dict[str, Field]:
    """Every configurable key, derived from the settings dataclasses so the two cannot drift."""
    schema: dict[str, Field] = {}
    for section, cls in SECTIONS.items():
        hints = typing.get_type_hints(cls)
        for f in dataclasses.fields(cls):
            key = f"{section}.{f.name}"
            schema[key] = _field_for(key, hints[f.name])
    return schema


def _field_for(key: str, hint: object) -> Field:
    name = key.rsplit(".", 1)[1]
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:  # `X | None`: omit it
        hint = next(a for a in typing.get_args(hint) if a is not type(None))
    if typing.get_origin(hint) is typing.Literal:
        return Field(key, "choice", tuple(str(a) for a in typing.get_args(hint)))
    if hint is str:
        return Field(key, "secret" if name == "api_key" else "url" if name == "base_url" else "str")
    if hint is bool:
        return Field(key, "bool")
    if hint is int:
        # 0 retries is a real choice; a working budget of 0 means the whole window; 0 tokens to free, off.
        if name == "context_window":
            return Field(key, "window")
        counts = ("max_retries", "working_budget", "max_task_depth", "min_freed_tokens")
        return Field(key, "count" if name in counts else "int")
    if hint is float:
        return Field(key, "ratio" if name.endswith("_ratio") else "float")
    if typing.get_origin(hint) is tuple:
        return Field(key, "strings")
    raise TypeError(f"no config rule for {key}: {hint!r}")


# ---- messages ----------------------------------------------------------------------------------

_KEYLIKE = re.compile(r"sk-|[A-Za-z0-9_\-]{32,}")


def config_error(where: str, message: str) -> ConfigError:
    return ConfigError(f"config error: {where}: {message}")


def show_value(value: object, secrets: Collection[str]) -> str:
    """A value as the user wrote it (TOML-ish), unless it is or looks like a credential."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        if _KEYLIKE.search(value) or any(s and s in value for s in secrets):
            return "a value that looks like a key, not shown"
        text = json.dumps(value)
        return text if len(text) <= 60 else text[:57] + '..."'
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "a table"
    return f"a {type(value).__name__}"


def _rule(field: Field) -> str:
    if field.kind == "choice":
        return "must be one of " + ", ".join(json.dumps(c) for c in field.choices)
    return _RULES[field.kind]


def coerce(field: Field, value: object, where: str, secrets: Collection[str]) -> object:
    """The validated value, or a ConfigError naming `where` and the key."""
    ok: object = _check(field, value)
    if ok is _BAD:
        got = "" if field.kind == "secret" else f" (got {show_value(value, secrets)})"
        raise config_error(where, f"{field.key} {_rule(field)}{got}")
    return ok


_BAD = object()


def _check(field: Field, value: object) -> object:
    kind = field.kind
    if kind in ("str", "secret", "url", "choice"):
        if not isinstance(value, str):
            return _BAD
        if kind == "secret" and not value.strip():
            return _BAD
        if kind == "url" and not re.match(r"https?://[^\s/]", value):
            return _BAD
        if kind == "choice" and value not in field.choices:
            return _BAD
        return value
    if kind == "bool":
        return value if isinstance(value, bool) else _BAD
    if kind in ("int", "count", "window"):
        if isinstance(value, bool) or not isinstance(value, int):
            return _BAD
        return value if value >= {"count": 0, "int": 1, "window": MIN_CONTEXT_WINDOW}[kind] else _BAD
    if kind in ("float", "ratio"):
        if isinstance(value, bool) or not isinstance(value, int | float):
            return _BAD
        number = float(value)
        if kind == "ratio":
            return number if 0.0 < number < 1.0 else _BAD
        return number if number > 0.0 else _BAD
    if kind == "strings":
        if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
            return _BAD  # an empty prefix would approve every command
        return tuple(value)
    return _BAD


def closest(name: str, candidates: Sequence[str]) -> str | None:
    close = difflib.get_close_matches(name, candidates, n=1, cutoff=0.6)
    return close[0] if close else None


def suggest_key(section: str | None, name: str) -> str:
    """Closest key: in the same table first, then anywhere (a key put under the wrong table)."""
    schema = all_fields()
    if section in SECTIONS:
        local = closest(name, [k.split(".", 1)[1] for k in schema if k.startswith(section + ".")])
        if local is not None:
            return f"; did you mean {section}.{local}?"
    by_name = {k.split(".", 1)[1]: k for k in schema}
    anywhere = closest(name, list(by_name))
    return f"; did you mean {by_name[anywhere]}?" if anywhere is not None else ""


def default_value(key: str) -> object:
    """The settings default for a dotted key."""
    section, name = key.split(".", 1)
    return getattr(SECTIONS[section](), name)
