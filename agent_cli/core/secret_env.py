"""Which environment variables hold secrets, by their names: the one rule the redaction and the sandbox share.

A variable whose name says it is a credential (`AWS_SECRET_ACCESS_KEY`, `GITHUB_TOKEN`, `DB_PASSWORD`,
`SENTRY_DSN` ...) is a secret; one whose name ends by saying it is a place (`..._SOCK`, `..._PATH`,
`..._FILE`, `..._DIR`, `..._HOME`, `..._URL`, `..._HOST`, `..._PORT`) is not, though it may name one.

- `secret_env_values`: the values to hide in what is written or shown (short values and paths are left:
  hiding "1" or "/usr" would mangle ordinary text and protect nothing).
- `secret_env_names`: the variables a sandboxed command is not given at all (any value).

Pure functions over a mapping the caller passes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

__all__ = ["is_secret_env_name", "secret_env_names", "secret_env_values"]

_SECRET_NAME = re.compile(r"KEY|SECRET|TOKEN|PASSW|CREDENTIAL|AUTH|PRIVATE|DSN", re.IGNORECASE)
_NOT_SECRET_NAME = re.compile(r"_(SOCK|PATH|FILE|DIR|HOME|URL|HOST|PORT)$", re.IGNORECASE)


def is_secret_env_name(name: str) -> bool:
    """True when a variable's name says it holds a credential."""
    return bool(_SECRET_NAME.search(name)) and not _NOT_SECRET_NAME.search(name)


def secret_env_names(env: Mapping[str, str]) -> list[str]:
    """The names in `env` that say they hold a credential, in `env`'s order."""
    return [name for name in env if is_secret_env_name(name)]


def secret_env_values(env: Mapping[str, str]) -> list[str]:
    """Values of environment variables whose names say they are secrets (AWS_SECRET_ACCESS_KEY,
    GITHUB_TOKEN, DB_PASSWORD ...): a tool printing the environment must not put them on disk."""
    return [
        value
        for name, value in env.items()
        if is_secret_env_name(name) and len(value) >= 8 and not value.startswith(("/", "~"))
    ]
