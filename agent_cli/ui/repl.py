"""The interactive REPL: a prompt_toolkit prompt, the turn driver, and the slash commands.

    run_repl(built) -> welcome -> read a line -> /command | a turn -> render events -> ...

- The prompt: history in the XDG state dir, Enter sends, Alt+Enter / Esc Enter
  adds a line, bracketed paste never sends, completion for slash commands and
  paths (after `@` or in a path-looking word), a bottom toolbar with the
  model, the context in use and where auto-compaction fires.
- A turn: the loop's events go to `render.Renderer` through `repl_turn`,
  which makes Ctrl-C cancel the turn; the REPL goes on. At an empty prompt a
  first Ctrl-C shows a hint, a second exits.
- Start-up stays light: no SDK is imported here; the provider's SDK and the
  token counter warm up in daemon threads once the prompt is on the screen.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

from agent_cli import __version__
from agent_cli.core.approvals import Answer, InteractiveApprover, always_rule
from agent_cli.core.events import Event
from agent_cli.store.user_dirs import state_dir
from agent_cli.ui.commands import run_command
from agent_cli.ui.slash import COMMANDS, closest, format_context_line, format_tokens, known_models, parse
from agent_cli.ui.turn import discard_typeahead, drive_turn, quiet_input

if TYPE_CHECKING:
    from prompt_toolkit import PromptSession

    from agent_cli.ui.render import Renderer
    from agent_cli.wiring import Built

__all__ = ["PathAndCommandCompleter", "Repl", "run_repl"]

PROMPT = "› "
CTRL_C_HINT = "(Ctrl-C again or /exit to leave; Ctrl-C during a turn cancels it)"
MAX_PATH_COMPLETIONS = 200
WARMUP_DELAY = 0.15  # seconds: let the prompt draw before background imports compete for the GIL


class PathAndCommandCompleter(Completer):
    """Slash commands (and /model, /resume arguments) at the start; paths after `@` or with a `/`.

    Cheap by design: one directory listing per keystroke, capped, hidden files
    only when asked for.
    """

    def __init__(self, root: Path, sessions: Callable[[], Iterable[str]] = lambda: ()) -> None:
        self.root = root
        self.sessions = sessions

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterator[Completion]:
        text = document.text_before_cursor
        if text.startswith("/") and "\n" not in text:
            head, space, arg = text[1:].partition(" ")
            if not space:
                for spec in COMMANDS:
                    if spec.name.startswith(head.lower()):
                        yield Completion(f"/{spec.name}", -len(text), display_meta=spec.help)
                return
            if head in ("model", "resume") and " " not in arg:
                pool = known_models() if head == "model" else list(self.sessions())
                for name in pool:
                    if name.startswith(arg):
                        yield Completion(name, -len(arg))
                return
        word = text.split()[-1] if text and not text[-1].isspace() else ""
        if word.startswith("@"):
            yield from self._paths(word[1:])
        elif "/" in word or word.startswith(("./", "../", "~")):
            yield from self._paths(word)

    def _paths(self, word: str) -> Iterator[Completion]:
        folder, _, prefix = word.rpartition("/")
        base = Path(os.path.expanduser(folder)) if folder.startswith("~") else self.root / folder
        if word.startswith("/"):
            base = Path(folder or "/")
        try:
            entries = sorted(os.scandir(base), key=lambda e: e.name)
        except OSError:
            return
        shown = 0
        for entry in entries:
            hidden = entry.name.startswith(".") and not prefix.startswith(".")
            if hidden or not entry.name.startswith(prefix):
                continue
            name = entry.name + ("/" if entry.is_dir() else "")
            yield Completion(name, -len(prefix))
            shown += 1
            if shown >= MAX_PATH_COMPLETIONS:
                return


class Repl:
    """One interactive session. `read_line` and `ask_approval` are injected so tests need no terminal."""

    def __init__(
        self,
        built: Built,
        renderer: Renderer | Callable[[], Renderer],
        read_line: Callable[[], str],
        ask_approval: Callable[[], Answer] | None = None,
        invalidate: Callable[[], None] = lambda: None,
        quiet: Callable[[], AbstractContextManager[None]] = contextlib.nullcontext,
    ) -> None:
        self.built = built
        self.quiet = quiet  # the terminal's echo off while a turn runs (see repl_turn.quiet_input)
        self._renderer = renderer
        self.read_line = read_line
        self.ask_approval = ask_approval
        self.invalidate = invalidate
        self.context_tokens: int | None = None
        self._count_thread: threading.Thread | None = None
        self._ctrl_c_armed = False
        self.install_approver()

    @property
    def renderer(self) -> Renderer:
        """The renderer; made on first use when a factory was given (rich loads after the prompt shows)."""
        if callable(self._renderer):
            self._renderer = self._renderer()
        return self._renderer

    # ---- set-up ---------------------------------------------------------

    def install_approver(self) -> None:
        """Ask the user before tools that need approval (unless --yes put an AutoApprover there)."""
        if not self.built.settings.approvals.yes:
            self.built.loop.approver = InteractiveApprover(self.ask, self.built.settings.approvals.allow)

    def ask(self, name: str, args: Mapping[str, Any]) -> Answer:
        self.renderer.approval(name, args, always_rule(name, args).describe())
        if self.ask_approval is None:
            return "no"
        answer = self.ask_approval()
        self.renderer.resume()
        return answer

    def welcome_lines(self) -> list[tuple[str, str]]:
        """(text, style) lines greeting the user: version, model, window, session, warnings."""
        b = self.built
        lines = [(f"agent-cli {__version__} · {b.model} ({format_tokens(b.window)} window) · "
                  f"session {b.session.id} · /help", "bold")]
        if b.loop.history:
            lines.append((f"resumed: {len(b.loop.history)} messages in the working context", "dim"))
        lines += [(f"! {w.message}", "yellow") for w in b.warnings]
        return lines

    def welcome(self) -> None:
        for text, style in self.welcome_lines():
            self.renderer.line(text, style)

    def warm_up(self) -> None:
        """Count the starting context (loads the tokenizer) off the main thread; refresh the toolbar."""
        def count() -> None:
            import agent_cli.ui.render  # noqa: F401  # rich, loaded while the user reads the prompt

            try:
                self.context_tokens = self.built.loop.context_tokens()
            except Exception:  # the toolbar just keeps "…"; the next turn counts again
                return
            self.invalidate()

        self._count_thread = threading.Timer(WARMUP_DELAY, count)
        self._count_thread.daemon = True
        self._count_thread.start()

    def toolbar(self, width: int | None = None) -> str:
        """The bottom toolbar's text, fitted to `width` columns when given."""
        b = self.built
        th = b.engine.thresholds
        return format_context_line(b.model, self.context_tokens, th.window, th.trigger_at,
                                   b.settings.context.trigger_ratio, width)

    # ---- the read-eval loop ----------------------------------------------

    def run(self) -> int:
        """Read and run lines until /exit, Ctrl-D or a second Ctrl-C in a row (call welcome() first)."""
        while True:
            try:
                line = self.read_line()
            except KeyboardInterrupt:
                if self._ctrl_c_armed:
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

    def submit(self, line: str) -> str:
        """Run one typed line; "exit" when the REPL should end."""
        command = parse(line)
        if command is None:
            self.drive(self.built.loop.run(line))
            return "continue"
        if not command.known:
            hint = closest(command.name)
            guess = f"; did you mean /{hint}?" if hint else ""
            self.renderer.warn(f"unknown command /{command.name}{guess} (/help lists them)")
            return "continue"
        return run_command(self, command)

    def drive(self, events: Iterator[Event]) -> None:
        """Render one turn's events (see `repl_turn`), then recount the context for the toolbar."""
        if self._count_thread is not None:
            self._count_thread.join()  # the counter is not shared across threads while a turn runs
            self._count_thread = None
        with self.quiet():
            drive_turn(events, self.renderer, self.built.loop.cancel)
        self.renderer.line("")  # a blank line sets the answer apart from the next prompt
        self.refresh_context()

    def refresh_context(self) -> None:
        try:
            self.context_tokens = self.built.loop.context_tokens()
        except Exception:  # the toolbar is informative only
            self.context_tokens = None


# ---- the terminal wiring ------------------------------------------------------


def _history_path() -> Path:
    folder = state_dir(os.environ)
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = folder / "history"
    # What people type can hold secrets: the history file is theirs alone, however it was made.
    os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
    os.chmod(path, 0o600)
    return path


def _prompt_session(built: Built, repl_ref: list[Repl]) -> PromptSession[str]:
    from prompt_toolkit import PromptSession
    from prompt_toolkit.application import get_app
    from prompt_toolkit.history import FileHistory, InMemoryHistory
    from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

    bindings = KeyBindings()

    @bindings.add("escape", "enter")
    def _newline(event: KeyPressEvent) -> None:
        event.current_buffer.insert_text("\n")

    @bindings.add("c-c")
    def _cancel(event: KeyPressEvent) -> None:
        buffer = event.current_buffer
        if buffer.text:
            buffer.reset()  # first clear what was typed; an empty prompt counts toward exiting
        else:
            event.app.exit(exception=KeyboardInterrupt())

    try:
        history: FileHistory | InMemoryHistory = FileHistory(str(_history_path()))
    except OSError:
        history = InMemoryHistory()

    def sessions() -> list[str]:
        from agent_cli.store.session_log import session_ids

        return session_ids(built.settings.project_root)

    return PromptSession(
        history=history,
        key_bindings=bindings,
        completer=PathAndCommandCompleter(built.settings.project_root, sessions),
        complete_while_typing=True,
        bottom_toolbar=lambda: repl_ref[0].toolbar(get_app().output.get_size().columns) if repl_ref else "",
        enable_suspend=True,
    )


def _answer_prompt() -> Answer:
    """Read y / n / a with one key press (Enter on typed text works too; Ctrl-D means no)."""
    from prompt_toolkit import prompt
    from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

    discard_typeahead(sys.stdin.fileno())
    bindings = KeyBindings()
    for key, answer in (("y", "yes"), ("n", "no"), ("a", "always")):
        def pick(event: KeyPressEvent, answer: str = answer) -> None:
            event.current_buffer.text = answer  # stays on the screen as the answer given
            event.app.exit(result=answer)

        bindings.add(key)(pick)
    while True:
        try:
            text = prompt("  allow? [y]es / [n]o / [a]lways › ", key_bindings=bindings).strip().lower()
        except EOFError:
            return "no"
        for answer in ("yes", "no", "always"):
            if text and answer.startswith(text):
                return answer  # type: ignore[return-value]  # one of the Answer literals
        # anything else: ask again


def run_repl(built: Built) -> int:
    """Run the REPL on this terminal until /exit, Ctrl-D or a double Ctrl-C. Returns the exit code.

    Piped stdin and output to a file never reach here: `wiring.run_cli` turns
    the first into a headless task and refuses the second.
    """
    from prompt_toolkit import print_formatted_text
    from prompt_toolkit.formatted_text import FormattedText

    def make_renderer() -> Renderer:
        from rich.console import Console

        from agent_cli.ui.render import Renderer

        return Renderer(Console(highlight=False))

    repl_ref: list[Repl] = []
    session = _prompt_session(built, repl_ref)

    def read_line() -> str:
        return session.prompt(PROMPT)

    repl = Repl(built, make_renderer, read_line, _answer_prompt, invalidate=lambda: session.app.invalidate(),
                quiet=lambda: quiet_input(sys.stdin.fileno()))
    repl_ref.append(repl)
    # The greeting goes out through prompt_toolkit, so rich can load after the prompt is drawn.
    for text, style in repl.welcome_lines():
        print_formatted_text(FormattedText([(style, text)]))
    repl.warm_up()
    _preload_sdk(built.settings.provider.name)
    try:
        return repl.run()
    finally:
        repl.renderer.end_turn()
        session_id = built.session.id
        repl.renderer.info(f"session {session_id} saved · resume with: agent --resume {session_id}")
        built.session.close()


def _preload_sdk(provider: str) -> None:
    """Import the provider's SDK in the background so the first answer does not wait for it."""
    from agent_cli.providers import factory

    timer = threading.Timer(WARMUP_DELAY, factory.preload, args=(provider,))
    timer.daemon = True
    timer.start()

