"""L2/L3 requests: ask the session's model for a sectioned record of a span.

The request is an ordinary provider request: the frame's system prompt and
tools, the main requests' `tool_choice` (a change of it invalidates the
provider's cached messages: Anthropic's rule), the span's messages as they are
(so the cached conversation prefix is read back), and the instruction as the
last user text block (as Claude Code sends it), opening with `COMPACTION_TAG`.
The model is asked, not forced, to call no tool: a reply that calls one anyway
is the summary call's to handle (agent/summary_call.py). The previous
record, when there is one, is the span's first message, so it is folded in
(rolling). When the span would not fit the budget ("too long to compact"), it
is rendered to text with tool outputs abbreviated and sent in chunks, each
request carrying the record so far, so every request fits; those read nothing
of the cached conversation, so they switch tool calls off (`tool_choice` none).

With `context.summarizer = "native"` the call may answer with the provider's own record
(`SummaryReply.native`, agent/native_summary.py): only a one-request summary can, as the record stands
for exactly the messages it was given; a series over text chunks goes to the ordinary call
(`NativeSummarize.ordinary`) and its record is ours.

When another model than the session's writes the summaries (`context.summary_model`), the call
says what its requests must keep to (`SizedSummarize.sized`): the writer's own budget, when its
window is smaller, and its own counter, when it counts text differently. A request then fits the
writer, in one piece or in chunks, as it would fit the session's model.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from agent_cli.context.plain import abbreviate, render_messages
from agent_cli.context.protocol import Frame, with_note
from agent_cli.context.record_parts import strip_user_messages
from agent_cli.context.thresholds import Counter
from agent_cli.core.messages import Message, NativeRecord, TextBlock, Usage
from agent_cli.core.requests import Request, RequestOptions

__all__ = [
    "COMPACTION_TAG",
    "THINKING_ROOM",
    "NativeSummarize",
    "SizedSummarize",
    "Summarize",
    "SummaryFailed",
    "SummaryReply",
    "instruction",
    "run_summary",
    "span_request",
]


@dataclass(frozen=True, slots=True)
class SummaryReply:
    """The model's record and what the call cost; `native` the provider's own record, when the
    provider wrote it (then `text` is what a person may read of it)."""

    text: str
    usage: Usage = field(default_factory=Usage)
    native: NativeRecord | None = None


# One ordinary model call; a plain string is a reply whose cost is not known (a script, a test).
Summarize = Callable[[Request], "SummaryReply | str"]


@runtime_checkable
class NativeSummarize(Protocol):
    """A summary call that asks the provider for its own record (agent/native_summary.py)."""

    def __call__(self, request: Request, /) -> SummaryReply | str: ...

    @property
    def ordinary(self) -> Summarize:
        """The ordinary call, for requests the provider's record cannot answer (text chunks)."""
        ...


@runtime_checkable
class SizedSummarize(Protocol):
    """A summary call that may be written by another model than the session's (agent/summary_call.py)."""

    def __call__(self, request: Request, /) -> SummaryReply | str: ...

    def sized(self, budget: int, counter: Counter, /) -> tuple[int, Counter]:
        """The budget a summary request must keep to and the counter that counts it, given the
        session's own: the writer's, where its window is smaller or it counts text differently."""
        ...


# The span request: the main requests' options (their tool_choice), so the cached messages are read.
OPTIONS = RequestOptions()
# A chunk request carries a transcript as text, nothing cached to keep: tool calls off.
CHUNK_OPTIONS = RequestOptions(tool_choice="none")
# The instruction's first line: how a summary request that keeps the tools is recognised
# (../shared/TESTING-NOTES.md; testing/summary_shape.py).
COMPACTION_TAG = "<compaction-request>"
# Per-message overhead allowance when packing chunks (role markers, separators).
PIECE_OVERHEAD = 8
# Part of the budget left unused in chunk requests, for counting error.
CHUNK_SLACK = 0.05
# A model that thinks by default spends part of max_tokens thinking before it writes: the request asks
# for twice the record's cap, and the record itself is cut to the cap afterwards (condense.py).
THINKING_ROOM = 2


class SummaryFailed(Exception):
    """The summary could not be produced (empty answer, or no room for even one chunk)."""


_SECTIONS = """\
## Goal and requests
What the user wants overall, and each request they made with its status.
## Constraints and decisions
Preferences, rules and limits the user set; approaches chosen or rejected, and why.
## Files
Every file read, created or changed: its path, what it holds or what changed, and what was learned
from it (names, signatures, line numbers, values), so it need not be read again just to recall it.
## Commands and errors
Commands run with their outcome (exit code, the key lines of output); errors met, their exact
message, and whether and how each was resolved.
## Work state
Done: what is finished. In progress: exactly where the work stopped. Next step: what to do next."""


def instruction(cap: int, focus: str | None, *, earlier: bool, transcript: bool, extra: str = "") -> str:
    """The final user turn of a summary request; `extra` (a PreCompact hook's additionalContext) is
    appended as it is, as the last paragraph."""
    source = "the conversation transcript above" if transcript else "the conversation so far"
    lines = [
        f"{COMPACTION_TAG}\nStop here and write no tool calls. Summarize {source} so that the work can "
        "continue from your text alone: the messages it covers will be replaced by it. Use these "
        "sections, in this order:",
        _SECTIONS,
        "Rules: keep specific values exactly (paths, identifiers, numbers, error text, commands). "
        "Do not invent anything. Do not copy the user's messages out: they are kept verbatim "
        "separately. Write plain Markdown, no preamble.",
        f"Length: at most about {cap:,} tokens; drop detail before you drop facts.",
    ]
    if earlier:
        lines.append(
            "It begins with an earlier condensed record: fold it into yours. Keep everything in it that "
            "still matters, update what has changed, and drop only what is obsolete."
        )
    if focus:
        lines.append(f"The user asked to focus on: {focus.strip()}. Give that the most room and detail.")
    if extra.strip():
        lines.append(extra)
    return "\n\n".join(lines)


def span_request(
    span: Sequence[Message], frame: Frame, cap: int, focus: str | None, extra: str = ""
) -> Request:
    """The span itself, plus the instruction as a final user turn."""
    earlier = bool(span) and (span[0].summary is not None or span[0].native is not None)
    text = instruction(cap, focus, earlier=earlier, transcript=False, extra=extra)
    messages = list(span)
    if messages and messages[-1].role == "user":
        # Two user turns in a row are not accepted everywhere: add the instruction to the last one.
        last = messages[-1]
        messages[-1] = Message(last.role, (*last.content, TextBlock(text)), last.id + "+i")
    else:
        messages.append(Message.user(text))
    room = cap * THINKING_ROOM
    return Request(frame.system, tuple(messages), frame.tools, max_tokens=room, options=OPTIONS)


def _chunks(pieces: Sequence[str], room: int, counter: Counter) -> list[str]:
    """Pack rendered messages into chunks of at most `room` tokens, in order."""
    chunks: list[str] = []
    current: list[str] = []
    used = 0
    for piece in pieces:
        cost = counter.count_text(piece) + PIECE_OVERHEAD
        if cost > room:  # one message larger than a whole chunk: keep its head and tail
            piece = abbreviate(piece, max(int(len(piece) * room / cost * 0.9), 200))
            cost = counter.count_text(piece) + PIECE_OVERHEAD
        if current and used + cost > room:
            chunks.append("\n\n".join(current))
            current, used = [], 0
        current.append(piece)
        used += cost
    if current:
        chunks.append("\n\n".join(current))
    return chunks


def _ask(summarize: Summarize, request: Request) -> SummaryReply:
    reply = summarize(request)
    return reply if isinstance(reply, SummaryReply) else SummaryReply(reply)


def run_summary(
    span: Sequence[Message],
    frame: Frame,
    *,
    cap: int,
    focus: str | None,
    budget: int,
    counter: Counter,
    summarize: Summarize,
    extra: str = "",
) -> SummaryReply:
    """The model's record of `span`, from one request or a rolling series over text chunks, with what
    the calls cost. Every request carries the frame's notes (the todo list's, the goal's) before its
    instruction, as every main request does: at the span's end (context/protocol.py), and in each part
    over chunks whose transcript does not hold them.

    Raises SummaryFailed, or whatever `summarize` raises (ProviderError, TimeoutError).
    """
    if isinstance(summarize, SizedSummarize):  # another model writes: its window, its tokens
        budget, counter = summarize.sized(budget, counter)
    span = with_note(span, *frame.notes)
    request = span_request(span, frame, cap, focus, extra)
    if counter.count_request(frame.system, frame.tools, list(request.messages)) <= budget:
        reply = _ask(summarize, request)
        if not reply.text.strip():
            raise SummaryFailed("the model returned an empty record")
        return SummaryReply(reply.text.strip(), reply.usage, reply.native)
    if isinstance(summarize, NativeSummarize):  # a record over text chunks is ours
        summarize = summarize.ordinary
    # Too long for one request: rolling record over text chunks.
    record = ""
    rest: Sequence[Message] = span
    if span and (span[0].summary is not None or span[0].native is not None):
        first = span[0].native
        record = first.text.strip() if first is not None else strip_user_messages(span[0].text).strip()
        rest = span[1:]
        tokens = counter.count_text(record)
        if tokens > cap:  # keep the chunk requests' fixed part bounded
            record = abbreviate(record, int(len(record) * cap / tokens))
    probe = instruction(cap, focus, earlier=True, transcript=True, extra=extra)
    fixed = counter.count_frame(frame.system, frame.tools) + counter.count_text(probe) + 2 * cap + 64
    room = int(budget * (1 - CHUNK_SLACK)) - fixed
    if room < 256:
        raise SummaryFailed(
            f"no room for a summary request (the fixed prefix takes {fixed:,} of {budget:,} tokens)"
        )
    chunks = _chunks(render_messages(rest), room, counter)
    usage = Usage()
    for n, chunk in enumerate(chunks, start=1):
        head = f"EARLIER CONDENSED RECORD:\n{record}\n\n" if record else ""
        body = f"{head}CONVERSATION TRANSCRIPT, PART {n} OF {len(chunks)}:\n{chunk}"
        text = instruction(cap, focus, earlier=bool(record), transcript=True, extra=extra)
        # (a part whose transcript does not hold the notes: they sat in another part)
        notes = tuple(TextBlock(note) for note in frame.notes if note not in body)
        req = Request(
            frame.system,
            # The transcript and the instruction are text blocks: the instruction is the last one.
            (Message("user", (TextBlock(body), *notes, TextBlock(text))),),
            frame.tools,
            max_tokens=cap * THINKING_ROOM,
            options=CHUNK_OPTIONS,
        )
        reply = _ask(summarize, req)
        usage = usage + reply.usage
        record = reply.text.strip()
        if not record:
            raise SummaryFailed(f"the model returned an empty record for part {n} of {len(chunks)}")
    return SummaryReply(record, usage)
