"""What `/rewind` shows: the list of prompts, what a rewind did, and how its argument reads.

    parse_rewind(arg) -> RewindArgs       `N`, `N --chat`, `N --code` (CommandError otherwise)
    point_lines(points, width) -> [str]   one line per prompt and one under it for what its turn changed
    point_row(point, width) -> str        a prompt and what its turn did on one row (the list to choose from)
    rewound_lines(rewound) -> [(text, style)]

Prompt texts, file names and commands come from the user, the model and the project's files: each
is made visible (`visible`, control characters written out) and flattened to one line before it is
cut to the width, so no escape sequence of a cloned repository's file name reaches the terminal.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agent_cli.agent.rewind import RewindPoint, Rewound
from agent_cli.core.errors import CommandError
from agent_cli.core.text import visible

__all__ = [
    "REWIND_CHOICES",
    "REWIND_HINT",
    "REWIND_USAGE",
    "RewindArgs",
    "parse_rewind",
    "point_lines",
    "point_row",
    "rewound_lines",
]

REWIND_USAGE = "/rewind lists the prompts; /rewind N [--chat | --code] goes back to before prompt N"
# What a rewind chosen from the list puts back: (label, the conversation, the files).
REWIND_CHOICES = (
    ("the conversation and the files", True, True),
    ("the conversation only", True, False),
    ("the files only", False, True),
)
REWIND_HINT = "/rewind N goes back to before prompt N: the conversation and the files (--chat, --code: one)"
MAX_NAMED = 5  # files and commands named on a prompt's line; the rest are counted


@dataclass(frozen=True, slots=True)
class RewindArgs:
    number: int | None = None  # None: list the prompts
    chat: bool = True
    code: bool = True


def parse_rewind(arg: str) -> RewindArgs:
    words = arg.split()
    if not words:
        return RewindArgs()
    flags = {w for w in words if w.startswith("-")}
    numbers = [w for w in words if not w.startswith("-")]
    if len(numbers) != 1 or not numbers[0].isdigit() or flags - {"--chat", "--code"} or len(flags) > 1:
        raise CommandError(f"cannot read {' '.join(visible(arg).split())!r}: {REWIND_USAGE}")
    return RewindArgs(int(numbers[0]), chat="--code" not in flags, code="--chat" not in flags)


def _one_line(text: str) -> str:
    return " ".join(visible(text).split())


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(width - 1, 1)] + "…"


def _named(items: Sequence[str]) -> str:
    """The first few items, each on one line and visible, and how many more."""
    shown = ", ".join(_one_line(i) for i in items[:MAX_NAMED])
    more = len(items) - MAX_NAMED
    return shown + (f" and {more} more" if more > 0 else "")


def _done(point: RewindPoint) -> str:
    """What the prompt's turn changed: the files, the commands."""
    done = []
    if point.files:
        done.append(f"changed {_named(point.files)}")
    if point.commands:
        done.append(f"ran {_named(point.commands)}")
    return "; ".join(done) if done else "no files changed, no commands run"


def point_lines(points: Sequence[RewindPoint], width: int = 100) -> list[str]:
    """The prompts, numbered, each with what its turn changed on the line under it."""
    lines: list[str] = []
    for point in points:
        lines.append(_cut(f"{point.number:>3}  {_one_line(point.text) or '(empty)'}", width))
        lines.append(_cut(f"     {_done(point)}", width))
    return lines


def point_row(point: RewindPoint, width: int = 100) -> str:
    """A prompt on one row, for the list to choose from: its number, the prompt, and what its turn
    changed; when they do not fit, the prompt keeps at least half the row and the rest is cut."""
    head = f"{point.number:>3}  "
    prompt = _one_line(point.text) or "(empty)"
    done = f"  · {_done(point)}"
    room = max(width - len(head) - len(done), min(len(prompt), (width - len(head)) // 2))
    return _cut(head + _cut(prompt, room) + done, width)


def rewound_lines(rewound: Rewound) -> list[tuple[str, str]]:
    """What the rewind did, and (as warnings) every path it could not put back, each with why."""
    n = rewound.point.number
    out: list[tuple[str, str]] = []
    if rewound.chat:
        out.append((f"conversation rewound to before prompt {n}; its text is back in the input line", "bold"))
    restored = rewound.restored
    if restored is None:
        out.append(("files left as they are (--chat)", "dim"))
        return out
    if not rewound.chat:
        out.append((f"files rewound to before prompt {n}; the conversation goes on (--code)", "bold"))
    counts = ((restored.written, "restored"), (restored.removed, "removed"), (restored.made, "folders made"))
    parts = [f"{len(paths)} {what} ({_named(sorted(paths))})" for paths, what in counts if paths]
    out.append((("files: " + "; ".join(parts)) if parts else "no file changed since that prompt", "dim"))
    for lost in restored.unrestored:
        out.append((f"! not restored: {_one_line(lost.path)} ({_one_line(lost.why)})", "yellow"))
    for note in restored.notes:
        out.append((f"! {_one_line(note)}", "yellow"))
    return out
