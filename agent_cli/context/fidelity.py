"""The mechanical check a condensed record must pass, and its repair.

Pure. Before a record replaces a span, code checks that four things a model
most often drops survive: the user's last request, every file path a tool
call touched, the latest error, and the next step the assistant stated since
that request. Whatever the record (or the verbatim tail kept after it) does not
mention is appended as its own section, so amnesia about "which files", "what
failed last" and "what was I about to do" cannot happen silently.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from agent_cli.context.clear import is_stub, stub_failure
from agent_cli.context.cut import is_engine_note
from agent_cli.context.signals import NEXT_STEP_LINE, call_paths, failure, stated_next_step
from agent_cli.core.messages import Message

__all__ = [
    "FILES_HEADER",
    "Facts",
    "carried_paths",
    "carried_unlisted",
    "check",
    "files_section",
    "misses_key_facts",
    "repair",
    "span_facts",
]

REQUEST_PROBE_CHARS = 160  # how much of the request must appear verbatim
# Every record ends with the files touched so far, built by code and carried from record to
# record, so "which files" survives any number of compactions whatever the model wrote.
# In a small window the list counts inside the record's budget: cut from the middle (`files_section`).
FILES_HEADER = "## Files touched so far (listed by code)"
MAX_LISTED_FILES = 300
FIRST_LISTED = 3  # a long list keeps the files the work began with, then the newest
UNLISTED = " more files touched between these, not listed; recall finds them)"
ERROR_PROBE_CHARS = 200


@dataclass(frozen=True, slots=True)
class Facts:
    last_request: str | None = None
    paths: tuple[str, ...] = ()
    last_error: str | None = None  # the first line of the latest error result
    error_call: str = ""  # the call that produced it
    next_step: str | None = None  # the line in which the assistant last said what it would do next
    unlisted: int = 0  # files an earlier list in the span left out (its gap line counts them)

    def __bool__(self) -> bool:
        return bool(self.last_request or self.paths or self.last_error or self.next_step)


def span_facts(span: Sequence[Message]) -> Facts:
    """The last user request, the paths touched (first-seen order), the latest error and the next
    step stated since that request (an earlier record's, or the assistant's own) in `span`.

    Paths come from path inputs and from command lines (`pytest tests/test_a.py`);
    an error is a flagged tool error or a command that exited non-zero; for a result L1 already
    cleared, the error line its stub records.
    """
    request: str | None = None
    error: str | None = None
    error_call = ""
    step: str | None = None
    paths: dict[str, None] = {}
    calls: dict[str, str] = {}
    unlisted = 0
    for message in span:
        if message.summary is not None:
            step = stated_next_step(message.summary.text, record=True) or None
        # An earlier record's list, or the one an L4 marker kept of what it dropped.
        listed = message.summary.text if message.summary is not None else None
        if listed is None and is_engine_note(message):
            listed = message.text
        if listed is not None and FILES_HEADER in listed:
            for path in carried_paths(listed):
                paths.setdefault(path, None)
            unlisted = max(unlisted, carried_unlisted(listed))
        if message.is_plain_user and not is_engine_note(message) and message.text.strip():
            request = message.text.strip()
            step = None  # a new request: the plan stated before it is no longer the next step
        if message.role == "assistant":
            step = stated_next_step(message.text) or step
        for use in message.tool_uses:
            calls[use.id] = f"{use.name} {json.dumps(dict(use.input), ensure_ascii=False, sort_keys=True)}"
            for path in call_paths(use):
                paths.setdefault(path, None)
        for result in message.tool_results:
            # A result L1 cleared keeps its error line in its stub (`clear.held`).
            failed = stub_failure(result.content) if is_stub(result) else failure(result, ERROR_PROBE_CHARS)
            if failed is not None:
                error = failed.line
                error_call = calls.get(result.tool_use_id, "a tool call")
                if failed.status:
                    error_call += f" ({failed.status})"
    return Facts(request, tuple(paths), error, error_call, step, unlisted)


def _norm(text: str) -> str:
    return " ".join(text.split()).lower()


def check(facts: Facts, record: str, tail: Sequence[Message]) -> Facts:
    """The facts that neither `record` nor the kept `tail` mentions."""
    tail_text = "\n".join(_message_text(m) for m in tail)
    haystack = _norm(record + "\n" + tail_text)
    request = facts.last_request
    if request is not None and _norm(request[:REQUEST_PROBE_CHARS]) in haystack:
        request = None
    paths = tuple(p for p in facts.paths if _norm(p) not in haystack)
    error = facts.last_error
    if error is not None and _error_probe(error) in haystack:
        error = None
    step = facts.next_step
    if step is not None and _norm(step[:REQUEST_PROBE_CHARS]) in haystack:
        step = None
    return Facts(request, paths, error, facts.error_call, step, facts.unlisted)


def misses_key_facts(span: Sequence[Message], tail: Sequence[Message], body: str) -> bool:
    """Whether a model's record (before repair) fails the check: it drops the latest error, or every
    file the span touched. The repair still fixes the record; the summarizer latch counts it."""
    if not body:
        return False
    facts = span_facts(span)
    missing = check(facts, body, tail)
    lost_error = bool(facts.last_error and missing.last_error)
    lost_files = bool(facts.paths) and len(missing.paths) == len(facts.paths)
    return lost_error or lost_files


def _error_probe(error: str) -> str:
    """The distinctive start of an error line, without short prefixes such as pytest's "E" or ">"."""
    words = _norm(error).split()
    while len(words) > 1 and (len(words[0]) <= 2 or not any(c.isalnum() for c in words[0])):
        words.pop(0)
    return " ".join(words[:12])


def repair(record: str, missing: Facts, paths: Sequence[str] | None = None) -> str:
    """`record` with what the check found missing, and the files section.

    The files section lists `paths` (every file touched so far, carried from the
    earlier record) or, without them, the paths the record left out.
    """
    parts = [record.rstrip()]
    if missing.last_request or missing.last_error or missing.next_step:
        lines = ["## Also in the replaced part (added by a mechanical check)"]
        if missing.last_request:
            lines.append(f"- The user's last request: {missing.last_request}")
        if missing.last_error:
            lines.append(f"- Latest error, from {missing.error_call}: {missing.last_error}")
        if missing.next_step:
            lines.append(NEXT_STEP_LINE + missing.next_step)
        parts.append("\n".join(lines))
    files = files_section(missing.paths if paths is None else paths, unlisted=missing.unlisted)
    if files:
        parts.append(files)
    return "\n\n".join(parts) if len(parts) > 1 else record


def files_section(
    paths: Sequence[str],
    *,
    budget: int | None = None,
    count: Callable[[str], int] | None = None,
    unlisted: int = 0,
) -> str:
    """The code-built list of every file touched so far ("" when none), in the order first touched.
    When it is long (more than `MAX_LISTED_FILES`, or over `budget` tokens by `count`: a small
    window's record), the files the work began with (`FIRST_LISTED`) and the newest are kept, and a
    line between them counts the files left out (with `unlisted`, those an earlier list had left
    out already), which recall still finds: a list cut from the middle, as a long output is. A path
    another one names already is left out (`_distinct`): a folder that holds a path listed
    (`/repo/lib` beside `/repo/lib/a.ex`), and a second spelling of one (`./lib/a.ex`, `lib/a.ex`)."""
    paths = _distinct(paths)
    if not paths:
        return ""
    whole = _lines((), paths, 0)
    fits = budget is None or count is None or count("\n".join(whole)) <= budget
    if fits and len(paths) <= MAX_LISTED_FILES and not unlisted:
        return "\n".join(whole)
    head, rest = paths[:FIRST_LISTED], paths[FIRST_LISTED:]
    tail = rest[-(MAX_LISTED_FILES - len(head)) :]
    if not fits and budget is not None and count is not None:
        tail = _newest_within(head, tail, budget, count)
    return "\n".join(_lines(head, tail, unlisted + len(rest) - len(tail)))


def _distinct(paths: Sequence[str]) -> list[str]:
    """`paths` in their order, each named once: the first of those written alike but for a leading
    `./` or a closing `/`, and no folder that holds another path listed (`lib` beside `lib/a.ex`: the
    folder a search ran in, the file it found there; a relative path is never matched to an absolute
    one, whose root the list does not know)."""
    keys: dict[str, str] = {}  # each path's plain spelling -> the first path written so
    for path in paths:
        keys.setdefault(path.removeprefix("./").rstrip("/") or path, path)
    folders = {key[:i] for key in keys for i, c in enumerate(key) if c == "/" and 0 < i < len(key) - 1}
    return [path for key, path in keys.items() if key not in folders]


def _lines(head: Sequence[str], tail: Sequence[str], hidden: int) -> list[str]:
    gap = [f"({hidden}{UNLISTED}"] if hidden > 0 else []
    return [FILES_HEADER, *(f"- {p}" for p in head), *gap, *(f"- {p}" for p in tail)]


def _newest_within(
    head: Sequence[str], paths: Sequence[str], budget: int, count: Callable[[str], int]
) -> list[str]:
    """The newest of `paths` whose lines (after the header, the `head` and the gap line) fit
    `budget` tokens: one count of the whole list, its tokens shared among the lines by their
    characters."""
    lines = _lines(head, paths, len(paths))
    total = count("\n".join(lines))
    room = len("\n".join(lines)) * max(budget, 0) // max(total, 1)
    room -= sum(len(line) + 1 for line in lines[: len(head) + 2])
    kept: list[str] = []
    for path in reversed(paths):
        room -= len(path) + 3
        if room < 0:
            break
        kept.append(path)
    return kept[::-1]


def carried_paths(record: str) -> list[str]:
    """The files an earlier record listed in its files section: the last one, which code appended
    (an earlier record folded into the body, or a model quoting one, may hold an older list)."""
    start = record.rfind(FILES_HEADER)
    if start == -1:
        return []
    paths = []
    for line in record[start + len(FILES_HEADER) :].splitlines()[1:]:
        if line.startswith("(") and line.endswith(UNLISTED):
            continue  # the gap between the first files and the newest
        if not line.startswith("- "):
            break
        paths.append(line[2:].strip())
    return paths


def carried_unlisted(record: str) -> int:
    """How many files the last files section of `record` left out (its gap line)."""
    start = record.rfind(FILES_HEADER)
    if start == -1:
        return 0
    found = re.search(r"^\((\d+)" + re.escape(UNLISTED), record[start:], re.MULTILINE)
    return int(found.group(1)) if found else 0


def _message_text(message: Message) -> str:
    parts = [message.text]
    parts.extend(json.dumps(dict(u.input), ensure_ascii=False) for u in message.tool_uses)
    parts.extend(r.content for r in message.tool_results)
    return "\n".join(p for p in parts if p)
