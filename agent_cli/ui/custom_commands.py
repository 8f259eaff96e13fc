"""Markdown commands as the user meets them: `/NAME args` turned into the message sent, their rows
in `/help` and Tab completion, and the same expansion for `agent -p "/NAME args"`.

Which file a name means and how its body is expanded is `prompt.command_files` and
`prompt.command_text`; this module decides what the user is told. Invoking one says which file
it is (a repository's file speaks with the user's voice once sent, so its origin is shown), and
that Claude Code's `` !`cmd` `` lines are sent as text: a command file runs nothing by itself.
`@path` in a body is text too: the model reads the file with its tools if it needs to.

Everything shown here comes from files, the project's among them, so it is shown `visible`
(control characters written out) and on one line.
"""

from __future__ import annotations

from dataclasses import dataclass

from agent_cli.core.errors import ConfigError
from agent_cli.core.text import visible
from agent_cli.prompt.command_files import Catalog, CustomCommand, Refused
from agent_cli.prompt.command_text import expand, shell_lines

__all__ = [
    "MAX_SHOWN",
    "Invocation",
    "completion_rows",
    "custom_help_rows",
    "headless_prompt",
    "invoke",
    "one_line",
]

MAX_SHOWN = 100  # characters of a description in completion


def one_line(text: str, limit: int | None = None) -> str:
    """`text` safe for one line of the terminal: whitespace runs as one space, controls written out."""
    flat = " ".join(text.split())
    if limit is not None and len(flat) > limit:
        flat = flat[: limit - 1].rstrip() + "…"
    return visible(flat)


def _help_line(command: CustomCommand, limit: int | None = None) -> str:
    description = one_line(command.text.description, limit)
    return f"{description} ({command.label})" if description else f"({command.label})"


def custom_help_rows(catalog: Catalog) -> list[tuple[str, str]]:
    """`/name argument-hint` and `description (project:namespace)`, one row per command."""
    rows = []
    for command in catalog.commands:
        hint = one_line(command.text.argument_hint)
        rows.append((f"/{one_line(command.name)}" + (f" {hint}" if hint else ""), _help_line(command)))
    return rows


def completion_rows(catalog: Catalog, typed: str) -> list[tuple[str, str, str]]:
    """(inserted text, shown text, meta) for the commands whose name, or bare name, starts with
    `typed` (the word after `/`)."""
    typed = typed.lower()
    rows = []
    for command in catalog.commands:
        if command.name.startswith(typed) or command.base.startswith(typed):
            hint = one_line(command.text.argument_hint)
            shown = f"/{command.name}" + (f" {hint}" if hint else "")
            rows.append((f"/{command.name}", shown, _help_line(command, MAX_SHOWN)))
    return rows


@dataclass(frozen=True, slots=True)
class Invocation:
    """A command's expansion and what to tell the user about it."""

    command: CustomCommand
    text: str  # the message for the model
    origin: str  # "/review · .claude/commands/review.md (project)"
    warnings: tuple[str, ...] = ()


def invoke(catalog: Catalog, name: str, arguments: str) -> Invocation | str | None:
    """`/name arguments` expanded; a reason it cannot be (a refused file, an ambiguous bare name,
    an empty command) as one line; None when no file defines `name`."""
    found = catalog.find(name)
    if found is None:
        return None
    if isinstance(found, Refused):
        return f"/{name}: {found.shown_path} was not read: it {found.reason}"
    if isinstance(found, tuple):
        names = " or ".join(f"/{c.name}" for c in found)
        return f"/{name} could be {names}; type the full name"
    expansion = expand(found.text.body, arguments)
    if not expansion.text.strip():
        return f"/{found.name}: {found.shown_path} is empty; nothing was sent"
    warnings = []
    if shell_lines(found.text.body):
        warnings.append(f"/{found.name}: its !`...` shell lines are sent as text, not run")
    origin = f"/{found.name} · {found.shown_path} ({found.label})"
    return Invocation(found, expansion.text, visible(origin), tuple(visible(w) for w in warnings))


def headless_prompt(prompt: str, catalog: Catalog, name: str, arguments: str) -> tuple[str, list[str]]:
    """What `agent -p "/name arguments"` sends, and warnings for stderr: `prompt` itself when no
    file defines `name` (a path such as `/etc/hosts: ...` is a message); ConfigError when the
    command cannot be used."""
    result = invoke(catalog, name, arguments)
    if result is None:
        return prompt, []
    if isinstance(result, str):
        raise ConfigError(visible(result))
    concerning = [visible(n.text) for n in catalog.notices if n.name == result.command.name]
    return result.text, [*concerning, *result.warnings]
