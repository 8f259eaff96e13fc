"""Compaction policies side by side: ours, the three seeds' and the paper's, each as it describes itself.

Each policy sees the session as the agent's loop does: `ingest` each tool result as it arrives,
`prepare` the history before each request (what it returns is sent, and kept), `observe` the
provider's count after it, `react` when the provider refuses a request as over the window (None:
the policy has no way on, and the session fails). Every summary goes through `_summary`: the
policy builds its summary input as its own design does (`SummaryCall.messages`, priced by the
replay with the same frame and cache as any request), and one stand-in writer (lossy or
faithful, `bench_standins.py`, the same for every policy) writes the record from exactly that
input, within the policy's own output limit.

    ours         agent-cli's ContextEngine, defaults (or any ContextSettings)
    java-s06     every turn, tool results older than 3 turns become "[Previous: used {tool}]";
                 past 50,000 tokens (characters / 4) everything is summarized into one message
                 (mid-turn, the round in progress stays after it); the summary input is
                 "role: content" lines cut to their first 80,000 characters
    kotlin       at 80% of the window (characters / 3) the older part is summarized so the kept
                 tail is at most 50% of the window, the newest message kept whatever its size (a
                 refused request's compaction takes it too); above 95% the oldest messages go,
                 FIFO; the input lists each message with tool results cut to 100 characters,
                 plus the previous summary; the summary is capped at 2,048 tokens
    javascript   at 70% of its budget (64k, or the window when smaller; CJK-aware estimate) all but
                 the last 3 user turns are summarized into a summary pair; the input renders text to
                 1,000 characters, tool inputs to 300, results to 800, plus the previous summary; the
                 summary is capped at 800 tokens; refused as too long, it compacts once more and
                 retries once
    masking      observation masking (The Complexity Trap, arXiv 2508.21433): the latest M = 10
                 observations (tool results) kept, older ones replaced by a placeholder; nothing else
    hybrid       the paper's hybrid: masking (M = 10) plus an LLM summary every N = 21 turns once
                 N + M turns are unsummarized (the first 21 are summarized, with the first user
                 message and the previous summary as context; one rolling summary is kept)
    none         no compaction at all
"""

from __future__ import annotations

import json
import math
import os
import re
import tempfile
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from bench_e2e_wire import text_entries
from bench_standins import Entry

from agent_cli.billing.prices import CachePrice
from agent_cli.config.settings import ContextSettings
from agent_cli.context.engine import ContextEngine
from agent_cli.context.protocol import Frame
from agent_cli.context.summary_request import COMPACTION_TAG, THINKING_ROOM, SummaryReply
from agent_cli.context.thresholds import output_for_window
from agent_cli.core.compact_layers import CompactLayer
from agent_cli.core.errors import ContextOverflowError
from agent_cli.core.events import CompactEvent
from agent_cli.core.messages import Message, SummaryBlock, TextBlock, ToolResult, ToolUse, Usage
from agent_cli.core.requests import Request, RequestOptions
from agent_cli.providers.model_names import tokenizer_for
from agent_cli.store.archive import Archive
from agent_cli.tokens.counter import TokenCounter

__all__ = ["POLICIES", "Policy", "SummaryCall", "Writer", "message_text"]

Count = Callable[[str], int]
Writer = Callable[[Sequence[Entry], int], str]  # (summary input, output cap in tokens) -> record
IDLE_TTL = CachePrice().ttl  # how long the engine takes a cache entry to live unused (Anthropic's 5 minutes)
UNCAPPED = 4_096  # a policy that sets no limit on its summary: what one reply holds at most


@dataclass(frozen=True, slots=True)
class SummaryCall:
    """One summary request as the policy built it (after the frame) and the record it got back."""

    messages: tuple[Message, ...]
    output: str
    started: float = 0.0  # the replay's steady clock when the request was sent
    ahead: bool = False  # made in the background, before the trigger (ours' prepared record)
    taken: float | None = None  # when an ahead record was swapped in (None: never, nobody waited)
    tool_choice: Literal["auto", "none"] = "auto"  # as sent: ours the main requests' ("none" for a chunk)


def message_text(message: Message) -> str:
    parts: list[str] = []
    for block in message.content:
        data = block.to_json()
        parts += [str(data.get(k)) for k in ("text", "content", "name") if data.get(k)]
        if isinstance(block, ToolUse):
            parts.append(json.dumps(dict(block.input), ensure_ascii=False))
    return " ".join(parts)


def _entries(messages: Sequence[Message]) -> list[Entry]:
    """Messages as a summarizer reads them, whole."""
    out: list[Entry] = []
    for m in messages:
        if m.role == "user" and m.text.startswith(("EARLIER CONDENSED RECORD:", "CONVERSATION TRANSCRIPT")):
            out += text_entries(m.text)  # a chunk request: the span rendered as text
        elif m.summary is not None:
            out.append(("summary", m.summary.text))
        elif m.tool_results:
            out += [("tool", r.content) for r in m.tool_results]
        elif m.role == "user":
            out.append(("user", m.text))
        else:
            calls = " ".join(f"{u.name} {json.dumps(dict(u.input), ensure_ascii=False)}" for u in m.tool_uses)
            out.append(("assistant", " ".join(p for p in (m.text, calls) if p)))
    return out


class Policy:
    """The surface the replay drives. Subclasses change `prepare` (and `ingest`, `react`, `recall`)."""

    name = "policy"
    summary_cap = UNCAPPED
    remembers = False  # it has a recall tool (the replay asks it at every probe point)

    def __init__(self, window: int, frame: Frame, count: Count, write: Writer) -> None:
        self.window, self.frame, self.count, self.write = window, frame, count, write
        self.summaries: list[SummaryCall] = []
        self._now = 0.0
        self.read_clock = False  # whether it ever read `now` (the replay runs it again at the paused pace)
        # How long a summary call with this output takes (set by the replay, which owns the clock model).
        self.summary_seconds: Callable[[str], float] = lambda record: 0.0
        self.digests = 0  # records built by code instead of a summary call (ours' latch)
        self.clears = 0  # ours' L1 clears, and those made when the cache had gone cold (its idle rule)
        self.idle_clears = 0
        self.calls: dict[str, str] = {}

    @property
    def now(self) -> float:
        """The replay's clock at the pace the policy is run at, set before each prepare. Reading it is
        remembered (`read_clock`): a policy that never reads it sends the same bytes at every pace."""
        self.read_clock = True
        return self._now

    @now.setter
    def now(self, value: float) -> None:
        self._now = value

    def ingest(self, use: ToolUse, result: ToolResult, round_size: int) -> ToolResult:
        self.calls[use.id] = use.name
        return result

    def prepare(self, history: list[Message]) -> list[Message]:
        return history

    def turn_ended(self, history: list[Message]) -> None:
        """The turn ended and the user is to speak (the product's REPL says so to its context)."""

    def react(self, history: list[Message], tokens: int) -> list[Message] | None:
        """The provider refused `history` as over the window (`tokens` counted): a new history, or None."""
        return None

    def observe(self, sent: list[Message], usage: Usage) -> None:
        return None

    def recall(self, query: str) -> str | None:
        return None  # no way to fetch back what left the context

    def anchor(self, history: list[Message], originals: set[int]) -> int | None:
        """The message a cache breakpoint marks besides the frame and the last: the policy's own edit
        point, the newest message it rewrote or wrote (None when it changed nothing)."""
        edited = [i for i, m in enumerate(history) if id(m) not in originals]
        return edited[-1] if edited else None

    def cache_newest(self) -> bool:
        """Whether the request `anchor` was just asked about marks its newest message (always, but
        where a policy's own design says otherwise)."""
        return True

    def cache_span_end(self) -> int | None:
        """The message ending the span its next summary would send as it is, for the request `anchor`
        was just asked about to mark (None: the seeds' summaries send a text of their own)."""
        return None

    def cache_checkpoint(self) -> int | None:
        """The message the request `anchor` was just asked about marks for an hour (None: the seeds
        mark nothing for an hour)."""
        return None

    def _summary(self, prompt_text: str, entries: Sequence[Entry], cap: int | None = None) -> str:
        """One summary call: the policy's prompt as one user message, answered from `entries`."""
        record = self.write(entries, cap or self.summary_cap)
        self.summaries.append(SummaryCall((Message.user(prompt_text),), record))
        return record


class _BenchArchive(Archive):
    """The archive on disk in a temporary directory, named in records as a fixed project path, its
    files' times a logical clock (one second a file: recall orders passages newest first by them,
    and files written in the same clock tick would tie by chance), so the requests are the same
    bytes on every run."""

    place = Path("/project/.transcripts/bench")

    def __init__(self, session_dir: Path) -> None:
        super().__init__(session_dir)
        self._tick = 0

    def _write(self, kind: str, label: str, ext: str, body: str) -> Path:
        real = super()._write(kind, label, ext, body)
        self._tick += 1
        os.utime(real, ns=(self._tick * 10**9, self._tick * 10**9))
        return self.place / real.name

    def shown(self, path: Path | str) -> str:
        """Relative to the fixed project, as the product names a saved file to the model."""
        return Path(path).relative_to(self.place.parent.parent).as_posix()


class _ClockFuture(Future[SummaryReply]):
    """A summary made at once that reports itself done only when the replay's clock says so."""

    def __init__(self, policy: Policy) -> None:
        super().__init__()
        self._policy = policy
        self.ready_at = 0.0

    def done(self) -> bool:
        return super().done() and self._policy.now >= self.ready_at


class Ours(Policy):
    name = "ours"
    remembers = True

    def __init__(
        self, window: int, frame: Frame, count: Count, write: Writer, settings: ContextSettings | None = None
    ) -> None:
        super().__init__(window, frame, count, write)
        self._tmp = tempfile.TemporaryDirectory()
        self.engine = ContextEngine(
            settings=settings or ContextSettings(),
            window=window,
            max_output=output_for_window(32_000, window),
            counter=TokenCounter("claude-sonnet-5-5", tokenizer_for("claude-sonnet-5-5", "anthropic")),
            archive=_BenchArchive(Path(self._tmp.name)),
            summarize=self._summarize,
            submit=self._ahead,
            clock=lambda: self.now,  # the replay's clock: the engine tells a cold cache by it
        )
        self._making_ahead = False
        self._options = RequestOptions()  # the last main request's cache marks, as the product sends them
        self._sent_at: float | None = None  # when the last request went (the replay's clock)

    def _ahead(self, call: Callable[[], SummaryReply]) -> Future[SummaryReply]:
        """The product's record prepared ahead, made at once (no thread: the replay is
        deterministic); it counts as done once the replay's clock has passed the call's own time, so
        a turn that may go on without it does, and the clock says how much of it a turn waited for."""
        future = _ClockFuture(self)
        self._making_ahead = True
        try:
            reply = call()
            future.ready_at = self.now + self.summary_seconds(reply.text)
            future.set_result(reply)
        except Exception as exc:  # as the product's worker thread hands it over
            future.set_exception(exc)
        finally:
            self._making_ahead = False
        return future

    def _summarize(self, request: Request) -> SummaryReply:
        messages = [
            m.replace([b for b in m.content if not _is_instruction(b)]) if m is request.messages[-1] else m
            for m in request.messages
        ]
        record = self.write(_entries(messages), max(request.max_tokens // THINKING_ROOM, 1))
        self.summaries.append(
            SummaryCall(
                tuple(request.messages), record, self.now, self._making_ahead,
                tool_choice=request.options.tool_choice,
            )
        )  # fmt: skip
        return SummaryReply(record, Usage(output_tokens=self.count(record)))

    def ingest(self, use: ToolUse, result: ToolResult, round_size: int) -> ToolResult:
        capped, _ = self.engine.ingest(use, result, round_size=round_size)
        return capped

    def _events(self, events: Sequence[object]) -> None:
        # (a digest standing in for a record on its way is no digest: its record follows)
        self.digests += sum(
            1 for e in events if isinstance(e, CompactEvent) and e.degraded and not e.stand_in
        )
        clears = sum(1 for e in events if isinstance(e, CompactEvent) and e.layer is CompactLayer.CLEAR)
        self.clears += clears
        if self._sent_at is not None and self._now - self._sent_at > IDLE_TTL:
            self.idle_clears += clears  # (made after an idle gap past the cache's TTL: no extra rewrite)
        for event in events:
            if isinstance(event, CompactEvent) and event.ahead and not event.stand_in:
                pending = next(c for c in reversed(self.summaries) if c.ahead and c.taken is None)
                self.summaries[self.summaries.index(pending)] = replace(pending, taken=self.now)

    def prepare(self, history: list[Message]) -> list[Message]:
        prepared = self.engine.prepare(history, self.frame)
        self._events(prepared.events)
        return prepared.messages

    def turn_ended(self, history: list[Message]) -> None:
        self.engine.turn_ended(history, self.frame)  # (a record near the trigger starts now)

    def react(self, history: list[Message], tokens: int) -> list[Message] | None:
        error = ContextOverflowError("prompt is too long", tokens=tokens, limit=self.window)
        try:
            prepared = self.engine.on_overflow(history, self.frame, error)
        except ContextOverflowError:
            return None
        self._events(prepared.events)
        return prepared.messages

    def observe(self, sent: list[Message], usage: Usage) -> None:
        self._sent_at = self._now
        self.engine.observe(self.frame, sent, usage)

    def recall(self, query: str) -> str | None:
        return self.engine.recall(query)

    def anchor(self, history: list[Message], originals: set[int]) -> int | None:
        self._options = self.engine.cache_options(history)  # what the product marks
        return self._options.cache_anchor

    def cache_newest(self) -> bool:
        return self._options.cache_newest  # unmarked where its next clear is expected to stub it

    def cache_span_end(self) -> int | None:
        return self._options.cache_span_end  # its next summary's span end

    def cache_checkpoint(self) -> int | None:
        return self._options.cache_checkpoint  # what the product marks for an hour


def _is_instruction(block: object) -> bool:
    return isinstance(block, TextBlock) and block.text.startswith(COMPACTION_TAG)


def _record_message(text: str) -> Message:
    return Message("user", (SummaryBlock(text),))


def _mask(
    history: list[Message], keep: int, placeholder: Callable[[ToolResult], str], marker: str
) -> list[Message]:
    """Tool-result messages older than the newest `keep` of them get `placeholder` for each result
    (a result that starts with `marker` is one already, and its message stays the same object)."""
    results = [i for i, m in enumerate(history) if m.tool_results]
    if len(results) <= keep:
        return history
    old = set(results[:-keep]) if keep else set(results)
    out: list[Message] = []
    for i, message in enumerate(history):
        if i not in old or all(r.content.startswith(marker) for r in message.tool_results):
            out.append(message)
            continue
        out.append(
            message.replace(
                ToolResult(b.tool_use_id, placeholder(b), b.is_error) if isinstance(b, ToolResult) else b
                for b in message.content
            )
        )
    return out


class JavaS06(Policy):
    name = "java-s06"
    transcript_chars = 80_000
    prompt = (
        "Summarize this conversation for continuity. Include: 1) What was accomplished, "
        "2) Current state, 3) Key decisions.\n\n"
    )

    def _placeholder(self, result: ToolResult) -> str:
        return f"[Previous: used {self.calls.get(result.tool_use_id, 'a tool')}]"

    def prepare(self, history: list[Message]) -> list[Message]:
        turns = [i for i, m in enumerate(history) if m.role == "assistant"]
        if len(turns) > 3:  # micro-compact: results older than the last 3 turns
            line = turns[-3]
            head = _mask(history[:line], 0, self._placeholder, "[Previous: used ")
            history = head + history[line:]
        if sum(len(message_text(m)) for m in history) // 4 > 50_000:
            text, entries, used = [], [], 0
            for role, body in _entries(history):  # "role: content", the first 80,000 characters
                room = self.transcript_chars - used
                if room <= 0:
                    break
                line = f"{role}: {body}"[:room]
                text.append(line)
                entries.append((role, line))
                used += len(line) + 1
            record = self._summary(self.prompt + "\n".join(text), entries)
            head = _record_message("[Conversation compressed. Transcript saved.]\n\n" + record)
            if history[-1].is_plain_user:
                history = [head, Message.assistant("Understood."), history[-1]]
            elif history[-1].tool_results and len(history) > 1:  # mid-turn: the round the model
                history = [head, *history[-2:]]  # is to answer stays (its transcript may not reach it)
            else:
                history = [head, Message.assistant("Understood.")]
        return history


def _safe_cut(history: list[Message], cut: int) -> int:
    while 0 < cut < len(history) and history[cut].tool_results:
        cut -= 1
    return cut


class Kotlin(Policy):
    name = "kotlin"
    summary_cap = 2_048
    preview = 100
    instruction = (
        "You are a conversation summarizer. Your task is to create a concise but comprehensive "
        "conversation summary. Focus on:\n1. Key decisions and actions taken\n2. Important information "
        "discovered (file contents, command outputs)\n3. The user's explicit requests and preferences\n"
        "4. Any errors encountered and how they were resolved\n\nWrite the summary in plain English. It "
        "will be inserted into the conversation history to help the assistant remember what happened "
        "earlier. Be factual and specific — include file paths, command names, and key findings."
    )

    def __init__(self, window: int, frame: Frame, count: Count, write: Writer) -> None:
        super().__init__(window, frame, count, write)
        self.buffer: str | None = None

    def _estimate(self, history: list[Message]) -> int:
        return sum(len(message_text(m)) for m in history) // 3

    def _render(self, span: list[Message], previous: str | None) -> tuple[str, list[Entry]]:
        lines = [self.instruction, ""]
        entries: list[Entry] = []
        if previous is not None:
            lines += ["## Previous Summary", previous, "", "Incorporate the above previous summary with "
                      "the new messages below into a single updated summary.", ""]  # fmt: skip
            entries.append(("summary", previous))
        lines += ["## Messages to Summarize", ""]
        for m in span:
            role = m.role.upper()
            if m.tool_results:
                previews = ", ".join(
                    r.content[: self.preview] + "..." if len(r.content) > self.preview else r.content
                    for r in m.tool_results
                )
                lines += [f"{role}: ", f"  [Tool Results: {previews}]"]
                entries.append(("tool", previews))
                continue
            lines.append(f"{role}: {m.text}")
            entries.append(("user" if m.role == "user" else "assistant", m.text))
            if m.tool_uses:
                lines.append(f"  [Tool Calls: {', '.join(u.name for u in m.tool_uses)}]")
        return "\n".join(lines), entries

    def _compact(self, history: list[Message], newest: bool = True) -> list[Message]:
        """The seed's `compact()`: the older part summarized so the kept tail is at most half the
        window; ahead of a request (`newest`) the newest message stays whatever its size, after a
        refusal it may go too (the rolling summary outlives its message: FIFO may drop that)."""
        previous = self.buffer
        start = 1 if history and history[0].summary is not None else 0
        keep, kept_tokens = len(history), 0
        while keep > start + 1 and kept_tokens + len(message_text(history[keep - 1])) // 3 <= self.window / 2:
            keep -= 1
            kept_tokens += len(message_text(history[keep])) // 3
        # The newest message stays whatever its size: the model has not answered it yet, and the
        # seed keeps its most recent messages (a result summarized from its 100-character preview
        # before the model saw it would leave the turn that asked for it nothing to go on).
        cut = _safe_cut(history, min(keep, len(history) - 1) if newest else keep)
        if cut <= start:
            return history
        prompt, entries = self._render(history[start:cut], previous)
        self.buffer = self._summary(prompt, entries)
        return [_record_message(self.buffer), *history[cut:]]

    def _truncate(self, history: list[Message]) -> list[Message]:
        """The seed's emergency truncation: the oldest message goes while the estimate is above half
        the window, unless that would orphan a tool result (then it stops, as the seed does)."""
        if self._estimate(history) >= 0.95 * self.window:
            while len(history) > 4 and self._estimate(history) > 0.5 * self.window:
                cut = _safe_cut(history, 1)
                if cut <= 0:
                    break
                history = history[cut:]
        return history

    def prepare(self, history: list[Message]) -> list[Message]:
        if self._estimate(history) >= 0.8 * self.window:
            history = self._compact(history)
        return self._truncate(history)

    def react(self, history: list[Message], tokens: int) -> list[Message] | None:
        # The seed's reactive path (AgentLoop, "s08: compaction + retry"): refused, it calls
        # compact() whatever its estimate says and retries the turn; nothing to cut, it gives up.
        compacted = self._truncate(self._compact(history, newest=False))
        return None if compacted is history else compacted


_CJK = re.compile(r"[\u3000-\u303f\u3040-\u30ff\u4e00-\u9fff\uff00-\uffef]")


class JavaScript(Policy):
    name = "javascript"
    budget = 64 * 1024
    summary_cap = 800
    keep_turns = 3
    prompt = (
        "Compress the conversation history below into a structured summary for the assistant to "
        "continue from. Keep: 1. the operations done and whether each succeeded; 2. the facts found: "
        "exact values, paths, versions, settings, error messages, verbatim; 3. what was planned but not "
        "done; 4. the user's requirements and preferences. Bullet points, no pleasantries, do not guess, "
        "output only the summary."
    )  # the seed's prompt is in Chinese; this is its content, so every stand-in reads the same asks

    def _estimate(self, history: list[Message]) -> int:
        total = 0
        for m in history:
            text = json.dumps(m.to_json()["content"], ensure_ascii=False)
            cjk = len(_CJK.findall(text))
            total += math.ceil(cjk / 1.5 + (len(text) - cjk) / 4) + 4
        return total

    def _users(self, history: list[Message]) -> list[int]:
        return [i for i, m in enumerate(history) if m.role == "user" and not m.tool_results]

    @staticmethod
    def _cut(text: str, limit: int) -> str:
        return text if len(text) <= limit else f"{text[:limit]}… (truncated, {len(text)} characters)"

    def _transcript(self, older: list[Message]) -> tuple[str, list[Entry]]:
        entries: list[Entry] = []
        previous = older[0].summary.text if older and older[0].summary is not None else None
        if previous is not None:
            entries.append(("summary", previous))
            older = older[2:] if len(older) > 1 and older[1].role == "assistant" else older[1:]
        lines = [f"[Earlier summary]\n{previous}"] if previous is not None else []
        for m in older:
            if m.tool_results:
                for r in m.tool_results:
                    entries.append(("tool", self._cut(r.content, 800)))
                    lines.append(f"[Result{' failed' if r.is_error else ''}] {entries[-1][1]}")
            elif m.role == "user":
                entries.append(("user", self._cut(m.text, 1_000)))
                lines.append(f"[User] {entries[-1][1]}")
            else:
                if m.text.strip():
                    entries.append(("assistant", self._cut(m.text, 1_000)))
                    lines.append(f"[Assistant] {entries[-1][1]}")
                for u in m.tool_uses:
                    entries.append(("assistant", f"{u.name} {self._cut(json.dumps(dict(u.input)), 300)}"))
                    lines.append(f"[Call] {entries[-1][1]}")
        return "\n".join(lines), entries

    def _compact(self, history: list[Message], keep: int) -> list[Message] | None:
        users = self._users(history)
        if len(users) <= keep or users[-keep] < 2:
            return None
        split = users[-keep]
        text, entries = self._transcript(history[:split])
        record = self._summary(f"{self.prompt}\n\n{text}", entries)
        note = f"[Context summary] To save context, the {split} earlier messages were compressed:\n\n"
        return [_record_message(note + record), Message.assistant("Understood."), *history[split:]]

    def prepare(self, history: list[Message]) -> list[Message]:
        if self._estimate(history) < 0.7 * min(self.budget, self.window):
            return history
        return self._compact(history, self.keep_turns) or history

    def react(self, history: list[Message], tokens: int) -> list[Message] | None:
        # The seed's reactive path: force a compaction (keeping 1 turn if 3 cannot be cut), retry once.
        return self._compact(history, self.keep_turns) or self._compact(history, 1)


class Masking(Policy):
    name = "masking"
    keep = 10

    @staticmethod
    def placeholder(result: ToolResult) -> str:
        return f"Old environment output: ({len(result.content.splitlines())} lines omitted)"

    def prepare(self, history: list[Message]) -> list[Message]:
        return _mask(history, self.keep, self.placeholder, "Old environment output: (")


class Hybrid(Masking):
    """The paper's hybrid: summarize_every_n_turns (N = 21, keep M = 10, one rolling summary), then
    last_n_observations (10). The summarizer reads the turns as they were, not masked."""

    name = "hybrid"
    n, m = 21, 10

    def __init__(self, window: int, frame: Frame, count: Count, write: Writer) -> None:
        super().__init__(window, frame, count, write)
        self.raw: dict[str, ToolResult] = {}
        self.previous: str | None = None

    def ingest(self, use: ToolUse, result: ToolResult, round_size: int) -> ToolResult:
        self.raw[result.tool_use_id] = result
        return super().ingest(use, result, round_size)

    def _unmasked(self, message: Message) -> Message:
        if not message.tool_results:
            return message
        return message.replace(
            self.raw.get(b.tool_use_id, b) if isinstance(b, ToolResult) else b for b in message.content
        )

    def prepare(self, history: list[Message]) -> list[Message]:
        start = 2 if len(history) > 1 and history[1].summary is not None else 1
        turns = [i for i in range(start, len(history)) if history[i].role == "assistant"]
        if len(turns) >= self.n + self.m:
            cut = turns[self.n]  # the first N turns are summarized, the rest kept
            span = [self._unmasked(m) for m in history[start:cut]]
            entries = [("user", history[0].text)]
            if self.previous is not None:
                entries.append(("summary", self.previous))
            entries += _entries(span)
            prompt = "\n\n".join(f"{role}: {text}" for role, text in entries)
            self.previous = self._summary(prompt, entries)
            history = [history[0], _record_message(self.previous), *history[cut:]]
        return super().prepare(history)


class NoCompaction(Policy):
    name = "none"


POLICIES: dict[str, type[Policy]] = {
    p.name: p for p in (Ours, JavaS06, Kotlin, JavaScript, Masking, Hybrid, NoCompaction)
}
SUMMARIZING = ("ours", "java-s06", "kotlin", "javascript", "hybrid")  # the stand-in matters for these
