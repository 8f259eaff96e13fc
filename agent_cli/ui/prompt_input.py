"""The REPL's input line (prompt_toolkit): its history on disk, with secrets redacted, and its keys.

Enter sends; Alt+Enter, Esc Enter, or Enter after a backslash that ends the line adds a line; Esc Esc
at an empty prompt opens the rewind list; Esc then `/` types `/` (not Meta-/); Shift+Tab cycles the
approval mode; Ctrl+O shows the last tool's whole output above the prompt; Ctrl-C clears what was
typed, then (at an empty prompt) exits.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from agent_cli.agent.attachments import mention
from agent_cli.prompt.command_files import CommandFiles
from agent_cli.store.user_dirs import state_dir
from agent_cli.ui import glyphs
from agent_cli.ui.pasted_images import clipboard_image, dropped_mentions, save_pasted

if TYPE_CHECKING:
    from prompt_toolkit import PromptSession
    from prompt_toolkit.history import History

    from agent_cli.session import AgentSession

__all__ = ["LAST_OUTPUT", "REWIND_LIST", "input_history", "prompt_session"]

REWIND_LIST = "/rewind"  # what Esc Esc at an empty prompt runs
LAST_OUTPUT = "/last"  # what Ctrl+O at the prompt runs (above it: what was typed stays)


def _input_history_path() -> Path:
    folder = state_dir(os.environ)
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = folder / "history"
    # What people type can hold secrets: the file is theirs alone, however it was made.
    # Non-blocking, and only a regular file: a FIFO in its place would hang the REPL's start.
    fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC, 0o600)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(0, "the history file is not a regular file", str(path))
        os.fchmod(fd, 0o600)
    finally:
        os.close(fd)
    return path


def input_history(redact: Callable[[str], str]) -> History:
    """The prompt's history: the file in the XDG state dir, each entry stored with its secrets replaced
    (the session's `redact`: configured keys and credential shapes). This session's own recall keeps
    what was typed; the file, read by every later session, never holds a key. In memory only when the
    file cannot be made."""
    from prompt_toolkit.history import FileHistory, InMemoryHistory

    class RedactedFileHistory(FileHistory):
        def store_string(self, string: str) -> None:
            super().store_string(redact(string))

    try:
        return RedactedFileHistory(str(_input_history_path()))
    except OSError:
        return InMemoryHistory()


def prompt_session(
    session: AgentSession,
    toolbar: Callable[[int], str],
    commands: CommandFiles,
    run: Callable[[str], object],
) -> PromptSession[str]:
    """The REPL's prompt: its history, keys, completion and bottom toolbar (`toolbar(width)`); `run`
    runs a slash command above the prompt (Ctrl+O)."""
    from prompt_toolkit import PromptSession
    from prompt_toolkit.application import get_app, run_in_terminal
    from prompt_toolkit.filters import Condition
    from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
    from prompt_toolkit.keys import Keys

    from agent_cli.store.sessions import session_ids
    from agent_cli.ui.completion import PathAndCommandCompleter

    bindings = KeyBindings()

    @bindings.add("escape", "enter")
    def _newline(event: KeyPressEvent) -> None:
        event.current_buffer.insert_text("\n")

    @bindings.add("escape", "/")
    def _slash(event: KeyPressEvent) -> None:
        # Esc then `/` within prompt_toolkit's timeout is Meta-/ (complete), which swallowed the `/` of
        # a command: `/cost` went to the model as `cost`. Esc then `/` types `/`, however fast.
        event.current_buffer.insert_text("/")

    @bindings.add(
        "enter", filter=Condition(lambda: get_app().current_buffer.document.text_before_cursor.endswith("\\"))
    )
    def _continued(event: KeyPressEvent) -> None:
        buffer = event.current_buffer  # `\` then Enter: the backslash becomes the line break
        buffer.delete_before_cursor(1)
        buffer.insert_text("\n")

    @bindings.add("escape", "escape", filter=Condition(lambda: not get_app().current_buffer.text))
    def _rewind_list(event: KeyPressEvent) -> None:
        event.app.exit(result=REWIND_LIST)  # as if typed, but not into the input history

    @bindings.add("s-tab")
    def _next_mode(event: KeyPressEvent) -> None:
        session.mode.cycle()  # ask -> accept edits -> plan -> auto -> ask (agent.modes); the toolbar shows it
        notice = session.mode.unconfined_notice()  # auto mode with no sandbox: said once, above the prompt
        if notice is not None:
            run_in_terminal(lambda: print(notice, flush=True))
        event.app.invalidate()

    @bindings.add("c-o")
    def _last_output(event: KeyPressEvent) -> None:
        run_in_terminal(lambda: run(LAST_OUTPUT))  # printed above the prompt, the input line kept

    @bindings.add(Keys.BracketedPaste)
    def _paste(event: KeyPressEvent) -> None:
        # A file dragged onto the terminal arrives as its pasted path: an image's becomes a mention.
        text = event.data.replace("\r\n", "\n").replace("\r", "\n")
        event.current_buffer.insert_text(dropped_mentions(text, session.project_root) or text)

    @bindings.add("c-v")
    def _paste_image(event: KeyPressEvent) -> None:
        found = clipboard_image(os.environ)  # (a terminal sends Ctrl+V, never the image: a helper reads it)
        if isinstance(found, bytes):
            event.current_buffer.insert_text(mention(str(save_pasted(found))) + " ")
            return
        said = found or "the clipboard holds no image (text pastes with the terminal's own paste key)"
        run_in_terminal(lambda: print(said, flush=True))

    @bindings.add("c-c")
    def _cancel(event: KeyPressEvent) -> None:
        buffer = event.current_buffer
        if buffer.text:
            buffer.reset()  # first clear what was typed; an empty prompt counts toward exiting
        else:
            event.app.exit(exception=KeyboardInterrupt())

    root = session.project_root
    return PromptSession(
        history=input_history(session.redact),
        key_bindings=bindings,
        # The folders are listed again at most every 2 s while typing: a file added meanwhile shows up.
        completer=PathAndCommandCompleter(root, lambda: session_ids(root), lambda: commands.catalog(2.0)),
        complete_while_typing=True,
        bottom_toolbar=lambda: glyphs.fit(toolbar(get_app().output.get_size().columns), sys.stdout),
        enable_suspend=True,
    )
