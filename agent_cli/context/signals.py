"""What a tool call says about files and failures, read mechanically.

Pure functions shared by the fidelity check and the no-LLM digest: the paths
a call touched (its `path`-like inputs, and the path-shaped words of a shell
command line), and the error a result reports. A result reports an error when
it is flagged as one, or when it is command output whose closing status line
(`[exit code N]` with N != 0, `[killed by signal N]`, `[timed out ...]`, as the
bash tool writes them) says the command failed: a failing `pytest` or `make`
is not a tool error, but it is the error the user cares about. And the next
step the assistant stated: a line of its text that starts "Next", "Plan:" or
"TODO" ("Next: re-run the tests", "Next, I'll read the config").
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from agent_cli.core.messages import ToolResult, ToolUse

__all__ = [
    "NEXT_STEP_LINE",
    "Failure",
    "call_paths",
    "command_of",
    "command_paths",
    "failure",
    "last_exit_code",
    "stated_next_step",
]

PATH_KEYS = ("path", "file_path", "notebook_path", "paths", "files")
COMMAND_KEYS = ("command", "cmd")
MAX_COMMAND_PATHS = 12
# The bash tool's closing line; "exit 3" / "exit status 3" in other tools' output too.
_STATUS_RE = re.compile(
    r"^\[(exit code (-?\d+|None)|killed by signal \d+|timed out[^\]]*|cancelled[^\]]*)\]$"
)
_EXIT_RE = re.compile(r"exit(?:ed)?(?:[ _]code|[ _]status)?\s*[:=]?\s*(-?\d+)", re.IGNORECASE)
# Lines that name an error, strongest first: "E   KeyError: 'id'" tells more than "1 failed".
_ERROR_WORDS = (
    # An error stated: an exception's type, `error:` / `error[E0502]:`, pytest's `E   ` lines.
    re.compile(r"\b[A-Z]\w*(?:Error|Exception)\b|(?i:\berror(?:\[\w+\])?:|\b(?:fatal|panic):)|^E\s{2,}\S"),
    re.compile(r"error|exception|traceback|fatal|panic|denied|not found|no such|cannot", re.IGNORECASE),
    re.compile(r"fail", re.IGNORECASE),
)
_SUBSTITUTION_RE = re.compile(r"^[sy]/.*/.*/\w*$")  # sed's s/old/new/g is not a path
# A word of a command line that names a file: has a slash, or ends in a short extension.
_EXT_RE = re.compile(r"^[\w.@+-]*[\w@+-]\.[A-Za-z][A-Za-z0-9]{0,5}$")
NEXT_STEP_CHARS = 300
# How the fidelity check writes a next step into a record; read back as the step it carries.
NEXT_STEP_LINE = "- The next step the assistant stated last: "
# A line in which the assistant says what it will do next: "Next: ...", "Next, I'll ...", "**Next step:**".
_NEXT_STEP = re.compile(r"^\W{0,4}(?:next(?: steps?)?\W?[\s:,]|todo\b|plan:)", re.IGNORECASE)
# In a record, where a summarizer may run lines together: "Next:" or "Next step:" inside a line too.
_NEXT_STEP_INSIDE = re.compile(r"(?:^|\W)(next(?: steps?)?:\s*\S.*)$", re.IGNORECASE)
_SHELL_CHARS = set("$*?{}<>|&;()`'\"!=,")
_SKIP_PREFIXES = ("/dev/", "/proc/", "-")


@dataclass(frozen=True, slots=True)
class Failure:
    line: str  # the most telling line of the failure
    status: str = ""  # "exit code 2", "timed out after 30s", ... ("" for a flagged tool error)


def command_of(use: ToolUse | None) -> str | None:
    """The shell command a call ran, if it is a command-running call."""
    if use is None:
        return None
    for key in COMMAND_KEYS:
        value = use.input.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return None


def _words(command: str) -> list[str]:
    try:
        return shlex.split(command, comments=False, posix=True)
    except ValueError:  # unbalanced quotes: plain words are good enough
        return command.split()


def command_paths(command: str) -> list[str]:
    """The path-shaped words of a shell command line, first-seen order (`cat src/a.py | wc` -> src/a.py)."""
    found: dict[str, None] = {}
    previous = ""
    for word in _words(command):
        candidate = word.rstrip(",;:)")
        if "=" in candidate and candidate.startswith("-"):  # --file=src/a.py
            candidate = candidate.split("=", 1)[1]
        ok = (
            candidate
            and len(candidate) <= 200
            and not candidate.startswith(_SKIP_PREFIXES)
            and "://" not in candidate
            and not (set(candidate) & _SHELL_CHARS)
            and any(c.isalnum() for c in candidate)
            and previous not in ("-m", "-c", "-e")  # python -m pkg.mod, sh -c '...', sed -e '...'
            and _SUBSTITUTION_RE.match(candidate) is None
            and ("/" in candidate or _EXT_RE.match(candidate) is not None)
            and not re.fullmatch(r"[\d.]+", candidate)  # version numbers
        )
        if ok:
            found.setdefault(candidate, None)
            if len(found) >= MAX_COMMAND_PATHS:
                break
        previous = word
    return list(found)


def call_paths(use: ToolUse) -> list[str]:
    """Every path a call touched: its path inputs, then the paths in its command line."""
    found: dict[str, None] = {}
    for key in PATH_KEYS:
        value = use.input.get(key)
        values = [value] if isinstance(value, str) else value if isinstance(value, list) else []
        for item in values:
            if isinstance(item, str) and item.strip() and item.strip() not in (".", "./"):
                found.setdefault(item.strip(), None)
    command = command_of(use)
    if command is not None:
        for path in command_paths(command):
            found.setdefault(path, None)
    return list(found)


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def last_exit_code(text: str) -> str | None:
    """The last exit code the output states ("exit code 2" -> "2"), or None."""
    matches = _EXIT_RE.findall(text[-2_000:])
    return matches[-1] if matches else None


def _telling(body: list[str]) -> str:
    """The last line that names an error (strongest words first), else the last line printed."""
    for words in _ERROR_WORDS:
        for line in reversed(body):
            if words.search(line):
                return line
    return body[-1] if body else ""


def failure(result: ToolResult, limit: int = 200) -> Failure | None:
    """The error `result` reports, or None when it reports none."""
    lines = _lines(result.content)
    if not lines:
        return None
    status = _STATUS_RE.match(lines[-1])
    if status is not None:
        code = status.group(2)
        failed = result.is_error or code is None or code not in ("0",)
        if not failed:
            return None
        body = lines[:-1]
        return Failure((_telling(body) or lines[-1])[:limit], status.group(1))
    if result.is_error:
        return Failure(lines[0][:limit])
    return None


def stated_next_step(text: str, *, record: bool = False) -> str:
    """The last line of `text` that says what comes next, cut to NEXT_STEP_CHARS; else "".
    In a `record` (an earlier summary), a "Next:" inside a line counts too, from that word on."""
    for line in reversed(text.splitlines()):
        step = _step_in(line.strip(), record)
        if step:
            return step if len(step) <= NEXT_STEP_CHARS else step[:NEXT_STEP_CHARS] + " ..."
    return ""


def _step_in(line: str, record: bool) -> str:
    written = NEXT_STEP_LINE.strip()
    if line.startswith(written):  # the check's own line in a record: the step as it was stated
        return line[len(written) :].strip()
    if _NEXT_STEP.match(line):
        return line
    inside = _NEXT_STEP_INSIDE.search(line) if record else None
    return inside.group(1) if inside is not None else ""
