"""Slash commands: parsing and hints (pure), completion, and each command run by the Repl on a real session.

The Repl runs on a real session from `app.open_session` (engine, session log,
tools in a temp project) with a scripted provider in place of the network, and
renders into a StringIO console.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from io import StringIO
from pathlib import Path
from typing import cast

import pytest
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document
from rich.console import Console

from agent_cli.app import open_session
from agent_cli.config.load import Flags, load_settings
from agent_cli.config.settings import ProviderSettings
from agent_cli.core.messages import Message, Usage
from agent_cli.core.requests import Completion, Request
from agent_cli.session import AgentSession
from agent_cli.store.redact import Redactor
from agent_cli.store.session_log import SessionLog
from agent_cli.store.sessions import SessionInfo
from agent_cli.testing.scripted import ScriptedProvider, call, say
from agent_cli.tools.registry import default_tools
from agent_cli.ui.approval import ApprovalPrompt, Key
from agent_cli.ui.commands import SlashCommand, closest, parse
from agent_cli.ui.completion import PathAndCommandCompleter
from agent_cli.ui.picker import ListView
from agent_cli.ui.render import Renderer
from agent_cli.ui.repl import Repl
from agent_cli.ui.reports import (
    context_report,
    cost_rows,
    describe_call,
    format_tokens,
    model_choices,
    resume_lines,
    session_rows,
)
from agent_cli.ui.toolbar import Toolbar

# ---- parsing and hints ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("/help", SlashCommand("help")),
        ("  /compact   keep the parser work  ", SlashCommand("compact", "keep the parser work")),
        ("/MODEL gpt-4.1", SlashCommand("model", "gpt-4.1")),
        ("/quit", SlashCommand("exit")),
        ("/hlep", SlashCommand("hlep", "", known=False)),
        ("/etc/hosts: what is this file?", None),  # a path, not a command
        ("hello /help", None),
        ("/", None),
        ("", None),
    ],
)
def test_parse(line: str, expected: SlashCommand | None) -> None:
    assert parse(line) == expected


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("hlep", "help"),
        ("comp", "compact"),
        ("contxt", "context"),
        ("exti", "exit"),
        ("res", "resume"),
        ("xyzzy", None),
    ],
)
def test_closest(name: str, expected: str | None) -> None:
    assert closest(name) == expected


@pytest.mark.parametrize(
    ("name", "args", "expected"),
    [
        ("read_file", {"path": "a.py", "offset": 10, "limit": 5}, "a.py:10+5"),
        ("bash", {"command": "ls   -la\nsrc"}, "ls -la src"),
        ("recall", {"query": "stack trace"}, '"stack trace"'),
        ("edit_file", {"path": "b.py", "old_string": "x", "new_string": "y"}, "b.py"),
        ("custom", {"n": 3, "what": "thing"}, "thing"),
        ("custom", {"n": 3}, ""),
        ("bash", {"command": "x" * 30}, "x" * 19 + "…"),
    ],
)
def test_describe_call(name: str, args: dict[str, object], expected: str) -> None:
    assert describe_call(default_tools().view(name), args, width=20) == expected


@pytest.mark.parametrize(
    ("n", "text"), [(900, "900"), (1_500, "1.5k"), (153_600, "153k"), (1_047_576, "1.0M")]
)
def test_format_tokens(n: int, text: str) -> None:
    assert format_tokens(n) == text


def test_cost_rows_one_model_has_no_total() -> None:
    rows = cost_rows([("gpt-4.1", Usage(1_000_000, 0))])
    assert [(r.model, r.dollars) for r in rows] == [("gpt-4.1", 2.0)]


def test_cost_rows_price_each_call_at_its_own_tier() -> None:
    # Haiku 5.5: $0.10 / MTok up to 100k input tokens, $0.50 above, for the whole request.
    short = Usage(input_tokens=60_000)
    long = Usage(input_tokens=150_000)
    rows = cost_rows([("claude-haiku-5-5", short), ("claude-haiku-5-5", short), ("claude-haiku-5-5", long)])
    assert rows[0].usage.input_tokens == 270_000
    assert rows[0].dollars == pytest.approx((60_000 * 0.10 * 2 + 150_000 * 0.50) / 1e6)


@pytest.mark.parametrize(
    ("used", "auto", "note"),
    [
        (50_000, True, "auto-compaction fires at 100,000 tokens (80% of the budget), 50,000 from here"),
        (120_000, True, "auto-compaction is due: the next request compacts (trigger 100,000 tokens)"),
        (50_000, False, "auto-compaction is off after repeated failures"),
    ],
)
def test_context_note(used: int, auto: bool, note: str) -> None:
    report = context_report(
        "m", [("messages", used)], window=200_000, trigger_at=100_000, trigger_ratio=0.8, auto_compact=auto
    )
    assert report.note == note + "; /compact [focus] runs it now"
    assert report.rows[-1].name == "free" and report.rows[-1].tokens == 200_000 - used


def test_session_rows_mark_the_current_one() -> None:
    when = datetime(2025, 1, 2, 3, 4, tzinfo=UTC)
    infos = [
        SessionInfo("s2", when, when, 12, "gpt-4.1", "fix the parser " * 10),
        SessionInfo("s1", when, when, 3, "", ""),
    ]
    rows = session_rows(infos, current="s1")
    assert rows[0].startswith("  s2  ") and "  12 msgs  gpt-4.1" in rows[0] and rows[0].endswith("…")
    assert rows[1].startswith("* s1  ") and " ? " in rows[1]
    assert len(rows[0]) < 100


def test_session_rows_fit_the_width_and_skip_empty_sessions() -> None:
    when = datetime(2025, 1, 2, 3, 4, tzinfo=UTC)
    infos = [
        SessionInfo("s3", when, when, 0, "gpt-4.1", ""),  # opened and left: nothing to resume
        SessionInfo("s2", when, when, 2, "gpt-4.1", "line one\nline two " + "x" * 80),
        SessionInfo("s1", when, when, 0, "gpt-4.1", ""),
    ]  # the current one shows even when empty
    rows = session_rows(infos, current="s1", width=80)
    assert [r[2:4] for r in rows] == ["s2", "s1"]
    assert "line one line two x" in rows[0] and len(rows[0]) == 79 and rows[0].endswith("…")


# ---- completion ------------------------------------------------------------------------


def complete(completer: PathAndCommandCompleter, text: str) -> list[str]:
    found = completer.get_completions(Document(text), CompleteEvent(completion_requested=True))
    return [c.text for c in found]


def test_completion(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("")
    (tmp_path / "src" / "api.py").write_text("")
    (tmp_path / ".env").write_text("")
    (tmp_path / "setup.cfg").write_text("")
    c = PathAndCommandCompleter(tmp_path, lambda: ["20250101-000000-abcdef"])
    assert complete(c, "/co") == ["/compact", "/context", "/cost", "/copy"]
    assert complete(c, "/model gpt-4.1-n") == ["gpt-4.1-nano"]
    assert complete(c, "/resume 2025") == ["20250101-000000-abcdef"]
    assert complete(c, "look at @s") == ["setup.cfg", "src/"]
    assert complete(c, "look at @src/ap") == ["api.py", "app.py"]
    assert complete(c, "look at @") == ["setup.cfg", "src/"]  # hidden files only when asked
    assert complete(c, "look at @.e") == [".env"]
    assert complete(c, "open src/a") == ["api.py", "app.py"]
    assert complete(c, "open src") == []  # a plain word is not a path
    assert complete(c, "@missing/x") == []


# ---- the Repl on a real session ------------------------------------------------------


class Harness:
    """A Repl on a real build with a scripted provider, fed lines (or Ctrl-C / Ctrl-D) from a list."""

    def __init__(
        self,
        tmp_path: Path,
        script: list[Completion | Callable[[Request], Completion]],
        answers: list[Key | tuple[Key, str]] | None = None,
        context_window: int | None = None,
        summary_model: str | None = None,
        picks: list[int | Callable[[Sequence[str]], int] | None] | None = None,
    ) -> None:
        env = {"ANTHROPIC_API_KEY": "k", "HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state")}
        project = tmp_path / "project"
        project.mkdir(parents=True)
        flags = Flags(model="claude-sonnet-4-5", context_window=context_window, summary_model=summary_model)
        settings = load_settings(config_path=None, env=env, flags=flags, cwd=project)
        self.provider = ScriptedProvider(list(script))
        # Providers made later (/model NAME) answer once, naming their model.
        self.made: list[ScriptedProvider] = []
        self.out = StringIO()
        self.renderer = Renderer(Console(file=self.out, width=120, color_system=None))
        self.lines: list[str | type[BaseException]] = []
        self.answers = list(answers or [])  # a key, or ("no", what to do instead)
        self.asked: list[tuple[Key, ...]] = []
        self.instead = ""
        ask = ApprovalPrompt(lambda: self.renderer, self._answer, lambda: self.instead).ask
        self.session: AgentSession = open_session(settings, env=env, ask=ask, make_provider=self._provider)
        # With `picks`, the lists to choose from answer with them in turn (None: the user left the list).
        self.picks = picks
        self.shown: list[tuple[str, list[str], int]] = []  # each list offered: title, rows, row marked
        chooser = self._choose if picks is not None else None
        self.repl = Repl(self.session, lambda: self.renderer, self._read, chooser=chooser)

    def _choose(self, title: str, rows: Sequence[str], selected: int) -> int | None:
        assert self.picks is not None
        self.shown.append((title, list(rows), selected))
        pick = self.picks.pop(0)
        return pick(rows) if callable(pick) else pick  # (a function: the row it finds)

    def _answer(self, keys: tuple[Key, ...]) -> Key:
        self.asked.append(keys)
        answer = self.answers.pop(0)
        if isinstance(answer, tuple):
            answer, self.instead = answer
        return answer

    def _provider(self, settings: ProviderSettings) -> ScriptedProvider:
        assert settings.model is not None
        later = ScriptedProvider([say(f"{settings.model} here")], model=settings.model)
        made = later if self.made else self.provider
        self.made.append(made)
        return made

    def _read(self) -> str:
        if not self.lines:
            raise EOFError
        item = self.lines.pop(0)
        if isinstance(item, str):
            return item
        raise item()

    def run(self, *lines: str | type[BaseException]) -> str:
        self.lines = list(lines)
        start = len(self.out.getvalue())
        self.repl.welcome()
        assert self.repl.run() == 0
        return "\n".join(ln.rstrip() for ln in self.out.getvalue()[start:].splitlines())


def test_a_message_runs_a_turn_and_the_toolbar_follows(tmp_path: Path) -> None:
    h = Harness(tmp_path, [say("Hello **there**.")])
    text = h.run("hi")
    assert "agent-cli" in text and h.session.id in text and "/help" in text
    assert "Hello **there**." in text  # a StringIO console is not a terminal: plain text
    assert h.repl.context_tokens is not None and h.repl.context_tokens > 0
    assert f"context {h.repl.context_tokens:,} / 200,000" in h.repl.toolbar()
    assert "auto-compact at " in h.repl.toolbar()


def test_unknown_command_hint_and_ctrl_c_twice_exits(tmp_path: Path) -> None:
    h = Harness(tmp_path, [])
    text = h.run("/hlep", KeyboardInterrupt, KeyboardInterrupt, "never read")
    assert "! unknown command /hlep; did you mean /help? (/help lists them)" in text
    assert text.count("Ctrl-C again") == 1
    assert h.lines == ["never read"]


def test_ctrl_c_then_typing_disarms_the_exit(tmp_path: Path) -> None:
    h = Harness(tmp_path, [])
    text = h.run(KeyboardInterrupt, "/help", KeyboardInterrupt, "/exit", "never read")
    assert text.count("Ctrl-C again") == 2
    assert h.lines == ["never read"]


def test_ctrl_c_in_the_renderer_cancels_the_turn_and_the_repl_goes_on(tmp_path: Path) -> None:
    h = Harness(tmp_path, [call("read_file", path="a.txt"), say("second answer")])
    (h.session.project_root / "a.txt").write_text("data\n")
    handle = h.renderer.handle
    fired: list[str] = []

    def interrupting(event: object) -> None:
        handle(event)  # type: ignore[arg-type]
        if type(event).__name__ == "ToolCallEvent" and not fired:
            fired.append("once")
            raise KeyboardInterrupt

    h.renderer.handle = interrupting  # type: ignore[method-assign]
    text = h.run("read it", "again")
    assert "✗ interrupted by the user" in text
    assert "second answer" in text
    # The interrupted tool round was closed, so the history stays valid for the next request.
    history = h.session.history
    uses = [u.id for m in history for u in m.tool_uses]
    results = [r.tool_use_id for m in history for r in m.tool_results]
    assert uses and uses == results


def test_approval_asks_and_always_is_remembered(tmp_path: Path) -> None:
    h = Harness(
        tmp_path,
        [call("bash", command="echo one"), call("bash", command="echo two"), say("done")],
        answers=["always"],
    )
    text = h.run("run things")
    assert "? bash echo one" in text and "always = bash commands starting with `echo`" in text
    assert "? bash echo two" not in text  # covered by the "always" rule
    assert text.count("✓ bash") == 2 and h.answers == []


def test_no_go_on_sends_the_refusal_back_to_the_model(tmp_path: Path) -> None:
    h = Harness(
        tmp_path,
        [call("write_file", path="x.txt", content="hi"), say("ok, I will not")],
        answers=["continue"],
    )
    text = h.run("write x")
    assert "✗ write_file x.txt" in text and "declined" in text and "ok, I will not" in text
    assert not (h.session.project_root / "x.txt").exists()
    assert h.asked == [("yes", "no", "continue", "always")]


def test_no_stops_the_turn_and_the_next_prompt_is_what_to_do_instead(tmp_path: Path) -> None:
    h = Harness(
        tmp_path,
        [call("write_file", path="x.txt", content="hi"), call("bash", command="true"), say("fine")],
        answers=["no"],
    )
    text = h.run("write x", "use y.txt instead")
    assert "stopped the turn" in text and len(h.provider.requests) == 2  # no request after the refusal
    refused = h.provider.requests[1].messages[-2].tool_results
    assert refused[0].content.startswith("Error: the user declined this write_file call and stopped")
    assert h.provider.requests[1].messages[-1].text == "use y.txt instead"


def test_no_with_words_sends_them_to_the_model_as_the_calls_error(tmp_path: Path) -> None:
    h = Harness(
        tmp_path,
        [call("write_file", path="x.txt", content="hi"), say("writing y.txt then")],
        answers=[("no", "write y.txt, not x.txt")],
    )
    text = h.run("write x")
    assert "writing y.txt then" in text
    result = h.provider.requests[1].messages[-1].tool_results[0]
    assert result.is_error and result.content.endswith("said what to do instead: write y.txt, not x.txt")


def test_context_cost_clear_and_model(tmp_path: Path) -> None:
    h = Harness(tmp_path, [say("first")])
    text = h.run(
        "hello", "/context", "/cost", "/model", "/model claude-opus-4-1", "and now?", "/clear", "/context"
    )
    assert re.search(r"system prompt\s+[\d,]+\s+\d+\.\d%", text)
    assert re.search(r"free\s+[\d,]+\s+\d+\.\d%", text)
    assert "auto-compaction fires at" in text
    # 100*3 + 10*15 per million
    assert re.search(r"claude-sonnet-4-5\s+100\s+10\s+0\s+0\s+0\s+\$0\.0004", text)
    flat = " ".join(text.split())  # long lines wrap at the console's width
    assert re.search(r"known anthropic models: .*claude-sonnet-4-5", flat) and "gpt-4.1," not in text
    assert "model: claude-opus-4-1 (200k window)" in text
    assert h.session.model == "claude-opus-4-1" and "claude-opus-4-1 here" in text  # the next turn went there
    assert "context cleared" in text and h.session.history == ()


class CountingBug:
    """A session whose context count has a bug (every other attribute is the real session's)."""

    def __init__(self, session: AgentSession) -> None:
        self._session = session

    def context_tokens(self) -> int:
        raise ZeroDivisionError("a bug in counting")

    def __getattr__(self, name: str) -> object:
        return getattr(self._session, name)


def test_a_bug_in_the_toolbar_s_count_goes_to_the_crash_log_and_the_repl_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The toolbar swallowed every error: a bug in counting showed as an unknown count, forever and
    silently. It is logged with its traceback and said once; the REPL goes on."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    h = Harness(tmp_path, [say("hello back")])
    broken = Toolbar(cast(AgentSession, CountingBug(h.session)))
    h.repl = Repl(h.session, lambda: h.renderer, h._read, toolbar=broken)
    text = h.run("hi", "/cost")
    assert "hello back" in text and "claude-sonnet-4-5" in text  # the turn and the command ran
    said = [line for line in text.splitlines() if "internal error" in line]
    assert len(said) == 1 and "ZeroDivisionError: a bug in counting" in said[0], text
    log = (tmp_path / "state" / "agent-cli" / "crash.log").read_text()
    assert "Traceback" in log and "a bug in counting" in log
    assert h.repl.context_tokens is None and "context …" in h.repl.toolbar()


def test_compact_shows_the_panel_and_writes_the_span(tmp_path: Path) -> None:
    summary = "## Goal and requests\nSay hello.\n## Current state\nDone."

    def summarize(request: Request) -> Completion:
        return say(summary)

    h = Harness(tmp_path, [say("hello back"), say("and again"), summarize])
    text = h.run("hello", "more", "/compact the greeting")
    assert "context compacted · layer manual · trigger manual" in text
    assert "/record reads the record" in text and "## Goal and requests" not in text  # three lines
    assert "## Goal and requests" in h.run("/record")
    spans = list(h.session.log_dir.glob("span-*"))
    assert spans and spans[0].name in text


def test_transcripts_and_resume(tmp_path: Path) -> None:
    # `other` is written here, not by this user's agent: /resume asks first, and the user says yes.
    h = Harness(tmp_path, [say("hi"), say("welcome back")], answers=["yes"])
    first = h.session.id
    root = h.session.project_root
    with SessionLog.create(root, redactor=Redactor([]), meta={"model": "gpt-4.1"}) as other:
        other.log_message(Message.user("the older question"))
        other.log_message(Message.assistant("the older answer"))
    text = h.run(
        "hello", "/transcripts", "/resume", "/resume nosuchsession", f"/resume {other.id[:-1]}", "go on"
    )
    assert text.count(f"* {first}") == 2 and text.count(f"  {other.id}") == 2
    assert "no session matches 'nosuchsession'" in text
    assert f"resumed session {other.id}: 2 messages in context" in text
    assert h.session.id == other.id and "welcome back" in text
    sent = [m.text for m in h.provider.requests[-1].messages]
    assert sent[:2] == ["the older question", "the older answer"] and sent[-1] == "go on"


def test_exit_and_ctrl_d(tmp_path: Path) -> None:
    h = Harness(tmp_path, [])
    h.run("/exit", "never read")
    assert h.lines == ["never read"]
    h.run()  # EOFError from an empty prompt: Ctrl-D


def test_model_switch_follows_the_new_window_unless_one_was_set(tmp_path: Path) -> None:
    h = Harness(tmp_path, [])
    text = h.run("/model claude-sonnet-5-5", "/model claude-opus-4-1")
    assert "model: claude-sonnet-5-5 (1.0M window)" in text and "the context now compacts for 1.0M" in text
    assert "model: claude-opus-4-1 (200k window)" in text and "the context now compacts for 200k" in text
    assert h.session.window == h.session.thresholds.window == 200_000
    assert h.session.max_output == 32_000
    assert "/ 200,000" in h.repl.toolbar()

    pinned = Harness(tmp_path / "pinned", [], context_window=50_000)  # as --context-window 50000
    text = pinned.run("/model claude-haiku-4-5")
    assert "keeps compacting for 50k" in text and pinned.session.thresholds.window == 50_000
    assert pinned.session.max_output == 12_500  # a quarter of the window at most


def test_model_names_a_configured_summary_writer(tmp_path: Path) -> None:
    h = Harness(tmp_path, [], summary_model="claude-haiku-5-5")
    text = h.run("/model", "/model claude-opus-5-5", "/model claude-haiku-5-5", "/model")
    assert text.count("summaries are written by claude-haiku-5-5 (context.summary_model)") == 1
    assert "model: claude-opus-5-5 (1.0M window)" in text
    assert "summaries are still written by claude-haiku-5-5" in text
    assert h.session.model == h.session.summary_model == "claude-haiku-5-5"  # (said no more once alike)
    plain = Harness(tmp_path / "plain", [])
    assert "summaries are" not in plain.run("/model", "/model claude-opus-5-5")


def test_model_refuses_another_providers_model(tmp_path: Path) -> None:
    """The session talks to one provider's API: another provider's model is refused in one line saying how."""
    h = Harness(tmp_path, [say("first"), say("second")])
    text = h.run("hello", "/model gpt-4.1", "and now?")
    assert (
        "✗ gpt-4.1 is an openai model and this session talks to the anthropic API; to use it, restart "
        "with: agent --provider openai --model gpt-4.1"
    ) in " ".join(text.split())  # one line, wrapped at the console's width
    assert "model: gpt-4.1" not in text
    assert h.session.model == "claude-sonnet-4-5" and "second" in text  # the same provider answered


def test_model_warns_about_a_name_not_in_the_table(tmp_path: Path) -> None:
    """A typo of a known name switches (any name the provider serves works) but never without a word."""
    h = Harness(tmp_path, [])
    text = h.run("/model claude-sonet-4-5")
    assert "model: claude-sonet-4-5" in text
    assert "! unknown model 'claude-sonet-4-5': assuming a 32,000-token window" in text
    assert "did you mean claude-sonnet-4-5?" in text
    text = h.run("/model claude-sonnet-9-9")  # a family the table knows, a version it does not
    assert "model: claude-sonnet-9-9" in text
    assert "! claude-sonnet-9-9 is not in the model table: its 1.0M window is what the provider or" in text


@pytest.mark.parametrize("width", [80, 100, 120])
def test_the_resume_command_is_never_broken_across_rows(width: int) -> None:
    lines = resume_lines("20261201-095508-5f08a4", width)
    assert all(len(line) < width for line in lines)
    assert any(
        line.endswith("agent --resume 20261201-095508-5f08a4") and "agent --resume" in line for line in lines
    )
    assert len(lines) == (2 if width <= 88 else 1)


# ---- the lists to choose from (a terminal's picker, scripted here) -------------------------------


def test_model_with_no_name_offers_the_table_and_switches_to_the_one_chosen(tmp_path: Path) -> None:
    names = model_choices("anthropic", "claude-sonnet-4-5")
    assert "claude-sonnet-4-5" in names and "claude-opus-4-1" not in names  # retired: offered when current
    opus = names.index("claude-opus-5-5")
    h = Harness(tmp_path, [], picks=[opus, None, names.index("claude-opus-5-5")])
    text = h.run("/model", "/model", "/model")
    (title, rows, marked), (_, again, marked_again), _ = h.shown
    assert "model: claude-sonnet-4-5 (200k window)" in title
    assert rows[marked].startswith("* claude-sonnet-4-5 ") and rows[opus].startswith("  claude-opus-5-5 ")
    assert re.search(r"claude-opus-5-5 +1\.0M window  \$\d", rows[opus])
    assert "model: claude-opus-5-5 (1.0M window)" in text and h.session.model == "claude-opus-5-5"
    assert marked_again == opus and again[opus].startswith("* claude-opus-5-5")
    assert text.count("model unchanged: claude-opus-5-5") == 2  # left the list; chose the current one
    assert h.session.model == "claude-opus-5-5"


def test_resume_with_no_id_offers_the_sessions_and_resumes_the_one_chosen(tmp_path: Path) -> None:
    h = Harness(tmp_path, [say("hi"), say("welcome back")], answers=["yes"], picks=[])
    first = h.session.id
    with SessionLog.create(h.session.project_root, redactor=Redactor([]), meta={"model": "gpt-4.1"}) as other:
        other.log_message(Message.user("the older \x1b[2Jquestion"))
        other.log_message(Message.assistant("the older answer"))
    assert h.picks is not None
    h.picks += [None, lambda rows: next(i for i, r in enumerate(rows) if other.id in r)]
    text = h.run("hello", "/resume", "/resume", "go on")
    (title, rows, marked), _ = h.shown
    assert "resume which session" in title and marked == 0
    # (Both were written this second: their order is the log's, and either may come first.)
    assert sorted(r[: 2 + len(first)] for r in rows) == sorted([f"* {first}", f"  {other.id}"])
    rows = sorted(rows, key=lambda r: r[0] != "*")
    assert "gpt-4.1" in rows[1] and "the older \\x1b[2Jquestion" in rows[1]  # made visible
    assert f"still in session {first}" in text
    assert f"resumed session {other.id}: 2 messages in context" in text and h.session.id == other.id
    assert [m.text for m in h.provider.requests[-1].messages][-1] == "go on"


def test_resume_with_no_other_session_says_so(tmp_path: Path) -> None:
    h = Harness(tmp_path, [say("hi")], picks=[])
    text = h.run("hello", "/resume")
    assert "no other session in this project to resume" in text and h.shown == []


@pytest.mark.parametrize(
    ("count", "selected", "steps", "marked", "shown"),
    [
        (3, 0, [], 0, range(0, 3)),
        (3, 0, [-1], 0, range(0, 3)),  # stops at the top
        (3, 2, [5], 2, range(0, 3)),  # and at the bottom
        (25, 0, [10], 10, range(1, 11)),  # the window follows the marked row down
        (25, 24, [], 24, range(15, 25)),  # a row marked first is in view
        (25, 24, [-10, -10], 4, range(4, 14)),  # pages up
        (25, 12, [-25], 0, range(0, 10)),  # home
        (0, 0, [1], 0, range(0, 0)),
    ],
)
def test_list_view_moves_within_the_rows_and_keeps_the_marked_one_in_view(
    count: int, selected: int, steps: list[int], marked: int, shown: range
) -> None:
    view = ListView(count, selected, height=10)
    for step in steps:
        view.move(step)
    assert view.selected == marked and view.rows() == shown
