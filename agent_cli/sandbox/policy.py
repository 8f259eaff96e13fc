"""What a sandboxed command may reach: the `SandboxPolicy` value, and the environment it is given.

A *mode* says what is writable:

    workspace-write   the project, the system's temporary directory and the user's `writable` paths;
                      the rest of the file system read-only
    read-only         nothing but a private, empty temporary directory
    off               as the user runs it (no sandbox)

Whatever the mode, the *hidden* paths cannot be read from inside: credential files and directories
(`HIDDEN_IN_HOME`, under `$HOME`), the agent's own state directory (its session key), the sockets that
hand out the user's rights whole (the docker daemon's, the user's session bus and agent sockets under
`/run/user/UID`), and the paths the user adds. The network is closed unless `network` is on.

`agent_sockets` names the ssh-agent socket the caller's environment points at, for the launcher to hide
(the socket itself usually sits in the writable temporary directory). `child_env` is the environment a
sandboxed command gets: the caller's, less the variables whose names
say they hold a credential (`core.secret_env`, the rule the redaction uses) and the ones that point at
an agent socket. Pure: the caller passes `home`, `state_dir` and `env`; nothing here reads the process.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from agent_cli.core.secret_env import is_secret_env_name

__all__ = [
    "HIDDEN_IN_HOME",
    "HIDDEN_SYSTEM",
    "MODES",
    "SandboxMode",
    "SandboxPolicy",
    "agent_sockets",
    "child_env",
    "too_wide",
]

SandboxMode = Literal["workspace-write", "read-only", "off"]
MODES: tuple[SandboxMode, ...] = ("workspace-write", "read-only", "off")

# Under $HOME. Cloud, cluster, registry and package-index credentials; keys; other agents' logins.
HIDDEN_IN_HOME: tuple[str, ...] = (
    ".ssh",
    ".aws",
    ".gnupg",
    ".config/gcloud",
    ".azure",
    ".kube",
    ".docker/config.json",
    ".netrc",
    ".npmrc",
    ".pypirc",
    ".git-credentials",
    ".config/gh/hosts.yml",
    ".config/hub",
    ".config/glab-cli",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".gem/credentials",
    ".terraform.d/credentials.tfrc.json",
    ".vault-token",
    ".password-store",
    ".local/share/keyrings",
    ".claude/.credentials.json",
    ".claude.json",  # Claude Code keeps its OAuth account and API key helper settings here
    ".codex/auth.json",
    ".config/github-copilot",
    ".gemini/oauth_creds.json",
    ".config/aider",
)

# Outside $HOME: sockets whose owner grants whatever it is asked (docker is root), and the user's
# runtime directory (session bus: `systemd-run --user` would start a command outside the sandbox;
# gpg-agent, ssh-agent, keyrings). Bound over only where they exist.
HIDDEN_SYSTEM: tuple[str, ...] = (
    "/var/run/docker.sock",
    "/run/docker.sock",
    "/run/containerd/containerd.sock",
    "/run/podman/podman.sock",
    "/run/user",
    "/tmp/.X11-unix",  # an X server takes keystrokes for any window: the user's terminal too
)

# Variables that point at a socket holding the user's keys, though their names do not say secret.
_AGENT_VARS = frozenset({"SSH_AUTH_SOCK", "GPG_AGENT_INFO", "DBUS_SESSION_BUS_ADDRESS"})


@dataclass(frozen=True, slots=True)
class SandboxPolicy:
    """What one sandboxed command may reach. Paths are absolute; `hidden` already holds the defaults
    (`SandboxPolicy.for_user` puts them there), so the launcher reads one list."""

    mode: SandboxMode
    project: Path
    tmp: Path = Path("/tmp")
    writable: tuple[Path, ...] = ()
    network: bool = False
    hidden: tuple[Path, ...] = field(default_factory=tuple)
    max_processes: int = 4096  # RLIMIT_NPROC inside: a fork bomb stops here, not at the machine's limit
    # Paths inside the writable ones that stay read-only (auto mode's protected files: `.git/config`,
    # `.git/hooks`, `.agent/` ...); one that does not exist when the command starts is left out.
    read_only: tuple[Path, ...] = ()

    @classmethod
    def for_user(
        cls,
        mode: SandboxMode,
        project: Path,
        *,
        home: Path,
        state_dir: Path,
        tmp: Path = Path("/tmp"),
        writable: Iterable[Path | str] = (),
        network: bool = False,
        hidden: Iterable[Path | str] = (),
        max_processes: int = 4096,
    ) -> SandboxPolicy:
        """The policy with the default hidden paths for this `home` and agent `state_dir`, then the
        user's own (`~` in a user path is `home`)."""
        defaults = [home / rel for rel in HIDDEN_IN_HOME] + [state_dir] + [Path(p) for p in HIDDEN_SYSTEM]
        extra = [_expand(p, home) for p in hidden]
        return cls(
            mode=mode,
            project=project,
            tmp=tmp,
            writable=tuple(_expand(p, home) for p in writable),
            network=network,
            hidden=tuple(dict.fromkeys([*defaults, *extra])),
            max_processes=max_processes,
        )

    @property
    def confined(self) -> bool:
        return self.mode != "off"


def _expand(path: Path | str, home: Path) -> Path:
    """A user's path: `~` is `home`; a string (as the config holds it) becomes a Path."""
    text = str(path)
    if text == "~" or text.startswith("~/"):
        return home / text[2:]
    return Path(text)


def too_wide(policy: SandboxPolicy, home: Path) -> str | None:
    """Why `policy` would confine next to nothing, or None. A project (or writable path) at `/` makes
    the whole disk writable; at the home directory, or above it, the shell's start-up files
    (`~/.bashrc`, `~/.profile`), which run unconfined at the next login. The caller treats such a
    sandbox as missing (it asks before every command). Paths compared as given: pass resolved ones."""
    if policy.mode != "workspace-write":
        return None
    for path in (policy.project, *policy.writable):
        if path == Path("/"):
            return f"{path} is writable: the whole file system would be"
        if path == home or path in home.parents:
            return f"{path} holds your home directory: your shell's start-up files would be writable"
    return None


def agent_sockets(env: Mapping[str, str]) -> list[Path]:
    """The agent sockets `env` names (ssh-agent's, usually under /tmp): hidden as well, since taking
    the variable away does not stop a command that looks for the socket by its path."""
    sock = env.get("SSH_AUTH_SOCK", "")
    return [Path(sock)] if sock.startswith("/") else []


def child_env(env: Mapping[str, str]) -> dict[str, str]:
    """`env` less what a sandboxed command must not be handed: credentials by name, agent sockets."""
    return {k: v for k, v in env.items() if not is_secret_env_name(k) and k not in _AGENT_VARS}
