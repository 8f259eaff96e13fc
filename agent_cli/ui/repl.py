"""The interactive REPL: a prompt_toolkit prompt, the turn driver, and the slash commands.

    run_repl(open_session) -> welcome -> read a line -> /command | a turn -> render events -> ...

- The prompt: history in the XDG state dir (redacted: a pasted key is
  never written there; see `prompt_input.py`), Enter sends, Alt+Enter / Esc Enter
  (or Enter after a backslash that ends the line) adds a line, bracketed paste
  never sends, completion for slash commands and paths (completion.py), a bottom
  toolbar with the model, the context in use and where auto-compaction fires.
- Ctrl+O shows the last tool's whole output (`/last`) above the prompt, keeping what was typed.
- Esc Esc at an empty prompt opens the list of prompts to rewind to (`/rewind`); after a rewind the
  prompt's text is in the next input line, to edit and send again. `/resume` and `/model` with no
  argument open a list to choose from too (`picker.py`: arrows, Enter, Esc).
- Markdown commands (`/NAME args`, `custom_commands.py`): the file's body, expanded, is sent as
  the message; the line says which file it came from.
- A turn: the session's events go to `render.Renderer` through `turn.py`,
  which makes Ctrl-C cancel the turn; the REPL goes on. Esc cancels it too (`key_watch.py`), and
  what is typed during a turn is the next input line's text. At an empty prompt a
  first Ctrl-C shows a hint, a second exits.
- Start-up stays light: no SDK is imported here; once the prompt is on the screen one daemon
  thread imports the provider's SDK and its HTTP transport (what a first prompt waits for most),
  counts the context for the toolbar, then imports rich's Markdown (what drawing an answer
  imports) and, unless a turn has begun, loads the tokenizer's vocabulary (what counting after an
  answer needs). A turn waits for the import and the count (the counter is not shared across
  threads; a count that needs the vocabulary is needed by the turn too), not for what follows.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

from agent_cli import __version__
from agent_cli.agent.approvals import Asker
from agent_cli.core.events import Event
from agent_cli.core.text import visible
from agent_cli.prompt.command_files import CommandFiles
from agent_cli.session import AgentSession
from agent_cli.tokens.counter import TokenCounter
from agent_cli.tools.base import ToolRegistry
from agent_cli.tools.registry import default_tools
from agent_cli.ui import ending, glyphs, typeahead
from agent_cli.ui.approval import ApprovalPrompt, answer_prompt, edit_prompt, instead_prompt
from agent_cli.ui.command_kit import CommandKit
from agent_cli.ui.commands import SlashCommand, closest, custom_command_files, parse, run_command
from agent_cli.ui.context_commands import pin_line
from agent_cli.ui.custom_commands import invoke
from agent_cli.ui.key_watch import TurnKeys
from agent_cli.ui.pasted_images import dropped_mentions
from agent_cli.ui.picker import Chooser
from agent_cli.ui.prompt_input import prompt_session
from agent_cli.ui.reports import format_tokens, resume_lines
from agent_cli.ui.toolbar import Toolbar, status_line_for
from agent_cli.ui.turn import discard_typeahead, drive_turn, quiet_input

if TYPE_CHECKING:
    from agent_cli.ui.render import Renderer

__all__ = ["Repl", "run_repl"]

PROMPT = "› "
CTRL_C_HINT = "(Ctrl-C again or /exit to leave; Ctrl-C during a turn cancels it)"
MAX_NOTICES = 5  # about command files, in the greeting
WARMUP_DELAY = 0.15  # seconds: let the prompt draw before background imports compete for the GIL


class Repl:
    """One interactive session. `read_line` is injected so tests need no terminal."""

    def __init__(
        self,
        session: AgentSession,
        renderer: Callable[[], Renderer],
        read_line: Callable[[], str],
        *,
        toolbar: Toolbar | None = None,
        invalidate: Callable[[], None] = lambda: None,
        quiet: Callable[[], AbstractContextManager[None]] = contextlib.nullcontext,
        commands: CommandFiles | None = None,
        keys: TurnKeys | None = None,
        chooser: Chooser | None = None,
    ) -> None:
        self.session = session
        # Without the user's folders (tests): only the project's.
        self.commands = commands or custom_command_files(session.project_root, None)
        self._renderer = renderer  # a function: the renderer is made on first use (rich loads late)
        self.read_line = read_line
        self.status = toolbar or Toolbar(session)
        self.invalidate = invalidate
        self.quiet = quiet  # the terminal's echo off while a turn runs (see turn.quiet_input)
        self.keys = keys  # Esc during a turn, and the text typed meanwhile
        # What the slash commands may use: never the REPL itself.
        self.kit = CommandKit(
            session=session,
            make_renderer=renderer,
            commands=self.commands,
            drive=self.drive,
            refresh_context=self.refresh_context,
            prefill=self.prefill,
            chooser=chooser,  # lists to choose from (/resume, /model, /rewind); None: they are printed
        )
        self._warmed = threading.Event()  # the warm-up's import and count are done (or none runs)
        self._warmed.set()
        self._turn_begun = False  # once set, the warm-up leaves the vocabulary to the turn's count
        self._ctrl_c_armed = False
        self._prefill = ""  # the next input line's text (a rewound prompt), taken by the next read

    @property
    def renderer(self) -> Renderer:
        return self._renderer()

    @property
    def context_tokens(self) -> int | None:
        return self.status.tokens

    def toolbar(self, width: int | None = None) -> str:
        return self.status.text(width)

    # ---- set-up ---------------------------------------------------------

    def welcome_lines(self) -> list[tuple[str, str]]:
        """(text, style) lines greeting the user: version, model, window, session, warnings."""
        s = self.session
        lines = [
            (
                f"agent-cli {__version__} · {s.model} ({format_tokens(s.window)} window) · "
                f"session {s.id} · /help",
                "bold",
            )
        ]
        if s.history:
            lines.append((f"resumed: {len(s.history)} messages in the working context", "dim"))
        lines += [(f"! {w.message}", "yellow") for w in s.warnings]
        notices = self.commands.catalog().notices
        lines += [(f"! {n.text}", "yellow") for n in notices[:MAX_NOTICES]]
        if len(notices) > MAX_NOTICES:
            lines.append(
                (f"! and {len(notices) - MAX_NOTICES} more about command files (/help lists them)", "yellow")
            )
        return [(visible(text), style) for text, style in lines]  # warnings quote project files

    def welcome(self) -> None:
        for text, style in self.welcome_lines():
            self.renderer.line(text, style)

    def warm_up(self, preload: Callable[[], None] = lambda: None) -> None:
        """Off the main thread: `preload` (the provider's SDK: what a first prompt waits for), count
        the starting context and refresh the toolbar; then rich's Markdown (what drawing the first
        answer imports) and the tokenizer's vocabulary (what the count after it needs; left to that
        count once a turn has begun), which no turn waits for (it loads under its own lock)."""

        def work() -> None:
            try:
                with contextlib.suppress(ImportError):  # the turn meets the same error and says it
                    preload()
                self.status.count()
            finally:
                self._warmed.set()
            if self.status.tokens is not None:
                self.invalidate()
            with contextlib.suppress(ImportError):
                import rich.markdown  # noqa: F401

                import agent_cli.ui.render  # noqa: F401
            counter = self.session.engine.counter
            if isinstance(counter, TokenCounter) and not self._turn_begun:
                counter.load_vocabulary()  # not while a turn runs: it would take the processor from it

        self._warmed.clear()
        _later(work)

    # ---- the read-eval loop ----------------------------------------------

    def run(self) -> int:
        """Read and run lines until /exit, Ctrl-D or a second Ctrl-C in a row (call welcome() first)."""
        while True:
            failure = self.status.take_failure()
            if failure is not None:
                self.renderer.error(failure)
            try:
                line = self.read_line()
            except KeyboardInterrupt:
                if self._ctrl_c_armed or ending.received() is not None:
                    return 0
                self._ctrl_c_armed = True
                self.renderer.info(CTRL_C_HINT)
                continue
            except EOFError:
                return 0
            self._ctrl_c_armed = False
            if not line.strip():
                continue
            try:
                if self.submit(line) == "exit":
                    return 0
            except KeyboardInterrupt:  # a slash command (or the end of a turn) was interrupted
                self.renderer.end_turn()
                self.renderer.error("interrupted")
            if ending.received() is not None:  # SIGTERM or SIGHUP: the turn stopped; now the REPL
                return 0

    def submit(self, line: str) -> str:
        """Run one typed line; "exit" when the REPL should end."""
        command = parse(line)
        pinned = pin_line(line) if command is None else None
        if pinned is not None:  # `# never use tabs`: a pin, as /pin
            return run_command(self.kit, SlashCommand("pin", pinned))
        if command is None and line.startswith("!"):
            self._shell(line[1:].strip())
            return "continue"
        if command is None:
            line = dropped_mentions(line, self.session.project_root) or line  # a path dropped in: attached
            attached = self.session.attachments(line)
            for note in attached.notes:
                self.renderer.info(note)
            self.drive(self.session.run(line, attached))
            return "continue"
        if not command.known:
            self._custom(command)
            return "continue"
        return run_command(self.kit, command)

    def _shell(self, command: str) -> None:
        """`!command`: run it now in the project's shell, show what it printed; the model sees it
        with the next prompt, as the user's own message."""
        if not command:
            self.renderer.error("! needs a command: !git status")
            return
        try:
            with self.keys.watching() if self.keys else contextlib.nullcontext():  # Esc stops it too
                output = self.session.shell(command)
        except KeyboardInterrupt:
            self.renderer.error("interrupted")
            return
        self.renderer.line(output.content.rstrip("\n"), "red" if output.is_error else "")
        self.renderer.info("the model sees this with your next message")
        self.refresh_context()

    def _custom(self, command: SlashCommand) -> None:
        """A Markdown command: its expansion sent as the message; else why not, or a hint."""
        catalog = self.commands.catalog()
        found = invoke(catalog, command.name, command.arg)
        if found is None:
            hint = closest(command.name, catalog.names())
            guess = f"; did you mean /{hint}?" if hint else ""
            self.renderer.warn(f"unknown command /{command.name}{guess} (/help lists them)")
        elif isinstance(found, str):
            self.renderer.warn(found)
        else:
            self.renderer.info(found.origin)
            for warning in found.warnings:
                self.renderer.warn(warning)
            self.drive(self.session.run(found.text))

    def drive(self, events: Iterator[Event]) -> None:
        """Render one turn's events (see `turn.py`), tell the session the user is to speak, then
        recount the context for the toolbar."""
        self._turn_begun = True
        self._warmed.wait()  # the SDK's import and the first count (the counter is not shared)
        with self.quiet():
            drive_turn(
                events, self.renderer, self.session.cancel, self.keys.watching if self.keys else _unwatched
            )
        typed = self.keys.take_typed() if self.keys else ""
        if typed and not self._prefill:
            self._prefill = typed
        self.session.awaiting_user()  # (the context may start a record while the user reads and types)
        self.renderer.line("")  # a blank line sets the answer apart from the next prompt
        self.refresh_context()

    def refresh_context(self) -> None:
        self._warmed.wait()
        self.status.count()

    def prefill(self, text: str) -> None:
        self._prefill = text

    def take_prefill(self) -> str:
        """The text the next input line starts with ("" for none); taken once."""
        text, self._prefill = self._prefill, ""
        return text


def _make_renderer(tools: Callable[[], ToolRegistry]) -> Renderer:
    from rich.console import Console

    from agent_cli.ui.render import Renderer

    return Renderer(Console(highlight=False), tools=tools)


def run_repl(open_session: Callable[[Asker], AgentSession]) -> int:
    """Run the REPL on this terminal until /exit, Ctrl-D or a double Ctrl-C. Returns the exit code.

    `open_session(ask)` builds the session with the REPL's approval question.
    Piped stdin and output to a file never reach here: `cli.run_cli` turns the
    first into a headless task and refuses the second.
    """
    from prompt_toolkit import print_formatted_text
    from prompt_toolkit.formatted_text import FormattedText

    # The default tools until the session is open: it may ask a question of its own while opening.
    tools = default_tools()
    renderer = functools.cache(lambda: _make_renderer(lambda: tools))
    keys = TurnKeys(sys.stdin.fileno(), lambda: os.kill(os.getpid(), signal.SIGINT))  # Esc: as Ctrl-C
    asker = ApprovalPrompt(renderer, answer_prompt, instead_prompt, keys.paused, edit_prompt)
    session = open_session(asker.ask)
    tools = session.tools
    toolbar = Toolbar(session, status_line_for(session, lambda: toolbar, lambda: prompt.app.invalidate()))
    commands = custom_command_files(session.project_root, os.environ)
    prompt = prompt_session(session, toolbar.text, commands, lambda line: repl.submit(line))
    repl = Repl(
        session,
        renderer,
        # The REPL's own prefill (a rewound prompt) starts the line; `repl` is bound by the first read.
        lambda: prompt.prompt(glyphs.fit(PROMPT, sys.stdout), default=repl.take_prefill()),
        toolbar=toolbar,
        invalidate=prompt.app.invalidate,
        quiet=lambda: quiet_input(sys.stdin.fileno()),
        commands=commands,
        keys=keys,
        chooser=_choose,
    )
    # The greeting goes out through prompt_toolkit, so rich can load after the prompt is drawn; its
    # lines wrap at the spaces between words (a terminal's own wrap would split the session id).
    columns = prompt.app.output.get_size().columns
    for text, style in repl.welcome_lines():
        for row in textwrap.wrap(text, columns, break_long_words=False, break_on_hyphens=False) or [""]:
            print_formatted_text(FormattedText([(style, glyphs.fit(row, sys.stdout))]))
    repl.warm_up(functools.partial(_preload_sdk, session.provider_name))
    ending.install()
    try:
        drive_turn(session.begin(), repl.renderer, session.cancel)  # the SessionStart hooks
        code = repl.run()  # (the keys typed so far are the first prompt's: see typeahead.py)
        sig = ending.received()
        return 128 + sig if sig is not None else code
    finally:
        repl.renderer.end_turn()
        drive_turn(session.end(), repl.renderer, session.cancel)  # the SessionEnd hooks
        for line in resume_lines(session.id, repl.renderer.console.width):
            repl.renderer.info(line)
        session.close()
        typeahead.release()


def _choose(title: str, rows: Sequence[str], selected: int) -> int | None:
    from agent_cli.ui.picker import pick

    discard_typeahead(sys.stdin.fileno())  # keys typed before the list showed do not choose in it
    return pick(title, rows, selected=selected)


def _unwatched() -> AbstractContextManager[None]:
    return contextlib.nullcontext()


def _preload_sdk(provider: str) -> None:
    """Import the provider's SDK (in the warm-up thread) so the first answer does not wait for it."""
    from agent_cli.providers import factory

    factory.preload(provider)


def _later(work: Callable[[], None]) -> threading.Thread:
    """Run `work` in a daemon thread once the prompt has had WARMUP_DELAY to draw."""

    def run() -> None:
        time.sleep(WARMUP_DELAY)
        work()

    thread = threading.Thread(target=run, name="warm-up", daemon=True)
    thread.start()
    return thread
