"""The flags of `agent` as a value (`CliArgs`), and the plain headless call read without typer.

`agent -p "say hi"` (with --provider, --model, --output-format, --yes) is the call a script makes
most; reading it here spares it typer's import. Anything else goes to typer in cli.py, which parses
and checks it as it always has. Nothing here imports typer.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["GOAL_NOT_MET", "OUTPUT_FORMATS", "CliArgs", "print_flag_before_goal", "simple_headless"]

OUTPUT_FORMATS = ("text", "json", "stream-json")
# The exit code of a `--goal` run that ended without the goal met: its budget spent (or a round that
# ended without an answer and with no code of its own). 0 is met; 1, 2 and 130 keep their meanings.
GOAL_NOT_MET = 3


def print_flag_before_goal(argv: list[str]) -> list[str]:
    """`agent -p --goal '...'`: `-p` (which takes the prompt) given bare before `--goal` only says
    "headless", which `--goal` implies; it is dropped so the goal's value is not read as the prompt."""
    out: list[str] = []
    for n, word in enumerate(argv):
        after = argv[n + 1] if n + 1 < len(argv) else ""
        if word in ("-p", "--print") and (after == "--goal" or after.startswith("--goal=")):
            continue
        out.append(word)
    return out


@dataclass(frozen=True, slots=True)
class CliArgs:
    prompt: str | None = None
    provider: str | None = None
    model: str | None = None
    context_window: int | None = None
    config: Path | None = None
    yes: bool = False
    output_format: str = "text"
    continue_session: bool = False
    resume: str | None = None
    wire: str | None = None
    effort: str | None = None
    summary_model: str | None = None
    pins: tuple[str, ...] = ()
    permission_mode: str | None = None
    sandbox: str | None = None
    goal: str | None = None  # `--goal 'TEXT [--check COMMAND] [--budget USD]'`: a headless goal run


# The flags `simple_headless` reads without typer: each takes one value (the last one given wins,
# as with typer), and --yes / -y none. Anything else (another flag, `--flag=value`, a value that
# starts with "-", a subcommand) goes to typer, which parses and checks it as it always has.
_SIMPLE_VALUES = {"-p": "prompt", "--print": "prompt", "--provider": "provider", "--model": "model",
                  "--output-format": "output_format"}  # fmt: skip


def simple_headless(argv: list[str]) -> CliArgs | None:
    """The CliArgs of a plain headless call (`-p PROMPT`, with --provider, --model, --output-format,
    --yes), or None for anything typer must parse."""
    values: dict[str, str] = {}
    yes = False
    rest = iter(argv)
    for flag in rest:
        if flag in ("--yes", "-y"):
            yes = True
            continue
        name = _SIMPLE_VALUES.get(flag)
        value = next(rest, None)
        if name is None or value is None or value.startswith("-"):
            return None
        values[name] = value
    if "prompt" not in values:
        return None
    return CliArgs(
        prompt=values["prompt"],
        provider=values.get("provider"),
        model=values.get("model"),
        output_format=values.get("output_format", "text"),
        yes=yes,
    )
