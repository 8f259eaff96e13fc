"""Configuration: TOML files < environment variables < command-line flags -> `Settings`.

Files. `--config PATH` is the only file read when given (it must exist).
Otherwise the user file `<config dir>/config.toml` and then the project file
`<cwd>/.agent/config.toml` are both read when they exist, the project file
overriding the user file key by key: personal choices (provider, keys)
live in the user file, per-repository tuning in the project file.

A project file arrives with the repository, so it may not set the keys that
would let a repository approve its own commands, reach outside itself, or
send your API key elsewhere (`PROJECT_RESTRICTED_KEYS`); those belong in the
user file, a `--config` file, the environment or flags. What it chooses that
costs money is said in `Settings.notices` and capped (`project_costs.py`);
the paths it hides from the sandbox add to the user's (`sandbox.hidden`);
it is read only if it is a regular file inside the project (`file_reads.py`).

Environment. The selected provider's SDK variables (`ANTHROPIC_API_KEY`,
`ANTHROPIC_BASE_URL`, `OPENAI_API_KEY`, `OPENAI_BASE_URL`) override the
file's `api_key` / `base_url`. Flags override everything. When `--provider`
names another provider than the files, the files' `model`, `api_key` and
`base_url` (written for that other provider) are dropped.

Every mistake raises `ConfigError` with one line naming the file, line and
key; API key values never appear in messages.

`parse_config` and `resolve_settings` are pure; `load_settings` is the thin
shell that finds and reads the files.
"""

from __future__ import annotations

import dataclasses
import re
import tomllib
import typing
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from agent_cli.config.key_lines import find_key_lines, key_place
from agent_cli.config.project_costs import review_project_choices
from agent_cli.config.raw_tables import RAW_TABLES, RawTable
from agent_cli.config.schema import (
    SECTIONS,
    all_fields,
    closest,
    coerce,
    config_error,
    default_value,
    show_value,
    suggest_key,
)
from agent_cli.config.settings import (
    ApprovalSettings,
    ContextSettings,
    ProviderName,
    ProviderSettings,
    SandboxSettings,
    Settings,
    ToolSettings,
    UiSettings,
    WebSettings,
)
from agent_cli.core.errors import ConfigError
from agent_cli.store import user_dirs as paths
from agent_cli.store.file_reads import UnreadableFile, describe_size, read_project_file, read_user_file

__all__ = [
    "CONFIG_MAX_BYTES",
    "FLAG_KEYS",
    "PROJECT_RESTRICTED_KEYS",
    "ConfigLayer",
    "Flags",
    "find_key_lines",
    "load_settings",
    "parse_config",
    "resolve_settings",
]

PROJECT_RESTRICTED_KEYS: frozenset[str] = frozenset(
    {
        "provider.api_key",  # keys do not belong in a repository
        "provider.base_url",  # would send the user's env API key to a host the repository picks
        "approvals.yes",  # would approve every command the model runs
        "approvals.allow",  # would approve the commands the repository lists
        "approvals.mode",  # would let edits (or everything) run without asking
        "tools.allow_outside_root",  # would let tools touch files outside the project
        "sandbox.mode",  # "off" would run the model's commands with all of the user's rights
        "sandbox.network",  # would open the network to them
        "sandbox.writable",  # would make more of the disk writable to them
        "web.allow_hosts",  # would let pages be fetched from the user's own network unasked
        "ui.statusline",  # a command the REPL runs every second, unasked
        "sandbox.max_processes",  # higher: a fork bomb goes further; lower: the agent starves
    }
)

# Lists a project file adds to rather than replaces: it may narrow the sandbox, never undo the user's.
_PROJECT_ADDS = frozenset({"sandbox.hidden", "web.deny_hosts"})

# Fields the files wrote for one provider; meaningless after `--provider` switches to another.
_PROVIDER_BOUND = (
    "provider.model",
    "provider.api_key",
    "provider.base_url",
    "provider.wire",
    "context.summary_model",
)


@dataclass(frozen=True, slots=True)
class Flags:
    """Command-line overrides; `None` (or `False` for `yes`) means "not given"."""

    provider: str | None = None  # --provider
    model: str | None = None  # --model
    context_window: int | None = None  # --context-window
    wire: str | None = None  # --wire
    effort: str | None = None  # --effort
    summary_model: str | None = None  # --summary-model
    yes: bool = False  # --yes: approve every tool call
    permission_mode: str | None = None  # --permission-mode
    sandbox: str | None = None  # --sandbox


@dataclass(frozen=True, slots=True)
class ConfigLayer:
    """One validated config file: dotted key ("context.trigger_ratio") -> value, and its line."""

    path: Path
    values: Mapping[str, object]
    lines: Mapping[str, int]
    project: bool = False  # came with the repository (see project_costs.py)
    tables: tuple[RawTable, ...] = ()  # `[mcp]`, `[hooks]`: validated by their owners (raw_tables.py)


# ---- parsing one file --------------------------------------------------------------------------

_TOML_POS = re.compile(r"\s*\(at (?:line (\d+), column (\d+)|end of document)\)$")


def _syntax_error(path: Path, text: str, exc: tomllib.TOMLDecodeError) -> ConfigError:
    """tomllib's message, with its position moved to the front as file:line:column."""
    message = str(exc)
    match = _TOML_POS.search(message)
    if match is None:
        return config_error(str(path), f"invalid TOML: {message}")
    reason = message[: match.start()]
    if match.group(1):
        where = f"{path}:{match.group(1)}:{match.group(2)}"
    else:  # "end of document": an unclosed string or array, or a value missing at the end
        where = f"{path}:{max(1, len(text.splitlines()))}"
        reason += " at end of file"
    return config_error(where, f"invalid TOML: {reason}")


def parse_config(
    text: str, path: Path, *, project: bool = False, secrets: Collection[str] = ()
) -> ConfigLayer:
    """Validate one config file's text. `project`: the file came with the repository."""
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise _syntax_error(path, text, exc) from None
    lines = find_key_lines(text)
    schema = all_fields()
    provider = document.get("provider")
    file_key = provider.get("api_key") if isinstance(provider, dict) else None
    secrets = [*secrets, file_key] if isinstance(file_key, str) else list(secrets)
    values: dict[str, object] = {}
    tables: list[RawTable] = []
    for section, body in document.items():
        where = key_place(path, lines, section)
        if section in RAW_TABLES:
            if not isinstance(body, dict):
                raise config_error(where, f"{section} must be a table, like [{section}]")
            section_lines = {k: v for k, v in lines.items() if k == section or k.startswith(section + ".")}
            tables.append(RawTable(section, body, path, project, section_lines))
            continue
        if section not in SECTIONS:
            if isinstance(body, dict):
                table = closest(section, [*SECTIONS, *RAW_TABLES])
                hint = f"; did you mean [{table}]?" if table is not None else ""
                raise config_error(where, f"unknown table [{section}]{hint}")
            raise config_error(
                where, f"unknown key {section} (keys go inside a table){suggest_key(None, section)}"
            )
        if not isinstance(body, dict):
            raise config_error(where, f"{section} must be a table, like [{section}]")
        for name, value in body.items():
            key = f"{section}.{name}"
            where = key_place(path, lines, key)
            field = schema.get(key)
            if field is None:
                raise config_error(where, f"unknown key {key}{suggest_key(section, name)}")
            if project and key in PROJECT_RESTRICTED_KEYS:
                raise config_error(
                    where,
                    f"{key} cannot be set in a project file (the repository would choose it for you); "
                    "set it in your user config, a --config file, the environment or a flag",
                )
            values[key] = coerce(field, value, where, secrets)
    kept = {k: v for k, v in lines.items() if k in values}
    return ConfigLayer(path=path, values=values, lines=kept, project=project, tables=tuple(tables))


# ---- merging -----------------------------------------------------------------------------------

FLAG_KEYS: tuple[tuple[str, str, str], ...] = (  # Flags attribute, settings key, flag as typed
    ("model", "provider.model", "--model"),
    ("context_window", "context.context_window", "--context-window"),
    ("wire", "provider.wire", "--wire"),
    ("effort", "provider.effort", "--effort"),
    ("summary_model", "context.summary_model", "--summary-model"),
    ("permission_mode", "approvals.mode", "--permission-mode"),
    ("sandbox", "sandbox.mode", "--sandbox"),
)

# (lower, higher): the first must stay strictly below the second.
_ORDERED: tuple[tuple[str, str], ...] = (
    ("context.target_ratio", "context.trigger_ratio"),
    ("context.trigger_ratio", "context.emergency_ratio"),
    ("provider.max_output_tokens", "context.context_window"),  # the input needs room too
)


def _env(env: Mapping[str, str], name: str) -> str | None:
    value = env.get(name, "").strip()
    return value or None  # `export KEY=` means unset, as the SDKs treat it


def _api_keys(env: Mapping[str, str]) -> list[str]:
    """Every provider's key in `env` (`NAME_API_KEY`, the variable its SDK reads): never echoed."""
    keys = (_env(env, f"{name.upper()}_API_KEY") for name in typing.get_args(ProviderName))
    return [key for key in keys if key]


def resolve_settings(
    layers: Sequence[ConfigLayer], env: Mapping[str, str], flags: Flags, cwd: Path
) -> Settings:
    """Merge validated files (in order, later wins), then env, then flags, and check the result."""
    schema = all_fields()
    secrets = _api_keys(env)
    values: dict[str, object] = {}
    origin: dict[str, str] = {}  # key -> where its value came from; insertion order = precedence
    from_project: set[str] = set()  # keys whose value the repository's file chose

    def put(key: str, value: object, where: str) -> None:
        values[key] = value
        origin.pop(key, None)
        origin[key] = where
        from_project.discard(key)

    for layer in layers:
        for key, value in layer.values.items():
            if layer.project and key in _PROJECT_ADDS and isinstance(value, tuple):
                value = (*typing.cast(tuple[str, ...], values.get(key, ())), *value)
            put(key, value, key_place(layer.path, layer.lines, key))
            if layer.project:
                from_project.add(key)

    file_provider = values.get("provider.name", default_value("provider.name"))
    provider = file_provider
    if flags.provider is not None:
        provider = coerce(schema["provider.name"], flags.provider, "--provider", secrets)
        if provider != file_provider:
            for key in _PROVIDER_BOUND:
                values.pop(key, None)
                origin.pop(key, None)
        put("provider.name", provider, "--provider")

    prefix = str(provider).upper()
    api_key = _env(env, f"{prefix}_API_KEY")
    if api_key is not None:
        put("provider.api_key", api_key, f"{prefix}_API_KEY")
    base_url = _env(env, f"{prefix}_BASE_URL")
    if base_url is not None:
        where = f"{prefix}_BASE_URL"
        put("provider.base_url", coerce(schema["provider.base_url"], base_url, where, secrets), where)

    for attribute, key, flag in FLAG_KEYS:
        given = getattr(flags, attribute)
        if given is not None:
            put(key, coerce(schema[key], given, flag, secrets), flag)
    if flags.yes:
        put("approvals.yes", True, "--yes")

    project_file = next((layer.path for layer in layers if layer.project), None)
    costs = review_project_choices(values, from_project, str(project_file), secrets)
    _check_order(costs.values, origin, secrets)
    notices = (costs.notice,) if costs.notice else ()
    settings = _build(costs.values, cwd, tuple(str(layer.path) for layer in layers), notices)
    approvals = settings.approvals
    if approvals.yes or approvals.mode == "bypassPermissions":  # two names for one thing
        approvals = dataclasses.replace(approvals, yes=True, mode="bypassPermissions")
    tables = tuple(t for layer in layers for t in layer.tables)
    return dataclasses.replace(settings, approvals=approvals, tables=tables)


def _check_order(values: Mapping[str, object], origin: Mapping[str, str], secrets: Collection[str]) -> None:
    defaults = {key: default_value(key) for pair in _ORDERED for key in pair}
    rank = {key: n for n, key in enumerate(origin)}
    for low_key, high_key in _ORDERED:
        low = values.get(low_key, defaults[low_key])
        high = values.get(high_key, defaults[high_key])
        if not isinstance(low, int | float) or not isinstance(high, int | float) or low < high:
            continue  # None (from the model table) is checked where the table is known
        # Blame whichever of the two was set last: that is the one the user just changed.
        blamed = max((k for k in (low_key, high_key) if k in rank), key=rank.__getitem__)
        raise config_error(
            origin[blamed],
            f"{low_key} ({show_value(low, secrets)}) must be below {high_key} ({show_value(high, secrets)})",
        )


def _build(
    values: Mapping[str, object], cwd: Path, sources: tuple[str, ...], notices: tuple[str, ...]
) -> Settings:
    sections: dict[str, object] = {}
    for section, cls in SECTIONS.items():
        changes = {k.split(".", 1)[1]: v for k, v in values.items() if k.startswith(section + ".")}
        sections[section] = cls(**changes)
    return Settings(
        provider=typing.cast(ProviderSettings, sections["provider"]),
        context=typing.cast(ContextSettings, sections["context"]),
        tools=typing.cast(ToolSettings, sections["tools"]),
        approvals=typing.cast(ApprovalSettings, sections["approvals"]),
        sandbox=typing.cast(SandboxSettings, sections["sandbox"]),
        web=typing.cast(WebSettings, sections["web"]),
        ui=typing.cast(UiSettings, sections["ui"]),
        project_root=cwd,
        sources=sources,
        notices=notices,
    )


# ---- the shell: finding and reading files ------------------------------------------------------


# A config file is a few KiB (config.example.toml, every key documented, is about 10 KiB).
CONFIG_MAX_BYTES = 256 * 1024


def _read(path: Path, *, root: Path | None) -> str:
    """A config file's text; `root`: it came with the project there (see `file_reads`)."""
    try:
        if root is not None:
            read = read_project_file(root, path, limit=CONFIG_MAX_BYTES)
        else:
            read = read_user_file(path, limit=CONFIG_MAX_BYTES)
    except UnreadableFile as exc:
        raise config_error(str(path), str(exc)) from None
    if read.more:
        raise config_error(
            str(path), f"is larger than {describe_size(CONFIG_MAX_BYTES)}, the most a config file may be"
        )
    try:
        return read.data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise config_error(str(path), f"not UTF-8 text (byte {exc.start})") from None


def load_settings(*, config_path: Path | None, env: Mapping[str, str], flags: Flags, cwd: Path) -> Settings:
    """Settings from the config files, `env` (pass `os.environ`) and `flags`; raises ConfigError."""
    secrets = _api_keys(env)
    files: list[tuple[Path, bool]] = []  # (path, came with the project)
    if config_path is not None:
        config_path = cwd / config_path  # a relative --config is relative to where agent started
        if not config_path.exists():
            raise config_error(f"--config {config_path}", "no such file")
        files.append((config_path, False))
    else:
        user = paths.user_config_path(env)
        project = paths.project_config_path(cwd)
        if user.exists():
            files.append((user, False))
        # The same file twice (a project inside the config dir) is read once, as the user's.
        if project.exists() and not (user.exists() and project.resolve() == user.resolve()):
            files.append((project, True))
    layers = [
        parse_config(_read(path, root=cwd if is_project else None), path, project=is_project, secrets=secrets)
        for path, is_project in files
    ]
    return resolve_settings(layers, env, flags, cwd)
