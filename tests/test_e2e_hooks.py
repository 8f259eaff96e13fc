"""The user's hooks end to end: `agent -p` with real hook scripts, the real SDKs, the fake server."""

from __future__ import annotations

import json
import shlex
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from agent_cli.hooks_user.config import HookSpec
from agent_cli.hooks_user.trust import approval_name
from agent_cli.store.project_approvals import ProjectApprovals
from agent_cli.testing.fakeserver import FakeModelServer, RecordedRequest, Reply, ToolCallSpec
from agent_cli.testing.summary_shape import is_summary_request
from tests.e2e import agent_env, run_agent, stream_events, tool_results

pytestmark = pytest.mark.e2e

# Prints its stdin's JSON object as one line at the end of the file named by its argument.
DUMP = """\
import json, sys
data = json.load(sys.stdin)
with open(sys.argv[1], "a", encoding="utf-8") as out:
    out.write(json.dumps(data, ensure_ascii=False) + "\\n")
"""
# A record with what a careless layer would touch: spaces at line ends, a tab, a lone CR, emoji,
# an escape character, a Markdown heading. Nothing at its two ends (the engine strips a reply).
RECORD = "## Goal\nKeep  two spaces   \n\tand a tab\r, é ✓ 🧪 \x1b[2K done\n## Files\n- a.txt  "
RECORD = RECORD.rstrip()
EXTRA = "Keep every PARSER-NOTE verbatim ✓."


@pytest.fixture
def project(tmp_path: Path) -> Path:
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "a.txt").write_text("alpha line\nbeta line\n")
    return proj


@pytest.fixture
def home(tmp_path: Path) -> Path:
    h = tmp_path / "home"
    h.mkdir()
    return h


def dump_command(tmp_path: Path, log: Path) -> str:
    script = tmp_path / "dump.py"
    script.write_text(DUMP)
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(script))} {shlex.quote(str(log))}"


def write_config(path: Path, hooks: list[tuple[str, dict[str, Any]]]) -> Path:
    lines = []
    for event, entry in hooks:
        lines.append(f"[[hooks.{event}]]")
        lines += [f"{key} = {json.dumps(value)}" for key, value in entry.items()]
        lines.append("")
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def read_log(log: Path) -> list[dict[str, Any]]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


def test_a_pretooluse_hook_that_exits_2_stops_bash_and_the_model_reads_why(
    tmp_path: Path, project: Path, home: Path
) -> None:
    log = tmp_path / "hook.jsonl"
    (project / "keep").mkdir()
    command = dump_command(tmp_path, log) + " && echo 'policy: nothing is removed here' >&2 && exit 2"
    config = write_config(tmp_path / "hooks.toml", [("PreToolUse", {"matcher": "bash", "command": command})])
    with FakeModelServer() as server:
        server.queue(
            Reply(tool_calls=[ToolCallSpec("bash", {"command": "rm -rf keep"}, id="toolu_rm")]),
            Reply("I will not remove it."),
        )
        r = run_agent(
            ["-p", "remove keep/", "--yes", "--config", str(config), "--output-format", "stream-json"],
            project,
            agent_env(home, server),
        )
        requests = server.requests
    assert r.returncode == 0, r.stderr
    assert (project / "keep").is_dir(), "the blocked command did not run"
    text, is_error = tool_results(requests)["toolu_rm"]
    assert is_error and "policy: nothing is removed here" in text
    (seen,) = read_log(log)
    assert seen["event"] == seen["hook_event_name"] == "PreToolUse"
    assert seen["tool_name"] == "bash" and seen["tool_input"] == {"command": "rm -rf keep"}
    assert seen["cwd"] == str(project)
    result = stream_events(r.stdout)[-1]
    assert seen["session_id"] == result["session_id"]
    assert Path(seen["transcript_path"]).is_file()


def test_precompact_context_reaches_the_summary_and_postcompact_gets_the_record_byte_for_byte(
    tmp_path: Path, project: Path, home: Path
) -> None:
    log = tmp_path / "hook.jsonl"
    dump = dump_command(tmp_path, log)
    answer = json.dumps({"additionalContext": EXTRA}, ensure_ascii=False)
    hooks = [
        ("PreCompact", {"command": f"{dump} && printf '%s' {shlex.quote(answer)}"}),
        ("PostCompact", {"command": dump}),
    ]
    config = write_config(tmp_path / "hooks.toml", hooks)
    step = {"n": 0}

    def answer_request(request: RecordedRequest) -> Reply:
        if is_summary_request(request.body):
            return Reply(RECORD)
        step["n"] += 1
        if step["n"] == 1:
            return Reply("Reading it.", tool_calls=[ToolCallSpec("read_file", {"path": "a.txt"})])
        if step["n"] == 2:
            return Reply(tool_calls=[ToolCallSpec("compact", {"focus": "the parser"})])
        return Reply("Done.")

    with FakeModelServer() as server:
        server.responder = answer_request
        r = run_agent(
            [
                "-p",
                "read a.txt, then compact",
                "--yes",
                "--config",
                str(config),
                "--output-format",
                "stream-json",
            ],
            project,
            agent_env(home, server),
        )
        requests = server.requests
    assert r.returncode == 0, r.stderr
    summaries = [q for q in requests if is_summary_request(q.body)]
    assert len(summaries) == 1
    last = summaries[0].body["messages"][-1]["content"][-1]["text"]
    assert last.endswith("\n\n" + EXTRA), last[-300:]
    pre, post = read_log(log)
    assert pre["event"] == "PreCompact" and pre["trigger"] == "manual" and pre["focus"] == "the parser"
    assert pre["layer"] == "manual"
    assert post["event"] == "PostCompact" and post["layer"] == "manual"
    record = post["record"]
    assert RECORD in record  # the model's text, byte for byte, under the record's header
    compact = next(e for e in stream_events(r.stdout) if e["type"] == "compact" and e["layer"] == "manual")
    assert record == compact["summary"]
    # ... and exactly the record the model reads from then on, in the next request.
    after = requests[requests.index(summaries[0]) + 1].body["messages"]
    sent = [b["text"] for m in after if m["role"] == "user" for b in m["content"] if b.get("type") == "text"]
    assert record in sent
    assert (
        post["tokens_before"] == compact["tokens_before"] and post["tokens_after"] == compact["tokens_after"]
    )
    archived = Path(post["archived"])
    assert archived.is_absolute() and archived.is_file() and "alpha line" in archived.read_text()


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def test_a_hook_that_hangs_is_cut_at_its_timeout_with_its_whole_group(
    tmp_path: Path, project: Path, home: Path
) -> None:
    pids = tmp_path / "pids"
    command = f"sleep 300 & echo $! >> {pids}; echo $$ >> {pids}; sleep 300"
    # A timeout of 3 s: time for the shell to write both pids on a busy machine.
    config = write_config(tmp_path / "hooks.toml", [("PreToolUse", {"command": command, "timeout": 3})])
    with FakeModelServer() as server:
        server.queue(
            Reply(tool_calls=[ToolCallSpec("bash", {"command": "echo ran-anyway"}, id="toolu_1")]),
            Reply("ok"),
        )
        started = time.monotonic()
        r = run_agent(["-p", "go", "--yes", "--config", str(config)], project, agent_env(home, server))
        took = time.monotonic() - started
        requests = server.requests
    assert r.returncode == 0, r.stderr
    assert took < 120  # cut at its timeout, not run for its 300 s
    assert "timed out after 3 s" in r.stderr and "Traceback" not in r.stderr
    assert "ran-anyway" in tool_results(requests)["toolu_1"][0], "the agent went on"
    found = [int(p) for p in pids.read_text().split()]
    assert len(found) == 2
    deadline = time.monotonic() + 60
    while any(_alive(p) for p in found) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_alive(p) for p in found), "no orphan left"


def test_project_hooks_run_headless_only_once_approved(tmp_path: Path, project: Path, home: Path) -> None:
    marker = project / "started.txt"
    command = f"echo started >> {marker}"
    config = project / ".agent" / "config.toml"
    config.parent.mkdir()
    write_config(config, [("SessionStart", {"command": command})])
    env = agent_env(home)

    def run() -> Any:
        with FakeModelServer() as server:
            server.queue(Reply("hi"))
            return run_agent(["-p", "hi"], project, agent_env(home, server))

    first = run()
    assert first.returncode == 0, first.stderr
    assert not marker.exists(), "an unapproved project hook does not run"
    assert "not approved" in first.stderr and "--yes" in first.stderr
    spec = HookSpec("SessionStart", command, project=True)
    ProjectApprovals.for_user(env, project).approve("hook", approval_name(spec), spec.definition())
    second = run()
    assert second.returncode == 0, second.stderr
    assert marker.read_text() == "started\n"
    assert "not approved" not in second.stderr
    config.write_text(config.read_text().replace("started", "changed"))
    third = run()
    assert "not approved" in third.stderr, "a changed hook asks again"
    assert marker.read_text() == "started\n"


def test_a_bad_hook_config_is_one_line_and_exit_2(tmp_path: Path, project: Path, home: Path) -> None:
    config = tmp_path / "hooks.toml"
    config.write_text('[[hooks.PreToolUs]]\ncommand = "./x.sh"\n')
    r = run_agent(["-p", "hi", "--config", str(config)], project, agent_env(home))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    (line,) = r.stderr.strip().splitlines()
    assert f"{config}:1" in line and "did you mean PreToolUse?" in line


def test_stop_and_session_end_fire_headless_and_their_output_stays_off_stdout(
    tmp_path: Path, project: Path, home: Path
) -> None:
    log = tmp_path / "hook.jsonl"
    dump = dump_command(tmp_path, log)
    hooks = [
        ("Stop", {"command": f"{dump} && echo stop-said"}),
        ("SessionEnd", {"command": f"{dump} && echo bye"}),
    ]
    config = write_config(tmp_path / "hooks.toml", hooks)
    with FakeModelServer() as server:
        server.queue(Reply("The answer."))
        r = run_agent(
            ["-p", "hi", "--config", str(config), "--output-format", "stream-json"],
            project,
            agent_env(home, server),
        )
    assert r.returncode == 0, r.stderr
    events = stream_events(r.stdout)
    assert events[-1]["type"] == "result"
    assert {"type": "hook_output", "hook": "Stop", "text": "stop-said"} in events
    assert "agent: SessionEnd hook: bye" in r.stderr and "bye" not in r.stdout
    stop, end = read_log(log)
    assert stop["event"] == "Stop" and stop["reply"] == "The answer."
    assert end["event"] == "SessionEnd" and end["session_id"] == events[-1]["session_id"]
