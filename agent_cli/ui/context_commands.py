"""The slash commands that put the user in charge of the context: pins, the record, the undo.

    /pin [--project] TEXT   pin an instruction (a REPL line `# TEXT` does the same)
    /pins                   the pins, numbered
    /unpin N                remove one
    /record [edit]          the condensed record and where each part came from; edit it in $EDITOR
    /uncompact              undo the last compaction when what it removed fits

`commands.py` holds their rows; what they change is the session's (`AgentSession.pin`, ...).
"""

from __future__ import annotations

import contextlib
import os
import shlex
import subprocess
from collections.abc import Mapping
from pathlib import Path

from agent_cli.core.errors import AgentError, CommandError, ConfigError
from agent_cli.prompt.pins import PROJECT_PINS
from agent_cli.ui import typeahead
from agent_cli.ui.command_kit import CommandKit
from agent_cli.ui.reports import format_tokens

__all__ = ["editor_command", "pin", "pin_line", "pins", "record", "uncompact", "unpin"]

PROJECT_FLAG = "--project"


def pin_line(line: str) -> str | None:
    """The pin a REPL line asks for (`# never use tabs`), None for any other line. `#` must be
    followed by a space, so `#123 fails` still goes to the model."""
    if line.startswith("# ") and line[2:].strip():
        return line[2:].strip()
    return None


def pin(kit: CommandKit, arg: str) -> None:
    project = arg == PROJECT_FLAG or arg.startswith(PROJECT_FLAG + " ")
    text = arg[len(PROJECT_FLAG) :].strip() if project else arg
    found = kit.session.pin(text, project=project)
    if found is None:
        kit.renderer.info("already pinned (/pins lists them)")
        return
    number = next(i for i, p in enumerate(kit.session.pins, 1) if p.text == text)
    where = f", and saved to {PROJECT_PINS} for every session here" if project else ""
    kit.renderer.info(f"pinned as {number}{where}: every request carries it word for word (/unpin {number})")
    kit.refresh_context()


def pins(kit: CommandKit, arg: str) -> None:
    listed = kit.session.pins
    if not listed:
        kit.renderer.info("no pins: /pin TEXT (or a line `# TEXT`) pins an instruction")
        return
    for number, each in enumerate(listed, 1):
        origin = f"  ({PROJECT_PINS})" if each.project else ""
        kit.renderer.line(f"{number}. {each.text}{origin}")
    kit.renderer.info("/unpin N removes one; pins stay through compaction, /clear and --continue")


def unpin(kit: CommandKit, arg: str) -> None:
    if not arg.strip().isdigit():
        raise CommandError("/unpin needs the pin's number, as /pins lists it: /unpin 2")
    gone = kit.session.unpin(int(arg))
    also = f" (removed from {PROJECT_PINS} too)" if gone.project else ""
    kit.renderer.info(f"unpinned: {gone.text}{also}")
    kit.refresh_context()


def record(kit: CommandKit, arg: str) -> None:
    if arg == "edit":
        _edit_record(kit)
        return
    if arg:
        raise CommandError("/record shows the condensed record; /record edit opens it in your editor")
    view = kit.session.record()
    if view is None:
        kit.renderer.info("no condensed record in the context yet: it appears after a compaction (/compact)")
        return
    if view.origin is not None:
        kit.renderer.line(f"condensed record · {view.origin.how} · {view.origin.when}", "bold")
    for part in view.parts:
        kit.renderer.line(f"── {part.label}: {part.source}", "magenta")
        kit.renderer.line(part.text)
    for path in view.files:
        kit.renderer.info(f"names {path}")
    editable = "a native record cannot be edited" if view.native else "/record edit changes it"
    kit.renderer.info(f"{editable} · /uncompact undoes the compaction")


def _edit_record(kit: CommandKit) -> None:
    session = kit.session
    view = session.record()
    if view is None:
        raise AgentError("there is no condensed record in the context yet (/compact makes one)")
    if view.native:
        raise AgentError("this record is the provider's own (native compaction), signed: it cannot be edited")
    argv = editor_command(os.environ)
    path = session.log_dir / "record-edit.md"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
        f.write(view.text)
    try:
        with typeahead.released():  # the editor gets the terminal as the user set it
            done = subprocess.run([*argv, str(path)], check=False)
        with open(path, encoding="utf-8", errors="replace", newline="") as f:
            text = f.read()  # byte for byte: no newline translated
    except OSError as exc:
        raise AgentError(
            f"cannot run the editor {argv[0]}: {exc.strerror or exc}; the record is unchanged"
        ) from None
    finally:
        with contextlib.suppress(OSError):
            Path(path).unlink()
    if done.returncode != 0:
        kit.renderer.error(f"the editor exited with status {done.returncode}; the record is unchanged")
    elif not text.strip():
        kit.renderer.info("the file was empty: edit cancelled, the record is unchanged")
    elif text == view.text:
        kit.renderer.info("the record is unchanged")
    else:
        session.edit_record(text)
        kit.renderer.info(
            "the edited record is in the context from the next request on; the old one is in the archive"
        )
        kit.refresh_context()


def editor_command(env: Mapping[str, str]) -> list[str]:
    """$VISUAL, else $EDITOR, else vi, split as a shell would (`code --wait` is two words)."""
    value = env.get("VISUAL") or env.get("EDITOR") or "vi"
    try:
        argv = shlex.split(value)
    except ValueError as exc:
        raise ConfigError(f"cannot read the editor command {value!r}: {exc}") from None
    if not argv:
        raise ConfigError("$VISUAL / $EDITOR is empty")
    return argv


def uncompact(kit: CommandKit, arg: str) -> None:
    done = kit.session.uncompact()
    if done is None:
        kit.renderer.info("nothing to undo: no compaction since the session started (or since /clear)")
        return
    if done.over:
        kit.renderer.error(
            f"the {done.restored} messages would bring the context to {format_tokens(done.tokens)}, "
            f"{done.over:,} tokens more than the window holds; nothing changed"
        )
        return
    kit.renderer.info(
        f"compaction undone: {done.restored} messages are back, exactly as they were; the context is "
        f"{format_tokens(done.tokens)} and compacts again only once it has grown"
    )
    kit.refresh_context()
