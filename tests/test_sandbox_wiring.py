"""The sandbox as the session uses it: the confinement's states and lines, the denial line a refused
command's result gets, and "approve outside the sandbox" (offered by the approver, chosen by the user
for one call, never remembered, never offered by a model's argument)."""

from __future__ import annotations

from collections.abc import Mapping
from io import StringIO
from pathlib import Path
from typing import Any

from rich.console import Console

from agent_cli.agent.approvals import OUTSIDE_OFFERED, Answer, InteractiveApprover
from agent_cli.sandbox.probe import Verdict
from agent_cli.tools.confine import Confinement
from agent_cli.ui.approval import ApprovalPrompt, Key
from agent_cli.ui.render import Renderer

HOME = Path("/home/u")
WORKS = Verdict(True, "/usr/bin/bwrap", "bubblewrap works as a user (user namespaces): /usr/bin/bwrap")
FAILS = Verdict(
    False, "/usr/bin/bwrap", "bubblewrap fails here: bwrap: setting up uid map: Permission denied"
)


def _conf(
    verdict: Verdict = WORKS, *, mode: str = "workspace-write", project: Path = Path("/srv/p"), **kw: Any
) -> Confinement:
    return Confinement.for_session(
        mode,  # type: ignore[arg-type]
        project,
        home=HOME,
        state_dir=HOME / ".local/state/agent-cli",
        verdict=verdict,
        **kw,
    )


def test_the_three_states_and_their_lines() -> None:
    on = _conf()
    assert on.active and not on.missing and on.start_line(yes=False) is None
    assert on.status().startswith("workspace-write, no network (bubblewrap works")
    off = _conf(mode="off")
    assert not off.active and not off.missing and off.status().startswith("off")
    assert off.launch(["bash", "-c", "x"], Path("/srv/p"), {"A_TOKEN": "t"}).argv == ["bash", "-c", "x"]
    gone = _conf(FAILS)
    assert gone.missing and not gone.active
    assert "unavailable: bubblewrap fails here" in gone.status() and "every command is asked" in gone.status()
    line = gone.start_line(yes=False)
    assert line is not None and "Permission denied" in line and "every one is asked" in line
    assert "unconfined, with all of your rights" in (gone.start_line(yes=True) or "")
    # Missing, a command starts as given: the approver asked for it.
    assert gone.launch(["bash"], Path("/srv/p"), {}).argv == ["bash"]


def test_a_policy_that_would_confine_nothing_counts_as_missing() -> None:
    assert _conf(project=HOME).missing
    assert _conf(writable=["/"]).missing
    assert "home directory" in _conf(project=HOME).reason


def test_active_launch_wraps_in_bwrap_and_filters_the_environment() -> None:
    launch = _conf().launch(["bash", "-c", "ls"], Path("/srv/p"), {"PATH": "/bin", "GITHUB_TOKEN": "t"})
    assert launch.argv[0] == "/usr/bin/bwrap" and launch.argv[-3:] == ["bash", "-c", "ls"]
    assert launch.env == {"PATH": "/bin"}


def test_the_denial_line_names_what_the_sandbox_refused() -> None:
    on = _conf()
    erofs = "bash: /etc/x: Read-only file system\n[exit code 1]"
    assert (on.denial(erofs) or "").startswith("denied by the sandbox: write outside the project")
    read_only = _conf(mode="read-only").denial(erofs) or ""
    assert read_only.startswith("denied by the sandbox: write in read-only")
    hidden = "cat: /home/u/.ssh/id_rsa: No such file or directory\n[exit code 1]"
    assert (on.denial(hidden) or "").startswith("denied by the sandbox: read of a hidden path")
    net = "curl: (6) Could not resolve host: example.com"
    assert (on.denial(net) or "").startswith("denied by the sandbox: network closed")
    # Not the sandbox: a missing file that is not hidden; the network open; the sandbox off.
    assert on.denial("cat: /srv/p/nope: No such file or directory") is None
    assert _conf(network=True).denial(net) is None
    assert _conf(mode="off").denial(erofs) is None
    assert _conf(FAILS).denial(erofs) is None


class ScriptedUser:
    def __init__(self, *answers: Answer) -> None:
        self.answers = list(answers)
        self.asked: list[dict[str, Any]] = []

    def __call__(self, name: str, args: Mapping[str, Any], always: str | None) -> Answer:
        self.asked.append(dict(args))
        return self.answers.pop(0)


def test_outside_is_offered_for_a_command_runs_it_unconfined_once_and_is_not_remembered() -> None:
    user = ScriptedUser("outside", "yes")
    approver = InteractiveApprover(user, sandboxed=True)
    first = approver.decide("bash", {"command": "touch /etc/x"})
    assert first.allowed and first.unconfined
    assert user.asked[0][OUTSIDE_OFFERED] is True
    again = approver.decide("bash", {"command": "touch /etc/x"})  # asked again: no rule was added
    assert again.allowed and not again.unconfined and len(user.asked) == 2


def test_outside_is_not_offered_without_the_sandbox_nor_for_a_file_tool_nor_by_the_model() -> None:
    user = ScriptedUser("outside", "outside")
    plain = InteractiveApprover(user)
    # A model's argument named like the offer is dropped; "outside" not offered is a plain yes.
    decided = plain.decide("bash", {"command": "ls", OUTSIDE_OFFERED: True})
    assert decided.allowed and not decided.unconfined and OUTSIDE_OFFERED not in user.asked[0]
    boxed = InteractiveApprover(user, sandboxed=True)
    edit = boxed.decide("write_file", {"path": "a", "content": "x"})
    assert edit.allowed and not edit.unconfined and OUTSIDE_OFFERED not in user.asked[1]


def test_the_prompt_shows_the_o_key_only_when_offered() -> None:
    seen: list[tuple[Key, ...]] = []

    def read(keys: tuple[Key, ...]) -> Key:
        seen.append(keys)
        return "outside" if "outside" in keys else "yes"

    out = StringIO()
    prompt = ApprovalPrompt(lambda: Renderer(Console(file=out, width=100, no_color=True)), read)
    assert (
        prompt.ask("bash", {"command": "ls", OUTSIDE_OFFERED: True}, "bash commands starting with `ls`")
        == "outside"
    )
    assert prompt.ask("bash", {"command": "ls"}, "bash commands starting with `ls`") == "yes"
    assert "outside" in seen[0] and "outside" not in seen[1]
    assert OUTSIDE_OFFERED not in out.getvalue()  # the offer is a key, not an argument shown
