"""A condensed record's parts: those code writes, put together, and found again for `/record`; and
the digest, the record code writes whole when the model's does not stand (pure).

Code writes every part of a record but its body (the model's summary, or the digest): the user's own
messages kept verbatim (within a budget: the newest, then the oldest, which carry the task and its
instructions, then the newest again; the middle elided with a note; carried over from the previous
record so a second compaction does not lose the first one's), the intro and closing lines, and the
length cap. The user's words and the model's record are carried byte for byte: nothing here
rewords, escapes or inserts a character into them.

`assemble_record` joins four parts by blank lines: the intro (what was replaced, the transcript's
name, how to recall), the body, the user's messages and the closing line. `record_parts` finds them
again, and the archive files the record names, so the user sees what each part is before they trust
it, or edit it. A record the user edited may hold anything: what matches no part is the body.

*The digest* (`build_digest`, pure): the no-LLM record, in place of a summary that failed or would
not shrink the request (the JS seed drops the span then): the earlier record's content, the files
touched and how, the commands run with their exit codes, the latest errors, the last thing the
assistant said and the latest next step it stated since the user's last message (a line that
starts "Next", "Plan:" or "TODO"), which a later reply would otherwise hide. The user's messages
are added verbatim, as for a model record.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from agent_cli.context.clear import is_stub, stub_failure
from agent_cli.context.cut import is_engine_note
from agent_cli.context.plain import abbreviate
from agent_cli.context.signals import call_paths, command_of, failure, last_exit_code, stated_next_step
from agent_cli.core.messages import Message, ToolResult, ToolUse

__all__ = [
    "RecordPart",
    "UserMessages",
    "archive_files",
    "assemble_record",
    "build_digest",
    "cap_text",
    "collect_user_messages",
    "parse_user_messages",
    "record_parts",
    "render_user_messages",
    "strip_user_messages",
]


# -- the parts code writes -------------------------------------------------------------------------

USER_HEADER = "## The user's messages, verbatim (oldest first)"
USER_END = "[end of the user's messages]"
_ENTRY_RE = re.compile(r"^\[user message (\d+)\]$")
_GAP_RE = re.compile(r"^\((\d+) (?:earlier )?user messages? not shown here; recall finds them")
# Of the budget, the oldest messages (the task and the instructions given with it) may take this
# share; the rest goes to the newest. The middle of a long conversation is elided first.
HEAD_SHARE = 1 / 3


@dataclass(frozen=True, slots=True)
class UserMessages:
    """The user's messages so far, oldest first. `numbers` are their places in the whole session
    (from 1; a gap is a message an earlier record elided); without them, the texts follow
    `elided` messages elided before the first."""

    texts: tuple[str, ...]
    elided: int = 0
    numbers: tuple[int, ...] = ()

    def numbered(self) -> list[tuple[int, str]]:
        numbers = self.numbers or tuple(range(self.elided + 1, self.elided + 1 + len(self.texts)))
        return list(zip(numbers, self.texts, strict=True))

    @property
    def total(self) -> int:
        """How many messages the user has sent, elided ones included."""
        return max(self.numbers, default=0) if self.numbers else self.elided + len(self.texts)


def strip_user_messages(record: str) -> str:
    """An earlier record without its user-message section (rebuilt separately)."""
    start = record.find(USER_HEADER)
    if start == -1:
        return record
    end = record.find(USER_END, start)
    return record[:start] + (record[end + len(USER_END) :] if end != -1 else "")


def parse_user_messages(record: str) -> UserMessages:
    """The user-message section of an earlier record (empty if it has none)."""
    start = record.find(USER_HEADER)
    if start == -1:
        return UserMessages(())
    end = record.find(USER_END, start)
    body = record[start + len(USER_HEADER) : end if end != -1 else len(record)]
    entries: list[tuple[int, list[str]]] = []
    for line in body.split("\n"):
        match = _ENTRY_RE.match(line)
        if match and (not entries or int(match.group(1)) > entries[-1][0]):
            if entries and entries[-1][1] and _GAP_RE.match(entries[-1][1][-1]):
                entries[-1][1].pop()  # a gap note is written on the line before an entry
            entries.append((int(match.group(1)), []))
        elif entries:
            entries[-1][1].append(line)
    numbers = tuple(n for n, _ in entries)
    return UserMessages(tuple("\n".join(lines).strip("\n") for _, lines in entries), numbers=numbers)


def collect_user_messages(span: Sequence[Message]) -> UserMessages:
    """Everything the user typed in `span`, with the previous record's list in front."""
    numbers: list[int] = []
    texts: list[str] = []
    total = 0
    for message in span:
        summary = message.summary
        if summary is not None:
            earlier = parse_user_messages(summary.text)
            for number, text in earlier.numbered():
                numbers.append(total + number)
                texts.append(text)
            total += earlier.total
        elif message.is_plain_user and not is_engine_note(message) and message.text.strip():
            total += 1
            numbers.append(total)
            texts.append(message.text)
    return UserMessages(tuple(texts), numbers=tuple(numbers))


def render_user_messages(users: UserMessages, budget: int, count: Callable[[str], int]) -> str:
    """The section within `budget` tokens, shown oldest first: the newest message always (cut to the
    budget if it must), then the oldest into `HEAD_SHARE` of it, then the newest into the rest."""
    entries = users.numbered()
    cost = [count(text) + 6 for _, text in entries]
    kept: dict[int, str] = {}
    used = 0
    if entries:
        number, text = entries[-1]
        if cost[-1] > budget:
            room = max(int(len(text) * max(budget - 6, 1) / max(cost[-1], 1)), 200)
            text = text[:room] + f"\n[... {len(text) - room:,} characters cut; recall finds the rest]"
        kept[number] = text
        used = min(cost[-1], budget)
    head = head_used = 0
    while (
        head < len(entries) - 1
        and used + cost[head] <= budget
        and head_used + cost[head] <= budget * HEAD_SHARE
    ):
        kept[entries[head][0]] = entries[head][1]
        used += cost[head]
        head_used += cost[head]
        head += 1
    for i in range(len(entries) - 2, head - 1, -1):
        if used + cost[i] > budget:
            break
        kept[entries[i][0]] = entries[i][1]
        used += cost[i]
    lines = [USER_HEADER]
    shown = 0
    for number in sorted(kept):
        if number > shown + 1:
            missing = number - shown - 1
            what = "earlier user messages" if not shown else "user messages"
            lines.append(f"({missing} {what if missing > 1 else what[:-1]} not shown here; "
                         "recall finds them in the transcripts)")  # fmt: skip
        lines.append(f"[user message {number}]")
        lines.append(kept[number])
        shown = number
    lines.append(USER_END)
    return "\n".join(lines)


def cap_text(text: str, cap_tokens: int, count: Callable[[str], int]) -> str:
    """`text` cut to about `cap_tokens`, at a line boundary, with a note."""
    tokens = count(text)
    if tokens <= cap_tokens:
        return text
    keep = int(len(text) * cap_tokens / tokens * 0.95)
    nl = text.rfind("\n", 0, keep)
    if nl > keep // 2:
        keep = nl
    return text[:keep] + "\n[... cut to the record's length cap]"


def assemble_record(
    *,
    body: str,
    users: str,
    transcript: str,
    replaced: int,
    recall_hint: str,
    degraded: bool = False,
    images: Sequence[str] = (),
) -> str:
    """The text of the SummaryBlock that replaces `replaced` messages; `images`: the names of the
    images they showed, which the intro names (each is saved, and recall shows it again)."""
    kind = "mechanical digest (written by code, not by a model)" if degraded else "record"
    intro = (
        f"Condensed {kind} of the earlier conversation: {replaced} messages were replaced by it to free "
        f'context. Their full text is saved in {transcript}; call recall("<phrase>") with a file name, '
        f"an error or a few words (e.g. recall({recall_hint})) to fetch exact passages."
    )
    if images:
        shown = ", ".join(images[:10]) + (f" and {len(images) - 10} more" if len(images) > 10 else "")
        intro += f' The images they showed are saved too ({shown}): recall("<file name>") shows one again.'

    closing = (
        "Continue from the work state above without redoing finished steps. Files may have changed "
        "since they were read: re-read one before editing it."
    )
    parts = [intro, body.strip(), users, closing]
    return "\n\n".join(p for p in parts if p)


# -- the record taken apart (/record) --------------------------------------------------------------


# How the intro and the closing `assemble_record` writes begin.
_INTRO = "Condensed "
_CLOSING = "Continue from the work state above"
# The archive's files as a record names them: `.transcripts/<session>/<kind>-NNN-<label>.<ext>`.
_ARCHIVED = re.compile(r"(?:/[^\s'\"`()]*)?\.transcripts/[^\s'\"`()]+?\.(?:jsonl|txt)")


@dataclass(frozen=True, slots=True)
class RecordPart:
    label: str  # "intro", "body", "user messages", "closing"
    source: str  # who wrote it, in a few words
    text: str


def record_parts(text: str, *, writer: str) -> list[RecordPart]:
    """The record's parts in order; `writer` says who wrote the body ("the summary model X")."""
    parts: list[RecordPart] = []
    rest = text
    if rest.startswith(_INTRO):
        intro, _, rest = rest.partition("\n\n")
        parts.append(RecordPart("intro", "written by agent-cli: what was replaced and where it is", intro))
    closing = ""
    at = rest.rfind(_CLOSING)
    if at != -1 and (at == 0 or rest[at - 2 : at] == "\n\n"):
        rest, closing = rest[: max(at - 2, 0)], rest[at:]
    users = ""
    start = rest.find(USER_HEADER)
    if start != -1:
        end = rest.find(USER_END, start)
        stop = end + len(USER_END) if end != -1 else len(rest)
        users = rest[start:stop]
        rest = (rest[:start] + rest[stop:]).strip("\n")
    if rest.strip():
        parts.append(RecordPart("body", writer, rest))
    if users:
        count = len(parse_user_messages(users).texts)
        source = f"your own {count} message{'s' if count != 1 else ''}, verbatim, carried by agent-cli"
        parts.append(RecordPart("user messages", source, users))
    if closing:
        parts.append(RecordPart("closing", "written by agent-cli", closing))
    return parts


def archive_files(text: str) -> list[str]:
    """The archive files the record names, each once, in the order it names them."""
    return list(dict.fromkeys(m.group() for m in _ARCHIVED.finditer(text)))


# -- the digest: the record code writes ------------------------------------------------------------


MAX_COMMANDS = 40
MAX_ERRORS = 3
EARLIER_CHARS = 6_000
LAST_TEXT_CHARS = 1_500


def _outcome(result: ToolResult) -> str:
    """How a command ended: its last stated exit code (the status line comes last), else ok / failed."""
    failed = failure(result)
    if failed is not None and failed.status and not failed.status.startswith("exit code"):
        return failed.status  # killed by a signal, timed out, cancelled
    code = last_exit_code(result.content)
    if code is not None:
        return f"exit {code}"
    return "failed" if result.is_error else "ok"


def build_digest(span: Sequence[Message]) -> str:
    """The digest's sections for `span` (without the user-message section)."""
    calls: dict[str, ToolUse] = {}
    files: dict[str, list[str]] = {}
    commands: list[str] = []
    errors: list[str] = []
    earlier: list[str] = []
    last_text = next_step = ""
    for message in span:
        summary = message.summary
        if summary is not None:
            earlier.append(strip_user_messages(summary.text).strip())
            continue
        if message.native is not None:  # the provider's record: what of it may be read
            earlier.append(message.native.text.strip())
            continue
        if message.is_plain_user and not is_engine_note(message):
            next_step = ""  # a new request: the plan stated before it is no longer the next step
        if message.role == "assistant" and message.text.strip():
            last_text = message.text.strip()
            next_step = stated_next_step(last_text) or next_step
        for use in message.tool_uses:
            calls[use.id] = use
            for path in call_paths(use):
                verbs = files.setdefault(path, [])
                if use.name not in verbs:
                    verbs.append(use.name)
        for result in message.tool_results:
            call = calls.get(result.tool_use_id)
            name = call.name if call else "tool"
            command = command_of(call)
            if command is not None:
                commands.append(f"- `{abbreviate(command, 200)}` -> {_outcome(result)}")
            # A cleared result's error is the one its stub records (the output itself is on disk).
            failed = stub_failure(result.content) if is_stub(result) else failure(result, 300)
            if failed is not None:
                status = f" ({failed.status})" if failed.status else ""
                what = f"`{abbreviate(command, 80)}`" if command is not None else name
                errors.append(f"- {what}{status}: {failed.line}")
    parts: list[str] = []
    if earlier:
        parts.append("## From the earlier record\n" + abbreviate("\n\n".join(earlier), EARLIER_CHARS))
    if files:
        parts.append("## Files touched\n" + "\n".join(f"- {p} ({', '.join(v)})" for p, v in files.items()))
    if commands:
        dropped = len(commands) - MAX_COMMANDS
        shown = commands[-MAX_COMMANDS:]
        if dropped > 0:
            shown.insert(0, f"- ({dropped} earlier commands not listed)")
        parts.append("## Commands run\n" + "\n".join(shown))
    if errors:
        parts.append("## Latest errors\n" + "\n".join(errors[-MAX_ERRORS:]))
    if last_text:
        last_words = abbreviate(last_text, LAST_TEXT_CHARS)
        parts.append("## The assistant's last words before this point\n" + last_words)
        if next_step and next_step not in last_words:
            parts.append("## The next step it stated last\n" + next_step)
    return "\n\n".join(parts)
