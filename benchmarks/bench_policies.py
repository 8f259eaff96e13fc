"""Compaction policies side by side: ours, the three seeds' as they describe themselves, masking only.

Each policy sees the session as the agent's loop does: `ingest` each tool result as it arrives,
`prepare` the history before each request (what it returns is sent, and kept), `observe` the
provider's count after it. Summaries come from one deterministic stand-in for a model
(`stand_in_record`): a fixed-size record built from the span, the same for every policy.

    ours         agent-cli's ContextEngine, defaults (or any ContextSettings)
    java-s06     every turn, tool results older than 3 turns become "[Previous: used {tool}]";
                 past 50,000 tokens (characters / 4) everything is summarized into one message
    kotlin       at 80% of the window (characters / 3) the older part is summarized so the kept
                 tail is at most 50% of the window; above 95% the oldest messages go, FIFO
    javascript   at 70% of a 64k budget (CJK-aware estimate) all but the last 3 user turns are
                 summarized into a summary pair (a user message and an acknowledgement)
    masking      observation masking only (The Complexity Trap, arXiv 2508.21433): tool results
                 older than the last 10 turns become a placeholder; no summary unless the request
                 would not fit the window, then everything is summarized (so it stays under it)
    none         no compaction at all (only where the window allows)
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from agent_cli.config.settings import ContextSettings
from agent_cli.context.engine import ContextEngine
from agent_cli.context.policy import output_for_window
from agent_cli.context.protocol import Frame
from agent_cli.context.summary_request import SummaryReply
from agent_cli.core.events import CompactEvent
from agent_cli.core.messages import Message, SummaryBlock, ToolResult, ToolUse, Usage
from agent_cli.providers.base import Request
from agent_cli.store.archive import Archive
from agent_cli.tokens.counter import TokenCounter

__all__ = ["POLICIES", "Policy", "stand_in_record"]

RECORD_TOKENS = 1_200
Count = Callable[[str], int]


def _text(message: Message) -> str:
    parts: list[str] = []
    for block in message.content:
        data = block.to_json()
        parts += [str(data.get(k)) for k in ("text", "content", "name") if data.get(k)]
        if isinstance(block, ToolUse):
            parts.append(str(dict(block.input)))
    return " ".join(parts)


def stand_in_record(messages: Sequence[Message], count: Count, size: int = RECORD_TOKENS) -> str:
    """A model's record, deterministically: the newest messages' first lines, up to `size` tokens,
    in order. Like a real summary it keeps what is recent and drops early detail."""
    lines: list[str] = []
    used = 0
    for message in reversed(messages):
        line = f"- {message.role}: {' '.join(_text(message).split())[:160]}"
        cost = count(line)
        if used + cost > size:
            break
        lines.append(line)
        used += cost
    return "## Work state\n" + "\n".join(reversed(lines))


class Policy:
    """The surface the replay drives. Subclasses change `prepare` (and `ingest`, `recall`)."""

    name = "policy"

    def __init__(self, window: int, frame: Frame, count: Count) -> None:
        self.window, self.frame, self.count = window, frame, count
        self.summaries: list[tuple[int, int]] = []  # (input, output) tokens of each summary call
        self.actions: list[str] = []  # what the last prepare did
        self.calls: dict[str, str] = {}

    def ingest(self, use: ToolUse, result: ToolResult, round_size: int) -> ToolResult:
        self.calls[use.id] = use.name
        return result

    def prepare(self, history: list[Message]) -> list[Message]:
        return history

    def observe(self, sent: list[Message], usage: Usage) -> None:
        return None

    def recall(self, query: str) -> str | None:
        return None  # no way to fetch back what left the context

    def anchor(self, history: list[Message]) -> int | None:
        """The message a cache breakpoint marks besides the last (None: the last only)."""
        return None

    def summarize(self, messages: Sequence[Message], instruction: str = "Summarize.") -> str:
        request_tokens = sum(self.count(_text(m)) for m in messages) + self.count(instruction)
        record = stand_in_record(messages, self.count)
        self.summaries.append((request_tokens, self.count(record)))
        self.actions.append("summarize")
        return record


class Ours(Policy):
    name = "ours"

    def __init__(
        self, window: int, frame: Frame, count: Count, settings: ContextSettings | None = None
    ) -> None:
        super().__init__(window, frame, count)
        self._tmp = tempfile.TemporaryDirectory()
        self.engine = ContextEngine(
            settings=settings or ContextSettings(),
            window=window,
            max_output=output_for_window(32_000, window),
            counter=TokenCounter("claude-sonnet-5-5", "anthropic"),
            archive=Archive(Path(self._tmp.name)),
            summarize=self._summarize,
        )

    def _summarize(self, request: Request) -> SummaryReply:
        record = stand_in_record(request.messages[:-1] or request.messages, self.count)
        inp = self.count(request.system) + sum(self.count(_text(m)) for m in request.messages)
        self.summaries.append((inp, self.count(record)))
        return SummaryReply(record, Usage(input_tokens=inp, output_tokens=self.count(record)))

    def ingest(self, use: ToolUse, result: ToolResult, round_size: int) -> ToolResult:
        capped, _ = self.engine.ingest(use, result, round_size=round_size)
        return capped

    def prepare(self, history: list[Message]) -> list[Message]:
        prepared = self.engine.prepare(history, self.frame)
        self.actions = [e.layer for e in prepared.events if isinstance(e, CompactEvent) and e.layer != "cap"]
        return prepared.messages

    def observe(self, sent: list[Message], usage: Usage) -> None:
        self.engine.observe(self.frame, sent, usage)

    def recall(self, query: str) -> str | None:
        return self.engine.recall(query)

    def anchor(self, history: list[Message]) -> int | None:
        return self.engine.cache_anchor(history)


def _placeholder(history: list[Message], older_than: int, calls: dict[str, str], text: str) -> list[Message]:
    """Tool results older than the last `older_than` assistant turns become `text` ({tool} filled)."""
    turns = [i for i, m in enumerate(history) if m.role == "assistant"]
    if len(turns) <= older_than:
        return history
    line = turns[-older_than]
    out: list[Message] = []
    for i, message in enumerate(history):
        if (
            i >= line
            or not message.tool_results
            or all(r.content.startswith("[") for r in message.tool_results)
        ):
            out.append(message)
            continue
        blocks = [
            ToolResult(b.tool_use_id, text.format(tool=calls.get(b.tool_use_id, "a tool")), b.is_error)
            if isinstance(b, ToolResult)
            else b
            for b in message.content
        ]
        out.append(message.replace(blocks))
    return out


def _record_message(text: str) -> Message:
    return Message("user", (SummaryBlock(text),))


class JavaS06(Policy):
    name = "java-s06"

    def prepare(self, history: list[Message]) -> list[Message]:
        masked = _placeholder(history, 3, self.calls, "[Previous: used {tool}]")
        self.actions = ["micro"] if masked != history else []
        history = masked
        if sum(len(_text(m)) for m in history) // 4 > 50_000:
            record = self.summarize(history)
            history = [
                _record_message("[Conversation compressed. Transcript saved.]\n\n" + record),
                Message.assistant("Understood."),
            ] + ([history[-1]] if history[-1].role == "user" else [])
        return history


def _safe_cut(history: list[Message], cut: int) -> int:
    while 0 < cut < len(history) and history[cut].tool_results:
        cut -= 1
    return cut


class Kotlin(Policy):
    name = "kotlin"

    def _estimate(self, history: list[Message]) -> int:
        return sum(len(_text(m)) for m in history) // 3

    def prepare(self, history: list[Message]) -> list[Message]:
        self.actions = []
        if self._estimate(history) >= 0.8 * self.window:
            keep, kept_tokens = len(history), 0
            while keep > 1 and kept_tokens + len(_text(history[keep - 1])) // 3 <= 0.5 * self.window:
                keep -= 1
                kept_tokens += len(_text(history[keep])) // 3
            cut = _safe_cut(history, keep)
            if cut > 0:
                history = [_record_message(self.summarize(history[:cut])), *history[cut:]]
        while self._estimate(history) >= 0.95 * self.window and len(history) > 2:
            cut = _safe_cut(history, 2) or 1
            history = history[cut:] if history[cut:] and history[cut].role == "user" else history[cut + 1 :]
            self.actions.append("emergency")
        return history


_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uff00-\uffef]")


class JavaScript(Policy):
    name = "javascript"
    budget = 64_000

    def _estimate(self, history: list[Message]) -> int:
        text = " ".join(_text(m) for m in history)
        cjk = len(_CJK.findall(text))
        return cjk + (len(text) - cjk) // 4

    def prepare(self, history: list[Message]) -> list[Message]:
        self.actions = []
        if self._estimate(history) <= 0.7 * min(self.budget, self.window):
            return history
        users = [i for i, m in enumerate(history) if m.is_plain_user]
        if len(users) <= 3:
            return history
        cut = users[-3]
        record = self.summarize(history[:cut])
        return [_record_message(record), Message.assistant("Understood."), *history[cut:]]


class Masking(Policy):
    name = "masking"
    keep_turns = 10

    def prepare(self, history: list[Message]) -> list[Message]:
        masked = _placeholder(history, self.keep_turns, self.calls, "[output omitted]")
        self.actions = ["mask"] if masked != history else []
        history = masked
        tokens = self.count(self.frame.system) + sum(self.count(_text(m)) for m in history)
        if tokens > self.window * 0.9:  # it would not fit: summarize everything, the only way to stay under
            tail = [history[-1]] if history[-1].role == "user" else []
            history = [_record_message(self.summarize(history)), Message.assistant("Understood."), *tail]
        return history


class NoCompaction(Policy):
    name = "none"


POLICIES: dict[str, type[Policy]] = {
    p.name: p for p in (Ours, JavaS06, Kotlin, JavaScript, Masking, NoCompaction)
}
