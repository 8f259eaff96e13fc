"""What the headless printer, `agent transcripts` and an ASCII stdout show of hostile text.

`agent -p` prints the answer made safe when stdout is a terminal and as it is when piped (it is
data there); stderr lines are always safe; JSON carries no raw control character of any kind.
`agent transcripts list|show|search` of a session holding escapes writes none. A stdout that
cannot encode the answer replaces what it cannot hold instead of losing the answer.
"""

from __future__ import annotations

import io
import json
import re
import subprocess
from pathlib import Path

from agent_cli.core.events import ErrorEvent, ResultEvent, ThinkingText, ToolCallEvent, WarningEvent
from agent_cli.testing.fakeserver import FakeModelServer, Reply, ToolCallSpec
from agent_cli.ui.headless import render_headless
from tests.e2e import agent_cmd, agent_env

HOSTILE = "\x1b]52;c;cHduZWQ=\x07\x1b]0;owned\x07\x1b[2J\x9b31m\u202e"
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def _run(out: io.StringIO, err: io.StringIO, fmt: str = "text") -> None:
    events = [
        WarningEvent(message=f"config says {HOSTILE}"),
        ThinkingText(text=f"hmm {HOSTILE}"),
        ToolCallEvent(id="t", name="bash", input={"command": f"echo {HOSTILE}"}),
        ErrorEvent(message=f"HTTP 500: {HOSTILE}", kind="ProviderError"),
        ResultEvent(text=f"The answer {HOSTILE}\r\nend", stop="end_turn", iterations=1),
    ]
    render_headless(events, fmt, out=out, err=err)  # type: ignore[arg-type]  # fmt is one of the three


def test_the_answer_on_a_terminal_is_made_safe_and_stderr_always_is() -> None:
    out, err = Tty(), Tty()
    _run(out, err)
    assert RAW.findall(out.getvalue()) == [] and RAW.findall(err.getvalue()) == []
    shown = "The answer \\x1b]52;c;cHduZWQ=\\x07\\x1b]0;owned\\x07\\x1b[2J\\x9b31m\\u202e\nend\n"
    assert out.getvalue() == shown
    assert "\\x1b]0;owned" in err.getvalue()  # the progress lines show it, written out


def test_a_piped_answer_is_the_models_text_as_it_is() -> None:
    """Piped, the answer is data (`agent -p 'write the script' > run.sh`): byte for byte what the model
    wrote. Only the human lines on stderr are made safe."""
    out, err = io.StringIO(), io.StringIO()
    _run(out, err)
    assert out.getvalue() == f"The answer {HOSTILE}\r\nend\n"
    assert RAW.findall(err.getvalue()) == []


def test_json_and_stream_json_carry_no_raw_control_character() -> None:
    for fmt in ("json", "stream-json"):
        out = io.StringIO()
        _run(out, io.StringIO(), fmt)
        assert RAW.findall(out.getvalue()) == [], fmt
        lines = [json.loads(line) for line in out.getvalue().splitlines()]
        assert any(f"The answer {HOSTILE}\r\nend" == line.get("text") for line in lines), fmt  # same values


# ---- real processes ------------------------------------------------------------------------------


def _session_with_escapes(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    project = tmp_path / "project"
    project.mkdir()
    with FakeModelServer() as server:
        server.queue(
            Reply(
                f"Running {HOSTILE}",
                tool_calls=[ToolCallSpec("bash", {"command": f"echo '{HOSTILE}'; exit 3"})],
            ),
            Reply(f"Done {HOSTILE} with MARKER"),
        )
        env = agent_env(tmp_path / "home", server)
        done = subprocess.run(
            agent_cmd("-p", "go", "--yes"), cwd=project, env=env, capture_output=True, timeout=60
        )
    assert done.returncode == 0, done.stderr
    return project, env


def test_transcripts_list_show_and_search_write_no_escape(tmp_path: Path) -> None:
    project, env = _session_with_escapes(tmp_path)
    session = next(p for p in (project / ".transcripts").iterdir() if p.is_dir()).name
    for args in (["list"], ["show", session], ["search", "MARKER"], ["search", "Running"]):
        done = subprocess.run(
            agent_cmd("transcripts", *args), cwd=project, env=env, capture_output=True, timeout=60
        )
        shown = done.stdout.decode()
        assert done.returncode == 0, (args, done.stderr)
        assert RAW.findall(shown) == [], args
        assert "\\x1b]52;c;" in shown or args == ["list"], args


def test_an_ascii_stdout_keeps_the_answer(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    for encoding in ("ascii", "latin-1"):
        with FakeModelServer() as server:
            server.queue(Reply("Done ✓ — café → ok"))
            env = agent_env(tmp_path / "home", server) | {"PYTHONIOENCODING": encoding}
            done = subprocess.run(
                agent_cmd("-p", "go"), cwd=project, env=env, capture_output=True, timeout=60
            )
        assert done.returncode == 0, done.stderr
        want = "Done + -- caf? -> ok\n" if encoding == "ascii" else "Done + -- café -> ok\n"
        assert done.stdout.decode(encoding) == want
