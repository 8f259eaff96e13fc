"""Hostile text on the terminal: escapes, the approval prompt, odd encodings, the REPL's small defects.

Issue "Found from outside", item 1 and the display parts of item 12. Each case is a real `agent`
process in a directory of its own. What a person sees is read from a real terminal: the REPL (or
`agent -p`) runs in tmux on a private socket (`tests/screen.py`), which obeys every escape it is
sent; so a case also asks tmux whether the window title changed (OSC 0/2) and whether a clipboard
write arrived (OSC 52 lands in a tmux buffer with `set-clipboard on`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from agent_cli.testing.fakeserver import FakeModelServer, RecordedRequest, Reply, ToolCallSpec, last_user_text
from tests.e2e import ANTHROPIC_KEY, agent_cmd
from tests.reliability.harness import Case, Outcome, agent, env_for, judge, project_in
from tests.screen import Screen, have_tmux, python_path_env

# A reply that sets the window title, writes the clipboard, clears the screen and sends a C1 CSI.
OSC = "\x1b]0;owned-title\x07\x1b]52;c;cHduZWQ=\x07\x1b[2J\x1b[H\x9b31m"
SPOOF = "rm -f victim.txt \x1b[2K\r? bash ls -la"
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


@dataclass
class Seen:
    """What a run on the terminal left: the screen, the title, tmux's buffers, the exit, the requests."""

    screen: str = ""
    rows: list[str] = field(default_factory=list)
    title: str = ""
    buffers: list[str] = field(default_factory=list)
    status: int | None = None
    exited: bool = False
    requests: list[RecordedRequest] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def obeyed(self) -> list[str]:
        """Escapes the terminal obeyed (it should have been shown them, written out, instead)."""
        found = []
        if "owned" in self.title:
            found.append(f"the window title became {self.title!r}")
        if self.buffers:
            found.append(f"the clipboard was written ({self.buffers[0]!r})")
        return found


def _on_terminal(
    where: Path,
    replies: Sequence[Reply] | Callable[[RecordedRequest], Reply],
    steps: Callable[[Screen, Seen], None],
    *,
    args: Sequence[str] = (),
    env_extra: dict[str, str] | None = None,
    colour: bool = True,
    width: int = 120,
    files: dict[str, str | bytes] | None = None,
) -> Seen:
    """Run `agent ARGS` in tmux against the fake model; `steps` drives it and notes problems."""
    project = project_in(where, "", files)
    seen = Seen()
    server_cm = FakeModelServer(responder=replies) if callable(replies) else FakeModelServer()
    with server_cm as server:
        if not callable(replies):
            server.queue(*replies)
            server.default = Reply("Done.")
        env = env_for(where, server)
        if colour:
            env.pop("NO_COLOR", None)
        env.update(env_extra or {})
        terminal = Screen(agent_cmd(*args), cwd=project, env=python_path_env(env), width=width, height=40)
        with terminal as screen:
            try:
                steps(screen, seen)
            finally:
                seen.exited = screen.wait_exit(90)
                seen.screen, seen.rows = screen.text(), screen.raw_rows()
                seen.title, seen.buffers = screen.title(), screen.buffers()
                seen.status = screen.exit_status()
        seen.requests = list(server.requests)
    if not seen.exited:
        seen.problems.append("the agent did not exit")
    if "Traceback (most recent call last)" in seen.screen:
        seen.problems.append("a traceback on the screen")
    if "internal error" in seen.screen:
        seen.problems.append("an internal error on the screen")
    return seen


def _outcome(seen: Seen, what: str) -> Outcome:
    problems = seen.problems + seen.obeyed()
    if seen.exited and seen.status not in (0, None):
        problems.append(f"exit {seen.status}")
    detail = "; ".join(problems) if problems else what
    traceback = "Traceback (most recent call last)" in seen.screen
    return Outcome(not problems, detail[:300], traceback=traceback, internal="internal error" in seen.screen)


def _expect(screen: Screen, seen: Seen, needle: str, timeout: float = 90) -> bool:
    if screen.wait_for(needle, timeout):
        return True
    seen.problems.append(f"never saw {needle!r}")
    return False


def _leave(screen: Screen) -> None:
    screen.send("/exit", "Enter")


def _no_tmux() -> Outcome:
    return Outcome(False, "tmux is not installed: these cases need a real terminal")


# ---- the approval prompt ----------------------------------------------------------------------


def _approval_spoof(where: Path) -> Outcome:
    """The issue's spoof: the command ends in erase-line + CR + `? bash ls -la`, drawn over the real
    `rm -f victim.txt`. The user must see the whole command, and a "no" must keep the file."""
    if not have_tmux():
        return _no_tmux()

    def steps(screen: Screen, seen: Seen) -> None:
        if _expect(screen, seen, "auto-compact at"):
            screen.send("list the files", "Enter")
            if _expect(screen, seen, "allow?"):
                question = next((r for r in screen.raw_rows() if r.startswith("? bash")), "")
                if "rm -f victim.txt" not in question or "\\x1b[2K" not in question:
                    seen.problems.append(f"the approval line shows {question.strip()!r}")
                screen.send("c")  # no, and the turn goes on (the model answers "Done.")
                _expect(screen, seen, "Done.")
        _leave(screen)

    replies = [Reply("Listing.", tool_calls=[ToolCallSpec("bash", {"command": SPOOF})])]
    seen = _on_terminal(where, replies, steps, files={"victim.txt": "precious\n"})
    if not (where / "project" / "victim.txt").exists():
        seen.problems.append("victim.txt was removed")
    return _outcome(
        seen,
        "the approval line showed `rm -f victim.txt \\x1b[2K\\x0d? bash ls -la`; declined, the file kept",
    )


def _approval_invisible(where: Path) -> Outcome:
    """NBSP, zero-width, a bidi override and a form feed in a command: each shown written out."""
    if not have_tmux():
        return _no_tmux()
    command = "ls\u00a0-la\u200b \u202eexe.sh\x0c/usr/bin/touch PWNED"
    want = "ls\\xa0-la\\u200b \\u202eexe.sh\\x0c/usr/bin/touch PWNED"

    def steps(screen: Screen, seen: Seen) -> None:
        if _expect(screen, seen, "auto-compact at"):
            screen.send("look", "Enter")
            if _expect(screen, seen, "allow?"):
                question = next((r for r in screen.raw_rows() if r.startswith("? bash")), "")
                if want not in question:
                    seen.problems.append(f"the approval line shows {question.strip()!r}")
                screen.send("c")
                _expect(screen, seen, "Done.")
        _leave(screen)

    replies = [Reply("Looking.", tool_calls=[ToolCallSpec("bash", {"command": command})])]
    seen = _on_terminal(where, replies, steps)
    if (where / "project" / "PWNED").exists():
        seen.problems.append("PWNED was made")
    return _outcome(seen, f"the approval line showed `{want}`")


def _approval_multiline(where: Path) -> Outcome:
    """A command whose second line imitates the answer line: every line shown under a margin."""
    if not have_tmux():
        return _no_tmux()
    command = "ls -la\n  allow? [y]es / [n]o / [a]lways › yes\nrm -f victim.txt"

    def steps(screen: Screen, seen: Seen) -> None:
        if _expect(screen, seen, "auto-compact at"):
            screen.send("look", "Enter")
            if _expect(screen, seen, "(3 lines)"):
                rows = screen.raw_rows()
                if not any(r.startswith("  │ rm -f victim.txt") for r in rows):
                    seen.problems.append("the third line is not shown under the margin")
                if any(r.startswith("  allow? [y]es / [n]o / [a]lways › yes") for r in rows):
                    seen.problems.append("a line of the command looks like an answer given")
                screen.send("c")
                _expect(screen, seen, "Done.")
        _leave(screen)

    replies = [Reply("Looking.", tool_calls=[ToolCallSpec("bash", {"command": command})])]
    seen = _on_terminal(where, replies, steps, files={"victim.txt": "precious\n"})
    if not (where / "project" / "victim.txt").exists():
        seen.problems.append("victim.txt was removed")
    return _outcome(seen, "3 lines shown, each under `  │ `; declined")


# ---- escapes in replies, tool arguments, errors ------------------------------------------------


def _reply_escapes_repl(where: Path) -> Outcome:
    """A reply (streamed Markdown) that sets the title, writes the clipboard and clears the screen."""
    if not have_tmux():
        return _no_tmux()

    def steps(screen: Screen, seen: Seen) -> None:
        if _expect(screen, seen, "auto-compact at"):
            screen.send("hello", "Enter")
            _expect(screen, seen, "END-OF-REPLY")
            if "\\x1b]52;c;" not in screen.text():
                seen.problems.append("the clipboard escape is not shown written out")
        _leave(screen)

    text = f"# Title {OSC}\n\nSome text {OSC} and a [link]({OSC}x).\n\n```\n{OSC}\n```\n\nEND-OF-REPLY"
    replies = [Reply(text)]
    seen = _on_terminal(where, replies, steps)
    return _outcome(seen, "title and clipboard untouched; the escapes shown written out")


def _reply_escapes_headless(where: Path) -> Outcome:
    """`agent -p` on a terminal: the answer holds the same escapes."""
    if not have_tmux():
        return _no_tmux()

    def steps(screen: Screen, seen: Seen) -> None:
        if screen.wait_exit(30) and "\\x1b]0;owned-title" not in screen.text():
            seen.problems.append("the answer's escapes are not shown written out")

    seen = _on_terminal(where, [Reply(f"The answer {OSC} END")], steps, args=("-p", "hello"))
    return _outcome(seen, "title and clipboard untouched; the answer shows `\\x1b]0;owned-title\\x07...`")


def _tool_argument_escapes(where: Path) -> Outcome:
    """A tool call whose arguments carry the escapes, run with --yes: its line shows them written out."""
    if not have_tmux():
        return _no_tmux()

    def steps(screen: Screen, seen: Seen) -> None:
        if _expect(screen, seen, "auto-compact at"):
            screen.send("go", "Enter")
            _expect(screen, seen, "Done.")
            if "✓ bash" not in screen.text() or "\\x1b]0;owned-title" not in screen.text():
                seen.problems.append("the tool line does not show the escapes written out")
        _leave(screen)

    calls = [
        ToolCallSpec("bash", {"command": f"echo '{OSC}' > /dev/null"}),
        ToolCallSpec("read_file", {"path": f"no{OSC}such"}),
    ]
    seen = _on_terminal(where, [Reply("Running.", tool_calls=calls)], steps, args=("--yes",))
    return _outcome(seen, "title and clipboard untouched; the tool lines show the escapes written out")


def _todo_escapes(where: Path) -> Outcome:
    """A todo list whose item in progress carries the escapes: the toolbar and /todos show them
    written out (the toolbar's item on one line: its CR too)."""
    if not have_tmux():
        return _no_tmux()

    def steps(screen: Screen, seen: Seen) -> None:
        if _expect(screen, seen, "auto-compact at"):
            screen.send("plan", "Enter")
            _expect(screen, seen, "Done.")
            _expect(screen, seen, "doing: Fix \\x1b]0;owned-title")
            screen.send("/todos", "Enter")
            shown = _expect(screen, seen, "0 of 1 done") and any(
                r.startswith("1. [>] Fix \\x1b]0;owned-title") for r in screen.raw_rows()
            )
            if not shown:
                seen.problems.append("/todos does not show the escapes written out")
        _leave(screen)

    todos = [{"content": f"Fix {OSC} \x1b[2K\rit", "status": "in_progress"}]
    replies = [Reply("Planning.", tool_calls=[ToolCallSpec("todo_write", {"todos": todos})])]
    seen = _on_terminal(where, replies, steps, width=160)
    return _outcome(seen, "title and clipboard untouched; toolbar and /todos show the escapes written out")


def _task_escapes(where: Path) -> Outcome:
    """A sub-agent whose description carries the escapes: its progress line and its /cost row show
    them written out."""
    if not have_tmux():
        return _no_tmux()

    def answer(request: RecordedRequest) -> Reply:
        messages = request.body.get("messages", [])
        first = json.dumps(messages[:1])
        if "CHILD-OF-ESCAPES" in first:
            if len(messages) == 1:
                return Reply("Waiting.", tool_calls=[ToolCallSpec("bash", {"command": "sleep 2.5"})])
            return Reply("child report")
        if len(messages) == 1:
            task = {"description": f"Scan {OSC} \x1b[2K\rit", "prompt": "CHILD-OF-ESCAPES wait"}
            return Reply("Delegating.", tool_calls=[ToolCallSpec("task", task)])
        return Reply("Done.")

    def steps(screen: Screen, seen: Seen) -> None:
        if _expect(screen, seen, "auto-compact at"):
            screen.send("go", "Enter")
            _expect(screen, seen, "Scan \\x1b]0;owned-title")  # the progress line, while the child runs
            _expect(screen, seen, "Done.")
            screen.send("/cost", "Enter")
            _expect(screen, seen, "task1 Scan \\x1b]0;owned-")
        _leave(screen)

    seen = _on_terminal(where, answer, steps, args=("--yes",), width=160)
    return _outcome(
        seen, "title and clipboard untouched; the progress line and /cost show the escapes written out"
    )


def _bash_error_escapes(where: Path) -> Outcome:
    """A command that fails after printing the escapes: the first error line shows them written out."""
    if not have_tmux():
        return _no_tmux()
    command = "printf '\\033]0;owned-title\\007\\033]52;c;cHduZWQ=\\007 boom\\n' >&2; exit 3"

    def steps(screen: Screen, seen: Seen) -> None:
        if _expect(screen, seen, "auto-compact at"):
            screen.send("go", "Enter")
            _expect(screen, seen, "Done.")
            if "✗ bash" not in screen.text():
                seen.problems.append("no failed tool line")
        _leave(screen)

    seen = _on_terminal(
        where,
        [Reply("Running.", tool_calls=[ToolCallSpec("bash", {"command": command})])],
        steps,
        args=("--yes",),
    )
    return _outcome(seen, "the error line shown, title and clipboard untouched")


def _command_output_escapes(where: Path) -> Outcome:
    """A command whose first lines carry the escapes (shown under it after it ends), and an approved
    call whose command holds NBSP and zero-width characters: both written out, as the question does."""
    if not have_tmux():
        return _no_tmux()
    command = "printf '\\033]0;owned-title\\007\\033]52;c;cHduZWQ=\\007 first\\n'; echo\u00a0two\u200b"

    def steps(screen: Screen, seen: Seen) -> None:
        if _expect(screen, seen, "auto-compact at"):
            screen.send("go", "Enter")
            _expect(screen, seen, "Done.")
            rows = screen.raw_rows()
            if not any(r.startswith("  │ ") and "\\x1b]0;owned-title" in r for r in rows):
                seen.problems.append("the command's first lines do not show the escapes written out")
            line = next((r for r in rows if r.startswith(("✓ bash", "✗ bash"))), "")
            if "echo\\xa0two\\u200b" not in line:
                seen.problems.append(f"the tool line shows {line.strip()!r}")
        _leave(screen)

    seen = _on_terminal(
        where,
        [Reply("Running.", tool_calls=[ToolCallSpec("bash", {"command": command})])],
        steps,
        args=("--yes",),
    )
    return _outcome(seen, "title and clipboard untouched; the first lines and the tool line write them out")


def _transcripts_views(where: Path) -> Outcome:
    """`agent transcripts list|show|search` of a session whose prompt, reply, tool call and result
    hold the escapes: none is written raw."""
    project = project_in(where, "")
    with FakeModelServer() as server:
        server.queue(
            Reply(f"Running {OSC}", tool_calls=[ToolCallSpec("bash", {"command": f"echo '{OSC}'; exit 1"})]),
            Reply(f"Done {OSC} MARKER"),
        )
        env = env_for(where, server)
        first = agent(["-p", f"go {OSC}", "--yes"], project, env)
    if first.returncode != 0:
        return judge(first, {"finished"})
    session = next(p.name for p in (project / ".transcripts").iterdir() if p.is_dir())
    problems = []
    for args in (["list"], ["show", session], ["search", "MARKER"], ["search", "Running"]):
        done = agent(["transcripts", *args], project, env)
        shown = done.stdout.decode("utf-8", "replace")
        raw = sorted({repr(c) for c in RAW.findall(shown)})
        if done.returncode != 0 or raw:
            problems.append(f"{' '.join(args[:1])}: exit {done.returncode}, raw {raw}")
        outcome = judge(done, {"finished"})
        if not outcome.ok:
            return outcome
    return Outcome(not problems, "; ".join(problems) or "list, show and 2 searches: escapes written out")


def _json_output(where: Path) -> Outcome:
    """stream-json and json: C0 escaped by JSON; C1 controls and bidi overrides escaped too."""
    project = project_in(where, "")
    problems = []
    for fmt in ("json", "stream-json"):
        with FakeModelServer() as server:
            server.queue(Reply(f"x {OSC} \u202e y"))
            done = agent(["-p", "go", "--output-format", fmt], project, env_for(where, server))
        text = done.stdout.decode()
        raw = sorted({repr(c) for c in RAW.findall(text)})
        values = [json.loads(line) for line in text.splitlines()]
        if raw or not any(v.get("text") == f"x {OSC} \u202e y" for v in values):
            problems.append(f"{fmt}: raw {raw}")
        if not judge(done, {"finished"}).ok:
            return judge(done, {"finished"})
    return Outcome(not problems, "; ".join(problems) or "json and stream-json: no raw control, same values")


# ---- encodings ----------------------------------------------------------------------------------


def _ascii_repl(where: Path) -> Outcome:
    """PYTHONIOENCODING=ascii: the REPL answers with ASCII stand-ins, no traceback."""
    if not have_tmux():
        return _no_tmux()

    def steps(screen: Screen, seen: Seen) -> None:
        if _expect(screen, seen, "auto-compact at"):
            screen.send("hello", "Enter")
            _expect(screen, seen, "caf? -> ok")
            if ":. Looking at the request." not in screen.text():
                seen.problems.append("no ASCII thinking line")
        _leave(screen)

    seen = _on_terminal(where, [Reply("Done + café → ok")], steps, env_extra={"PYTHONIOENCODING": "ascii"})
    return _outcome(seen, "answer shown as `Done + caf? -> ok`, thinking as `:. ...`")


def _ascii_headless(where: Path) -> Outcome:
    """PYTHONIOENCODING=ascii and latin-1 with -p: the answer is printed, what cannot be encoded replaced."""
    project = project_in(where, "")
    seen = []
    for encoding, want in (("ascii", "Done + -- caf? -> ok"), ("latin-1", "Done + -- café -> ok")):
        with FakeModelServer() as server:
            server.queue(Reply("Done ✓ — café → ok"))
            env = env_for(where, server) | {"PYTHONIOENCODING": encoding}
            done = agent(["-p", "go"], project, env)
        got = done.stdout.decode(encoding, "replace").strip()
        outcome = judge(done, {"finished"}, check="" if got == want else f"{encoding}: printed {got!r}")
        if not outcome.ok:
            return outcome
        seen.append(f"{encoding}: {got!r}")
    return Outcome(True, "; ".join(seen))


# ---- the REPL's small defects --------------------------------------------------------------------


def _thinking_order(where: Path, colour: bool) -> Outcome:
    """The thinking line comes before the answer it preceded; with NO_COLOR on a line of its own."""
    if not have_tmux():
        return _no_tmux()

    def steps(screen: Screen, seen: Seen) -> None:
        if _expect(screen, seen, "auto-compact at"):
            screen.send("hello", "Enter")
            if _expect(screen, seen, "ANSWER-LAST-LINE"):
                rows = screen.text().split("\n")
                thought = next((i for i, r in enumerate(rows) if r.startswith("∴ I weigh the")), None)
                answer = next((i for i, r in enumerate(rows) if "ANSWER-FIRST-LINE" in r), None)
                if thought is None or answer is None or thought > answer:
                    seen.problems.append(f"thinking at row {thought}, answer at row {answer}")
                if any("ANSWER-LAST-LINE∴" in r or "ANSWER-LAST-LINE ∴" in r for r in rows):
                    seen.problems.append("the thinking line is glued to the answer")
        _leave(screen)

    reply = Reply("ANSWER-FIRST-LINE\n\nANSWER-LAST-LINE", thinking="I weigh the question first.")
    seen = _on_terminal(where, [reply], steps, colour=colour)
    return _outcome(seen, "`∴ I weigh the question first.` above the answer, on its own line")


def _piped_stdin(where: Path) -> Outcome:
    """`cat log | agent -p "explain"`: the prompt, then the piped text in a <stdin> block."""
    project = project_in(where, "")
    with FakeModelServer() as server:
        server.queue(Reply("It failed on line 2."))
        env = env_for(where, server)
        done = agent(["-p", "explain this log"], project, env, stdin=b"line 1\nline 2: boom\n")
        sent = last_user_text(server.requests[0]) if server.requests else ""
    want = "explain this log\n\n<stdin>\nline 1\nline 2: boom\n</stdin>"
    return judge(done, {"finished"}, check="" if sent == want else f"the model got {sent!r}")


def _model_other_provider(where: Path) -> Outcome:
    """/model gpt-4.1 in an Anthropic session: refused in one line saying how; the next turn still
    goes to the session's model."""
    if not have_tmux():
        return _no_tmux()

    def steps(screen: Screen, seen: Seen) -> None:
        if _expect(screen, seen, "auto-compact at"):
            screen.send("/model gpt-4.1", "Enter")
            # The line wraps at its words: read it with the wrap undone.
            if _expect(screen, seen, "restart with:"):
                how = "restart with: agent --provider openai --model gpt-4.1"
                if how not in " ".join(screen.text().split()):
                    seen.problems.append(f"never saw {how!r}")
            screen.send("hello", "Enter")
            _expect(screen, seen, "Done.")
        _leave(screen)

    seen = _on_terminal(where, [], steps)
    models = [r.body.get("model") for r in seen.requests]
    if not models or any(m == "gpt-4.1" for m in models):
        seen.problems.append(f"requests went to {models}")
    return _outcome(seen, f"refused with how to switch; the next request went to {models[-1:]}")


def _history_key(where: Path) -> Outcome:
    """A prompt holding the API key: the REPL's history file holds it redacted (the sweep checks every
    file under the case's directory as well)."""
    if not have_tmux():
        return _no_tmux()

    def steps(screen: Screen, seen: Seen) -> None:
        if _expect(screen, seen, "auto-compact at"):
            screen.send(f"use the key {ANTHROPIC_KEY} for the tests", "Enter")
            _expect(screen, seen, "Done.")
        _leave(screen)

    seen = _on_terminal(where, [], steps)
    history = where / "home" / ".state" / "agent-cli" / "history"
    stored = history.read_text() if history.exists() else ""
    if "use the key [REDACTED] for the tests" not in stored or ANTHROPIC_KEY[:16] in stored:
        seen.problems.append(f"the history holds {stored.strip()[-80:]!r}")
    return _outcome(seen, "the history holds `use the key [REDACTED] for the tests`")


def _resume_line(where: Path) -> Outcome:
    """At 80 columns the exit line's `agent --resume ID` is on one row, whole."""
    if not have_tmux():
        return _no_tmux()

    def steps(screen: Screen, seen: Seen) -> None:
        if _expect(screen, seen, "auto-compact at"):
            screen.send("C-d")

    seen = _on_terminal(where, [], steps, width=80)
    row = next((r.rstrip() for r in seen.rows if "agent --resume" in r), "")
    if not re.search(r"agent --resume \d{8}-\d{6}-[0-9a-f]{6}$", row):
        seen.problems.append(f"the row reads {row!r}")
    return _outcome(seen, f"one row: {row.strip()!r}")


def cases() -> list[Case]:
    spoof = "approval: `\\x1b[2K\\r? bash ls -la` over `rm -f victim.txt` (REPL in tmux)"
    found: list[tuple[str, Callable[[Path], Outcome], bool]] = [
        (spoof, _approval_spoof, True),
        ("approval: NBSP, zero-width, bidi override, form feed written out", _approval_invisible, False),
        ("approval: a multi-line command imitating the answer line", _approval_multiline, False),
        ("a reply with OSC 0/52, clear-screen, C1 CSI, Markdown (REPL in tmux)", _reply_escapes_repl, False),
        ("a reply with OSC 0/52, clear-screen, C1 CSI (-p on a terminal)", _reply_escapes_headless, False),
        ("tool arguments with OSC escapes (REPL, --yes)", _tool_argument_escapes, False),
        ("a bash error line with OSC escapes (REPL, --yes)", _bash_error_escapes, False),
        ("a todo item with OSC escapes: the toolbar and /todos (REPL)", _todo_escapes, False),
        (
            "a sub-agent's description with OSC escapes: its progress line and /cost (REPL)",
            _task_escapes,
            False,
        ),
        (
            "a command's first lines and its line with escapes, NBSP (REPL, --yes)",
            _command_output_escapes,
            False,
        ),
        ("agent transcripts list/show/search of a session holding escapes", _transcripts_views, True),
        ("json and stream-json carry no raw C1 control or bidi override", _json_output, False),
        ("PYTHONIOENCODING=ascii: the REPL answers", _ascii_repl, False),
        ("PYTHONIOENCODING=ascii and latin-1: -p keeps the answer", _ascii_headless, False),
        ("the thinking line before the answer it preceded", lambda w: _thinking_order(w, True), False),
        ("the thinking line on its own line with NO_COLOR", lambda w: _thinking_order(w, False), False),
        ("piped stdin next to -p is context in a <stdin> block", _piped_stdin, True),
        ("/model gpt-4.1 in an Anthropic session is refused, saying how", _model_other_provider, False),
        ("a prompt holding the API key is stored redacted in the REPL history", _history_key, False),
        ("`agent --resume ID` is not wrapped mid-id at 80 columns", _resume_line, False),
    ]
    return [Case("terminal", name, run, sample=sample) for name, run, sample in found]
