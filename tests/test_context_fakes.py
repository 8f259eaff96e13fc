"""Fakes shared by the context-engine tests: a deterministic counter, a scripted summarizer,
conversation builders and an independent pairing check. The tests at the bottom keep the
fakes honest."""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from agent_cli.config.settings import ContextSettings
from agent_cli.context.engine import ContextEngine, Frame
from agent_cli.context.protocol import Gate, open_gate
from agent_cli.context.records import Submit, in_thread
from agent_cli.core.messages import Block, Message, TextBlock, ToolResult, ToolUse, Usage
from agent_cli.core.requests import Request, ToolSpec
from agent_cli.store.archive import Archive

_ids = itertools.count(1)


class FakeCounter:
    """characters / 4 (rounded up) plus 4 per message; request counts scale after an overflow."""

    def __init__(self) -> None:
        self.scale = 1.0
        self.cache: dict[str, int] = {}
        self.observed: list[Usage] = []
        self.text_calls = 0

    def count_text(self, text: str) -> int:
        self.text_calls += 1
        return (len(text) + 3) // 4

    def count_message(self, message: Message) -> int:
        cached = self.cache.get(message.id)
        if cached is None:
            chars = 0
            for block in message.content:
                data = block.to_json()
                chars += len(data.get("text") or "") + len(data.get("content") or "")
                if "input" in data:
                    chars += len(data["name"]) + len(json.dumps(data["input"]))
            cached = self.cache[message.id] = 4 + (chars + 3) // 4
        return cached

    def count_frame(self, system: str, tools: tuple[ToolSpec, ...]) -> int:
        chars = len(system) + sum(
            len(t.name) + len(t.description) + len(json.dumps(t.input_schema)) for t in tools
        )
        return int(((chars + 3) // 4) * self.scale)

    def count_request(self, system: str, tools: tuple[ToolSpec, ...], messages: list[Message]) -> int:
        raw = self.count_frame(system, tools) / self.scale + sum(self.count_message(m) for m in messages)
        return int(raw * self.scale)

    def fits_under(
        self, system: str, tools: tuple[ToolSpec, ...], messages: list[Message], limit: int
    ) -> bool:
        return False  # (counted every time, as the engine did before it asked)

    def observe(self, system: str, tools: tuple[ToolSpec, ...], sent: list[Message], usage: Usage) -> None:
        self.observed.append(usage)

    def calibrate_overflow(
        self, system: str, tools: tuple[ToolSpec, ...], messages: list[Message], reported: int
    ) -> None:
        raw = self.count_request(system, tools, messages) / self.scale
        self.scale = max(self.scale, reported / max(raw, 1))


Reply = str | Exception | Callable[[Request], str]


@dataclass
class FakeSummarizer:
    """Answers summary requests from a script (the last entry repeats); records every request."""

    script: list[Reply] = field(default_factory=lambda: ["## Work state\nDone: the earlier steps."])
    requests: list[Request] = field(default_factory=list)

    def __call__(self, request: Request) -> str:
        self.requests.append(request)
        step = self.script.pop(0) if len(self.script) > 1 else self.script[0]
        if isinstance(step, Exception):
            raise step
        return step(request) if callable(step) else step


FRAME = Frame("You are a coding agent.", (ToolSpec("read_file", "Read a file.", {"type": "object"}),))


def user(text: str) -> Message:
    return Message.user(text)


def assistant(text: str) -> Message:
    return Message.assistant(text)


def tool_round(
    name: str, args: dict[str, object], output: str, *, error: bool = False, text: str = ""
) -> list[Message]:
    """An assistant tool call and the user message carrying its result."""
    use = ToolUse(f"toolu_{next(_ids)}", name, args)
    blocks: list[Block] = [TextBlock(text)] if text else []
    blocks.append(use)
    return [Message.of("assistant", blocks), Message.of("user", [ToolResult(use.id, output, error)])]


def pairing_errors(messages: Sequence[Message]) -> list[str]:
    """Every tool_use answered in the next message, every result preceded by its call."""
    errors: list[str] = []
    for i, message in enumerate(messages):
        if message.role == "assistant" and message.tool_uses:
            nxt = messages[i + 1] if i + 1 < len(messages) else None
            answered = {r.tool_use_id for r in nxt.tool_results} if nxt else set()
            for use in message.tool_uses:
                if use.id not in answered and i + 1 < len(messages):
                    errors.append(f"call {use.id} at {i} unanswered")
        for result in message.tool_results:
            prev = messages[i - 1] if i > 0 else None
            if prev is None or result.tool_use_id not in {u.id for u in prev.tool_uses}:
                errors.append(f"result {result.tool_use_id} at {i} has no call before it")
    if messages and messages[0].role != "user":
        errors.append("the history does not start with a user message")
    return errors


def make_engine(
    tmp: Path,
    summarizer: FakeSummarizer | None = None,
    *,
    window: int = 20_000,
    max_output: int = 2_000,
    counter: FakeCounter | None = None,
    clock: Callable[[], float] | None = None,
    archive: Archive | None = None,
    submit: Submit | None = None,
    gate: Gate = open_gate,
    **overrides: object,
) -> tuple[ContextEngine, FakeCounter, FakeSummarizer]:
    """An engine over a small window, with settings scaled down to it unless overridden."""
    small = {
        "clear_protect_tokens": 2_000,
        "clear_min_batch_tokens": 1_000,
        "tool_result_max_tokens": 1_500,
        "keep_tail_tokens": 2_000,
        "min_freed_tokens": 0,  # the tail these tests' sizes were drawn against (scaled: none to free)
        "user_messages_tokens": 800,
        "summary_max_tokens": 600,
        "recall_max_chars": 4_000,
        "trigger_ratio": 0.80,  # the lines these tests' sizes were drawn against (the default: 0.90)
        "hold_ratio": 0.80,  # at the trigger: a turn waits for its record (tests of the hold set it above)
        "digest_stands_in": False,  # and no digest stands in for it (tests of the stand-in set it)
    }
    small.update(overrides)
    settings = ContextSettings(**small)  # type: ignore[arg-type]
    counter = counter or FakeCounter()
    summarizer = summarizer or FakeSummarizer()
    ticks = itertools.count()
    engine = ContextEngine(
        settings=settings,
        window=window,
        max_output=max_output,
        counter=counter,
        archive=archive or Archive(tmp / ".transcripts" / "s1"),
        summarize=summarizer,
        clock=clock or (lambda: float(next(ticks))),
        submit=submit or in_thread,
        gate=gate,
    )
    return engine, counter, summarizer


def filler(n_chars: int, word: str = "lorem") -> str:
    """`n_chars` of text in lines, so line-based cuts have something to cut."""
    line = (word + " ") * 15 + "\n"
    return (line * (n_chars // len(line) + 1))[:n_chars]


def removed_are_stored(before: Sequence[Message], after: Sequence[Message], store: Archive) -> list[str]:
    """Ids of messages gone from the history that no transcript file holds."""
    kept = {m.id for m in after}
    text = "".join(p.read_text() for p in store.files())
    return [m.id for m in before if m.id not in kept and m.id not in text]


# -- the fakes' own tests -----------------------------------------------------


def test_fake_counter_counts_and_caches() -> None:
    counter = FakeCounter()
    message = user("x" * 40)
    assert counter.count_message(message) == 14
    assert counter.count_message(message) == 14 and len(counter.cache) == 1
    assert counter.count_request("", (), [message]) == 14


def test_pairing_errors_finds_orphans() -> None:
    call, result = tool_round("read_file", {"path": "a"}, "x")
    assert pairing_errors([user("hi"), call, result]) == []
    assert pairing_errors([user("hi"), result])
    assert pairing_errors([user("hi"), call, user("other")])
    assert pairing_errors([call, result])


def tail_start(before: list[Message], after: list[Message]) -> int:
    """Where the verbatim tail starts in `before`: the longest end both share."""
    shared = 0
    while shared < min(len(before), len(after)) and before[-1 - shared] == after[-1 - shared]:
        shared += 1
    return len(before) - shared


def sent(requests: list[Request]) -> list[object]:
    """What goes on the wire: the requests without the messages' own ids (new for each message)."""
    return [
        (r.system, r.tools, r.max_tokens, r.options, [(m.role, m.content) for m in r.messages])
        for r in requests
    ]


def unnamed(messages: list[Message]) -> list[str]:
    """The messages' texts, with the span file each record names made one name."""
    return [re.sub(r"span-\d+-compact", "span-N-compact", m.text) for m in messages]
