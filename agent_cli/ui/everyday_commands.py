"""The everyday commands a Claude Code user brings along: /init, /diff, /copy, /export, /memory, /status.

    /init            a turn: the model reads the project and writes AGENTS.md (or improves the one
                     there) through write_file, so the write is asked about as any other
    /diff            what the session changed in the files (from /rewind's records), then `git diff`
                     when the project is in a repository whose git config runs nothing
    /copy            the last answer to the clipboard (OSC 52, under `OSC52_MAX` bytes) and to a
                     file in the session's folder; both are said, since a terminal ignores OSC 52
                     silently
    /export [FILE]   the conversation as Markdown, by default `agent-session-<id>.md` in the project
                     (as Claude Code writes to the working folder); an existing file is overwritten
                     only when the user says so
    /memory [N]      the instruction files (AGENTS.md, CLAUDE.md, .agent/pins.md) and the user's own
                     memory file (prompt/memories.py: the remember tool saves there), opened in $VISUAL
    /status          model, provider, where it is served, sandbox, approvals, MCP servers, hooks, context

`commands.py` holds their rows. Every text from the model, a file or git is shown `visible`.
"""

from __future__ import annotations

import base64
import os
import re
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from agent_cli.agent.modes import LABELS
from agent_cli.agent.session_diff import git_diff
from agent_cli.core.errors import AgentError, CommandError
from agent_cli.core.text import visible
from agent_cli.prompt.instructions import INSTRUCTION_FILES
from agent_cli.prompt.memories import user_memory_path
from agent_cli.prompt.pins import PROJECT_PINS
from agent_cli.providers.registry import wire_for
from agent_cli.providers.server_search import web_search_gap
from agent_cli.store.log_records import read_log
from agent_cli.store.private_write import write_private
from agent_cli.ui.command_kit import CommandKit
from agent_cli.ui.context_commands import editor_command
from agent_cli.ui.edit_diff import EditDiff, diff_text
from agent_cli.ui.markdown_export import export_markdown, last_answer
from agent_cli.ui.reports import format_context_line, format_tokens

if TYPE_CHECKING:
    from agent_cli.session import AgentSession

__all__ = [
    "COPY_FILE",
    "GIT_LINES",
    "OSC52_MAX",
    "copy",
    "diff",
    "export",
    "init",
    "init_prompt",
    "memory",
    "osc52",
    "status",
]

OSC52_MAX = 100_000  # bytes of text sent to the clipboard through the terminal (many cap near this)
COPY_FILE = "last-answer.md"  # in the session's folder
GIT_LINES = 3_000  # of `git diff`, shown
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")

INIT_PROMPT = (
    "Please analyse this project and write an AGENTS.md file at its root: the guide a coding agent "
    "reads first in every session here. Read what tells you how the project works (README, the build "
    "and package files, the test set-up, the main source folders, any CONTRIBUTING or style notes, "
    "and any CLAUDE.md, .cursorrules or .github/copilot-instructions.md). Then write, concisely: the "
    "commands to build, lint and test (and to run one test), the layout and architecture that takes "
    "reading several files to see, and the conventions the code follows. Leave out what any reader "
    "sees at a glance and generic advice. Write the file with the write_file tool."
)
INIT_IMPROVE = (
    " There is an AGENTS.md already: read it first, and improve it (keep what is right, correct what "
    "is stale, add what is missing) rather than starting over."
)


# ---- /init -------------------------------------------------------------------------------------


def init_prompt(root: Path, notes: str) -> str:
    """What /init asks the model (`agent -p /init` too): to improve AGENTS.md when there is one."""
    there = (root / "AGENTS.md").exists()
    return INIT_PROMPT + (INIT_IMPROVE if there else "") + (f"\n\nThe user adds: {notes}" if notes else "")


def init(kit: CommandKit, arg: str) -> None:
    root = kit.session.project_root
    verb = "improve AGENTS.md" if (root / "AGENTS.md").exists() else "write AGENTS.md"
    kit.renderer.info(f"the model reads the project to {verb}; the write is asked about like any other")
    kit.drive(kit.session.run(init_prompt(root, arg)))
    kit.refresh_context()


# ---- /diff -------------------------------------------------------------------------------------


def _summary(lines: tuple[str, ...]) -> str:
    added = sum(1 for line in lines if line.startswith("+") and not line.startswith("+++"))
    removed = sum(1 for line in lines if line.startswith("-") and not line.startswith("---"))
    return f"+{added} -{removed} lines"


def diff(kit: CommandKit, arg: str) -> None:
    session, out = kit.session, kit.renderer
    found = session.changes()
    if not found.files and not found.lost:
        out.info("the session has changed no file (or every change was undone)")
    for each in found.files:
        out.line(visible(each.path), "bold")
        if each.note:
            out.info(f"  {each.note}")
        else:
            out.show(diff_text(EditDiff(each.path, each.lines, _summary(each.lines)), None))
    for lost in found.lost:
        out.warn(f"{visible(lost.path)} changed, and how it was is not kept: {lost.why}")
    git = git_diff(session.project_root)
    if not git.repository:
        return
    if git.refused:
        out.warn(f"git diff not run: {git.refused}")
        return
    if not git.text.strip():
        out.info("git diff: no unstaged changes in the repository")
        return
    lines = tuple(git.text.rstrip("\n").split("\n"))
    out.line("git diff (the work tree against the index)", "bold")
    shown = lines[:GIT_LINES]
    out.show(diff_text(EditDiff("git diff", shown, _summary(lines)), None))
    if len(lines) > len(shown):
        out.info(f"{len(lines) - len(shown):,} more lines: run git diff yourself for the rest")


# ---- /copy -------------------------------------------------------------------------------------


def osc52(text: str) -> str:
    """The escape that asks a terminal to put `text` on the clipboard."""
    return "\x1b]52;c;" + base64.b64encode(text.encode("utf-8")).decode("ascii") + "\x07"


def copy(kit: CommandKit, arg: str) -> None:
    session, out = kit.session, kit.renderer
    text = last_answer(session.history)
    if text is None:
        out.info("no answer to copy yet")
        return
    text = _CONTROLS.sub("", text)  # the clipboard is pasted into terminals too
    path = session.log_dir / COPY_FILE
    kept = session.redact(text)  # the session's folder never holds a key (the history is redacted too)
    write_private(path, kept.encode("utf-8"))
    size = len(text.encode("utf-8"))
    console = out.console
    if not console.is_terminal:
        out.info(
            f"the last answer ({len(text):,} characters) is not copied: there is no terminal to copy through"
        )
    elif size > OSC52_MAX:
        out.info(
            f"the last answer is {size:,} bytes, over the {OSC52_MAX:,} bytes sent to the clipboard "
            "through the terminal: it is not copied"
        )
    else:
        console.file.write(osc52(text))
        console.file.flush()
        out.info(
            f"copied the last answer ({len(text):,} characters) through the terminal (OSC 52; a terminal "
            "that does not take it ignores it without a word)"
        )
    out.info(f"the answer is in {path}")  # (on a line of its own: the path is not broken)


# ---- /export -----------------------------------------------------------------------------------


def export(kit: CommandKit, arg: str) -> None:
    session, out = kit.session, kit.renderer
    root = session.project_root
    name = arg.strip() or f"agent-session-{session.id}.md"
    path = Path(os.path.expanduser(name))
    path = path if path.is_absolute() else root / path
    if path.is_symlink():
        raise CommandError(f"{visible(str(path))} is a symbolic link: not written through; name another file")
    if path.is_dir():
        raise CommandError(f"{visible(str(path))} is a folder; name a file: /export FILE")
    if path.exists() and not _overwrite(kit, path):
        return
    records, _ = read_log(session.transcript_path)
    text = export_markdown(session.id, records)
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise AgentError(f"cannot write {visible(str(path))}: {exc.strerror or exc}") from None
    out.info(f"exported the conversation ({text.count(chr(10)):,} lines of Markdown) to")
    out.info(f"  {path}")  # (on a line of its own: the path is not broken)


def _overwrite(kit: CommandKit, path: Path) -> bool:
    shown = visible(str(path))
    if kit.chooser is None:
        raise CommandError(f"{shown} exists: /export ANOTHER-FILE, or remove it first")
    chosen = kit.chooser(f"{shown} exists: overwrite it?", ["no, keep it", "yes, overwrite it"], 0)
    if chosen != 1:
        kit.renderer.info("nothing exported")
        return False
    return True


# ---- /memory -----------------------------------------------------------------------------------


def memory_files(root: Path, user_file: Path) -> list[tuple[Path, str]]:
    """The instruction files a session here reads at start, and what each is (the two the remember
    tool saves to among them)."""
    files = [(root / name, "project instructions, in the system prompt") for name in INSTRUCTION_FILES]
    files.append((root / PROJECT_PINS, "the project's pins (/pin --project, remember): word for word"))
    files.append((user_file, "your own memories (remember with scope user), in every project"))
    return files


def _named(path: Path, root: Path) -> str:
    return str(path.relative_to(root)) if path.is_relative_to(root) else str(path)


def memory(kit: CommandKit, arg: str) -> None:
    root, out = kit.session.project_root, kit.renderer
    files = memory_files(root, user_memory_path(os.environ))
    rows = [
        f"{n}. {visible(_named(p, root))}  {'' if p.exists() else '(not there yet) '}· {what}"
        for n, (p, what) in enumerate(files, 1)
    ]
    if arg:
        if not arg.isdigit() or not 1 <= int(arg) <= len(files):
            raise CommandError(f"/memory N opens file N of the {len(files)} that /memory lists")
        chosen: int | None = int(arg) - 1
    elif kit.chooser is not None:
        chosen = kit.chooser("open which instruction file in your editor?", rows, 0)
        if chosen is None:
            return
    else:
        for row in rows:
            out.line(row)
        out.info("/memory N opens one in $VISUAL / $EDITOR")
        return
    assert chosen is not None
    _edit(kit, files[chosen][0])


def _edit(kit: CommandKit, path: Path) -> None:
    shown = visible(str(path))
    if path.is_symlink():
        raise CommandError(f"{shown} is a symbolic link: open what it names yourself")
    argv = editor_command(os.environ)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        done = subprocess.run([*argv, str(path)], check=False)
    except OSError as exc:
        raise AgentError(f"cannot run the editor {visible(argv[0])}: {exc.strerror or exc}") from None
    if done.returncode != 0:
        kit.renderer.error(f"the editor exited with status {done.returncode}")
        return
    kit.renderer.info(f"{shown}: read at start-up, so a change applies from the next session")


# ---- /status -----------------------------------------------------------------------------------


def _served_at(base_url: str | None) -> str:
    if not base_url:
        return "the provider's own API"
    parts = urlsplit(base_url)
    return visible(parts.hostname or "?") + (
        f":{parts.port}" if parts.port else ""
    )  # (never the path or a key)


def _base_url_variable(session: AgentSession) -> str:
    """The environment variable the provider's SDK reads its address from (ANTHROPIC_BASE_URL, ...)."""
    return f"{session.provider_name.upper()}_BASE_URL"


def _web_search(session: AgentSession) -> str:
    """The provider's web search: offered, or why not (one line)."""
    settings = session.settings
    if not settings.web.search:
        return "off ([web] search = false)"
    gap = web_search_gap(session.provider_name, wire_for(settings.provider), session.model)
    return "the provider's own (runs on its servers)" if gap is None else f"not offered: {gap}"


def status(kit: CommandKit, arg: str) -> None:
    session, out = kit.session, kit.renderer
    settings = session.settings
    mode = session.mode.mode
    approvals = "ask before tools that change things" if mode == "default" else LABELS[mode]
    if mode == "auto" and not session.mode.sandboxed:
        approvals = "auto mode, but no sandbox confines commands: asks as default mode"
    if settings.approvals.yes:
        approvals = "every tool call approved (--yes)"
    rows = [
        ("model", f"{session.model} ({format_tokens(session.window)} window)"),
        ("provider", session.provider_name),
        ("served at", _served_at(settings.provider.base_url or os.environ.get(_base_url_variable(session)))),
        ("sandbox", visible(session.sandbox_line)),
        ("approvals", approvals),
        ("web search", visible(_web_search(session))),
        ("session", f"{session.id} · {session.log_dir}"),
    ]
    for label, value in rows:
        out.line(f"{label + ':':<11} {value}")
    out.line("MCP:", "bold")
    for line in session.extension_report():
        out.line(f"  {line}")
    out.line("hooks:", "bold")
    for line in session.hook_lines or ("none",):
        out.line(f"  {visible(line)}")
    th = session.thresholds
    try:
        tokens: int | None = session.context_tokens()
    except AgentError:
        tokens = None
    context = format_context_line(
        session.model, tokens, th.window, th.trigger_at, settings.context.trigger_ratio
    )
    out.line(f"{'context:':<11} {context}")
