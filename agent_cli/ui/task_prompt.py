"""What a headless task is asked: the prompt (`-p`, or piped stdin), what was piped in next to it,
and the Markdown command the prompt names.

    agent -p "/fix-issue 123"            the command's body, expanded (`custom_commands.py`)
    agent -p "/init"                     /init's request: read the project, write AGENTS.md
    cat log | agent -p "why does it fail?"   the prompt, then the log in a `<stdin>` block

A prompt that names no command file (`/etc/hosts: what is this?`, or a REPL command such as
`/compact`) is sent as it is; `/init` is the one REPL command that is a request to the model, and
sends what it sends in the REPL. The stdin block goes after the expansion, as after any prompt.
"""

from __future__ import annotations

import os
import select
import stat
import sys
from collections.abc import Mapping
from pathlib import Path

from agent_cli.core.text import clean, decode, visible
from agent_cli.ui.commands import custom_command_files, parse
from agent_cli.ui.custom_commands import headless_prompt
from agent_cli.ui.everyday_commands import init_prompt

__all__ = ["STDIN_NOTE_AFTER", "read_piped", "task_prompt", "with_piped_input"]

STDIN_NOTE_AFTER = 3.0  # seconds without a byte on a piped stdin before saying what is awaited


def task_prompt(prompt: str, piped: str, root: Path, env: Mapping[str, str]) -> str:
    """The message a headless task sends: `prompt` (a Markdown command expanded; warnings about it
    on stderr), then `piped` when there is any. ConfigError when the command cannot be used."""
    command = parse(prompt)
    if command is not None and command.known and command.name == "init":
        prompt = init_prompt(root, command.arg)
    elif command is not None and not command.known:
        catalog = custom_command_files(root, env).catalog()
        prompt, warnings = headless_prompt(prompt, catalog, command.name, command.arg)
        for warning in warnings:
            print(f"agent: warning: {visible(warning)}", file=sys.stderr, flush=True)
    return with_piped_input(prompt, piped) if piped else prompt


def with_piped_input(prompt: str, piped: str) -> str:
    """The prompt, then what was piped in, in a `<stdin>` block (as Codex frames it): the model can tell
    the user's words from the data, and the data ends where the block does."""
    return f"{prompt}\n\n<stdin>\n{piped.rstrip()}\n</stdin>"


def read_piped() -> str:
    """What a pipe or a redirected file on stdin holds (text, odd bytes as U+FFFD), read to its end.

    A terminal, /dev/null or any other device gives "" without a read. A pipe is read until the
    writer closes it, as `cat` would; when nothing has come for a while and stderr is a terminal,
    one line says what is awaited (a caller that leaves stdin open for ever would wait for ever).
    """
    try:
        fd = sys.stdin.fileno()
        mode = os.fstat(fd).st_mode
    except (AttributeError, OSError, ValueError):  # no stdin at all, or a closed one
        return ""
    if not (stat.S_ISFIFO(mode) or stat.S_ISREG(mode) or stat.S_ISSOCK(mode)):
        return ""
    if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
        ready, _, _ = select.select([fd], [], [], STDIN_NOTE_AFTER)
        if not ready and sys.stderr.isatty():
            print(
                "agent: waiting for the piped input to end (run with < /dev/null to go without it)",
                file=sys.stderr,
                flush=True,
            )
    text = clean(decode(sys.stdin.buffer.read())).strip("\n")
    return text if text.strip() else ""
