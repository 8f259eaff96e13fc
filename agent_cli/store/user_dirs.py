"""Where agent-cli keeps its files outside the project: the XDG config and state dirs.

    config dir   $XDG_CONFIG_HOME/agent-cli   else ~/.config/agent-cli
    state dir    $XDG_STATE_HOME/agent-cli    else ~/.local/state/agent-cli

Pure functions of an environment mapping: callers pass `os.environ` (or a test's
dict), so nothing here reads the process environment by itself. Per the XDG
Base Directory spec, an empty or relative `XDG_*` value is ignored.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

__all__ = [
    "APP_DIR_NAME",
    "PROJECT_CONFIG_RELPATH",
    "config_dir",
    "home_dir",
    "project_config_path",
    "state_dir",
    "user_config_path",
]

APP_DIR_NAME = "agent-cli"
PROJECT_CONFIG_RELPATH = Path(".agent") / "config.toml"


def home_dir(env: Mapping[str, str]) -> Path:
    """`$HOME` from `env` when set, else the account's home directory."""
    home = env.get("HOME", "")
    return Path(home) if home else Path.home()


def _xdg_dir(env: Mapping[str, str], var: str, fallback: tuple[str, ...]) -> Path:
    value = env.get(var, "")
    # The spec says relative paths are invalid and must be ignored.
    if value and Path(value).is_absolute():
        return Path(value) / APP_DIR_NAME
    return home_dir(env).joinpath(*fallback, APP_DIR_NAME)


def config_dir(env: Mapping[str, str]) -> Path:
    """The user's agent-cli config directory."""
    return _xdg_dir(env, "XDG_CONFIG_HOME", (".config",))


def state_dir(env: Mapping[str, str]) -> Path:
    """The user's agent-cli state directory (history, logs that are not per project)."""
    return _xdg_dir(env, "XDG_STATE_HOME", (".local", "state"))


def user_config_path(env: Mapping[str, str]) -> Path:
    """`<config dir>/config.toml`."""
    return config_dir(env) / "config.toml"


def project_config_path(cwd: Path) -> Path:
    """`<cwd>/.agent/config.toml`."""
    return cwd / PROJECT_CONFIG_RELPATH
