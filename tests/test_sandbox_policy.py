"""The sandbox's pure parts: the policy's hidden paths, the environment a command gets, the bubblewrap
command line, the Seatbelt profile, and the probe's verdict on a bwrap that is missing or refuses."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from agent_cli.core.secret_env import secret_env_names
from agent_cli.sandbox.bwrap import PathKind, bwrap_argv
from agent_cli.sandbox.policy import HIDDEN_IN_HOME, SandboxPolicy, child_env, too_wide
from agent_cli.sandbox.probe import probe
from agent_cli.sandbox.seatbelt import seatbelt_argv, seatbelt_profile

HOME = Path("/home/u")
STATE = HOME / ".local/state/agent-cli"
PROJECT = Path("/work/p")


def _policy(mode: str = "workspace-write", **kw: object) -> SandboxPolicy:
    return SandboxPolicy.for_user(mode, PROJECT, home=HOME, state_dir=STATE, **kw)  # type: ignore[arg-type]


def _all_exist(path: Path) -> PathKind:
    return (
        "file" if path.suffix or path.name in (".netrc", ".npmrc", ".pypirc", ".git-credentials") else "dir"
    )


def test_the_default_hidden_paths() -> None:
    policy = _policy(hidden=["~/.rclone", "/srv/keys"], writable=["~/.cache/pip"])
    for rel in (
        ".ssh",
        ".aws",
        ".gnupg",
        ".config/gcloud",
        ".azure",
        ".kube",
        ".docker/config.json",
        ".netrc",
    ):
        assert HOME / rel in policy.hidden
    for other_agent in (
        ".claude/.credentials.json",
        ".codex/auth.json",
        ".config/gh/hosts.yml",
        ".git-credentials",
    ):
        assert HOME / other_agent in policy.hidden
    assert STATE in policy.hidden  # the agent's own session key
    assert Path("/var/run/docker.sock") in policy.hidden and Path("/run/user") in policy.hidden
    assert policy.hidden[-2:] == (HOME / ".rclone", Path("/srv/keys"))  # the user's, "~" expanded
    assert policy.writable == (HOME / ".cache/pip",)
    assert len(policy.hidden) == len(set(policy.hidden))


def test_the_environment_loses_secrets_and_agent_sockets() -> None:
    env = {
        "PATH": "/usr/bin",
        "HOME": "/home/u",
        "ANTHROPIC_API_KEY": "sk-ant-x",
        "GITHUB_TOKEN": "t",
        "AWS_SECRET_ACCESS_KEY": "s",
        "DB_PASSWORD": "p",
        "SENTRY_DSN": "https://k@sentry",
        "SSH_AUTH_SOCK": "/tmp/ssh-x/agent.1",
        "DBUS_SESSION_BUS_ADDRESS": "unix:path=/run/user/1000/bus",
        "KUBECONFIG_PATH": "/home/u/.kube/config",  # names a place: kept (the place is hidden)
        "TOKENIZERS_PARALLELISM": "false",  # the redaction's rule takes this one too: erring on the safe side
    }
    kept = child_env(env)
    assert set(kept) == {"PATH", "HOME", "KUBECONFIG_PATH"}
    # One rule with the redaction: what it hides by name, the sandbox does not pass.
    assert set(env) - set(kept) - {"SSH_AUTH_SOCK", "DBUS_SESSION_BUS_ADDRESS"} == set(secret_env_names(env))


def test_workspace_write_argv() -> None:
    argv = bwrap_argv(_policy(), ["make", "test"], PROJECT / "src", bwrap="bwrap", kind=_all_exist)
    assert argv[:8] == ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    text = " ".join(argv)
    assert f"--bind {PROJECT} {PROJECT} --bind /tmp /tmp" in text
    assert f"--tmpfs {HOME}/.ssh --remount-ro {HOME}/.ssh" in text
    assert f"--ro-bind /dev/null {HOME}/.netrc" in text
    # The hidden paths are mounted after the writable ones, so they stay hidden inside the project too.
    assert text.index("--bind /tmp") < text.index(f"{HOME}/.ssh")
    assert "--unshare-all" in argv and "--share-net" not in argv
    for flag in ("--die-with-parent", "--new-session"):
        assert flag in argv
    assert argv[argv.index("--cap-drop") + 1] == "ALL"
    assert argv[argv.index("--chdir") + 1] == str(PROJECT / "src")
    end = argv.index("--")
    assert argv[end + 1 : end + 3] == ["/bin/sh", "-c"] and "ulimit -u 4096" in argv[end + 3]
    assert argv[-3:] == ["sh", "make", "test"]  # the command, word for word, as "$@"


def test_read_only_network_and_absent_paths() -> None:
    policy = _policy("read-only", network=True, writable=["/srv/out"])
    argv = bwrap_argv(
        policy, ["ls"], PROJECT, bwrap="bwrap", kind=lambda p: "dir" if p == HOME / ".aws" else None
    )
    text = " ".join(argv)
    assert "--bind " not in text  # nothing writable: not the project, not the user's paths
    assert "--tmpfs /tmp" in text  # a private temporary directory
    assert "--share-net" in argv
    assert f"{HOME}/.aws" in text and f"{HOME}/.ssh" not in text  # absent: nothing to hide


def test_off_is_the_command_as_given() -> None:
    assert bwrap_argv(_policy("off"), ["ls", "-l"], PROJECT, bwrap="bwrap", kind=_all_exist) == ["ls", "-l"]
    assert seatbelt_argv(_policy("off"), ["ls"]) == ["ls"]


def test_the_seatbelt_profile() -> None:
    policy = SandboxPolicy.for_user(
        "workspace-write",
        Path('/Users/u/my "odd" proj'),
        home=Path("/Users/u"),
        state_dir=Path("/Users/u/st"),
    )
    profile = seatbelt_profile(policy)
    assert profile.startswith("(version 1)\n(deny default)\n")
    assert '(subpath "/Users/u/my \\"odd\\" proj")' in profile  # quoted as an SBPL string
    assert profile.index("(allow file-read*)") < profile.index("(deny file-read* file-write*")
    assert '(subpath "/Users/u/.ssh")' in profile and '(subpath "/Users/u/st")' in profile
    assert "(allow network*)" not in profile
    assert profile.count("(") == profile.count(")")
    opened = seatbelt_profile(
        SandboxPolicy.for_user("read-only", PROJECT, home=HOME, state_dir=STATE, network=True)
    )
    assert "(allow network*)" in opened and "(allow file-write* (subpath" not in opened
    argv = seatbelt_argv(policy, ["make"])
    assert argv[:2] == ["/usr/bin/sandbox-exec", "-p"] and argv[-2:] == ["--", "make"]


def test_every_hidden_home_path_is_relative() -> None:
    assert all(not p.startswith(("/", "~")) for p in HIDDEN_IN_HOME)


@pytest.mark.skipif(not Path("/bin/sh").exists(), reason="needs /bin/sh")
def test_the_probe_verdicts(tmp_path: Path) -> None:
    missing = probe(None)
    assert not missing.works and "bubblewrap" in missing.reason
    refusing = tmp_path / "bwrap"
    refusing.write_text("#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n")
    refusing.chmod(refusing.stat().st_mode | stat.S_IXUSR)
    verdict = probe(str(refusing))
    assert not verdict.works
    assert verdict.reason == "bubblewrap fails here: bwrap: setting up uid map: Permission denied"
    working = tmp_path / "ok"
    working.write_text("#!/bin/sh\nexit 0\n")
    working.chmod(working.stat().st_mode | stat.S_IXUSR)
    assert probe(str(working)).works


@pytest.mark.parametrize(
    ("project", "writable", "reason"),
    [
        (Path("/"), (), "the whole file system"),
        (HOME, (), "home directory"),
        (Path("/home"), (), "home directory"),
        (PROJECT, ("/",), "the whole file system"),
        (PROJECT, (), None),
        (HOME / "src/p", ("~/.cache/pip",), None),
    ],
)
def test_a_sandbox_too_wide_to_hold(project: Path, writable: tuple[str, ...], reason: str | None) -> None:
    policy = SandboxPolicy.for_user("workspace-write", project, home=HOME, state_dir=STATE, writable=writable)
    said = too_wide(policy, HOME)
    assert (said is None) if reason is None else (said is not None and reason in said)
    # read-only writes nothing of the project: never too wide.
    assert too_wide(SandboxPolicy.for_user("read-only", project, home=HOME, state_dir=STATE), HOME) is None
