"""Replay a session through a policy as the agent's loop would, and bill and score what it sends.

    replay(session, policy, frame_tokens) -> Run

For each step: a user message is appended; a model step prepares the request (the policy's history)
and sends it; the reply and its tool results are appended (through the policy's `ingest`). The
same rules hold for every policy:

- **Counts.** Every request is counted with one reference tokenizer (o200k_base, exact: what
  OpenAI bills), whatever the policy's own estimate; Claude's count is that times
  `CLAUDE_RATIO` (1.3: Claude 4.7 and later count about 30% more tokens for the same text).
- **Feasibility.** A request whose Claude count is over the window is refused, as the provider
  refuses it, and not billed. The policy may `react` once (ours and the JavaScript seed do); if it
  cannot, or the retry is refused too, the session has failed for it at that request and the run
  is reported as failed, not priced.
- **Caching**, four ways at once over the same requests: Anthropic's marked cache (a prefix is read
  back only where some request marked one: every request marks the frame, its last message, and
  the policy's edit point, `Policy.anchor`: for a baseline the newest message it rewrote, for ours
  what the product marks) and OpenAI's automatic cache (any prefix sent before), a prefix ending at
  a content block as both providers match it, each at two paces:
  `steady` (20 s a model step, 90 s a user message: no entry expires) and `paused` (the user's
  pauses drawn from a lognormal, median 120 s, sigma 1.2: about one in five past the 5-minute
  TTL). A cache entry lives 5 minutes (Anthropic) or 30 minutes (OpenAI) after its last use.
- **Summary calls** are requests like any other: the frame, then the policy's own summary input,
  through the same caches; their output billed. A summary made at the trigger blocks the turn it
  runs in: the user waits `SUMMARY_FIRST_TOKEN_S` plus its output at `OUTPUT_TOKENS_PER_S`. Ours
  prepares its record ahead (context/timing.py) and is billed for it when it is sent; the user waits
  only for what is left of that time when the record is swapped in (the steady clock since), and
  for none of a record never swapped in. The seed policies have no such path: every summary blocks.
  (`replay(..., writer=...)` bills them instead through another model's own caches, as
  `summary_writer.py` does; without it every figure is as before.)
- **Probes** on the same requests for every policy (every `PROBE_EVERY`-th), after Factory (Dec
  2025): *recall* (each fact planted so far: its answer is in the request, or the policy's recall,
  called with the fact's question or, at every other probe, its paraphrase (`Fact.asked`: words of
  a question only, no oracle phrase), returns it; each such recall is billed as a tool
  round trip, one more request carrying the calls and their results), *artifact* (every file a
  tool call touched so far is named in the request), *continuation* (the latest user request, and
  the next step stated since it), *decision* (the user's constraints and decisions, verbatim).

Deterministic: the same session and policy give the same bytes in every request and the same figures.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from bench_ledger import Ledger, edits, first
from bench_policies import Policy, SummaryCall
from bench_sessions import Fact, Session, seeded_ids

from agent_cli.core.messages import Message, ToolResult, ToolUse, Usage
from agent_cli.providers.model_info import ModelInfo
from agent_cli.tokens.encodings import get_encoding
from agent_cli.tokens.ratio import NEW_TOKENIZER_FACTOR

__all__ = [
    "CACHES",
    "CLAUDE_RATIO",
    "PARTS",
    "PROBES",
    "PROBE_EVERY",
    "Bill",
    "Run",
    "reference_count",
    "replay",
    "request_text",
]

PROBES = ("recall", "artifact", "continuation", "decision")
PROBE_EVERY = 10  # every policy is probed on the same requests: the 10th, 20th, ... of the session
CLAUDE_RATIO = NEW_TOKENIZER_FACTOR
TTL = 300.0  # Anthropic's default cache entry lives 5 minutes after its last use
AUTOMATIC_TTL = 1_800.0  # OpenAI's writes on GPT-6.x are priced for 30 minutes
MODEL_STEP_SECONDS = 20.0
USER_STEP_SECONDS = 90.0
PAUSE_MEDIAN_SECONDS, PAUSE_SIGMA = 120.0, 1.2
SUMMARY_FIRST_TOKEN_S, OUTPUT_TOKENS_PER_S = 1.0, 60.0
CACHES = ("claude", "claude-paused", "openai", "openai-paused")
PARTS = ("turns", "summaries", "recall")  # what the Claude bill at the steady pace paid for
_ENCODING = get_encoding("o200k_base")


def reference_count(text: str) -> int:
    return len(_ENCODING.encode_ordinary(text))


@dataclass
class Bill:
    """Tokens (reference counts) billed through one cache."""

    read: int = 0
    write: int = 0
    output: int = 0

    def dollars(self, prices: ModelInfo, ratio: float = 1.0) -> float:
        return (
            ratio
            * (
                self.read * prices.cache_read_price
                + self.write * prices.cache_write_price
                + self.output * prices.output_price
            )
            / 1e6
        )


@dataclass
class Run:
    policy: str
    window: int
    shape: str = ""
    seed: int = 0
    outputs: str = ""
    summarizer: str = ""
    requests: list[int] = field(default_factory=list)  # Claude count of each request sent, in order
    failed_at: int | None = None  # the request the provider refused and the policy could not go past
    bills: dict[str, Bill] = field(default_factory=lambda: {c: Bill() for c in CACHES})
    summary_calls: int = 0
    summary_input: int = 0  # Claude tokens
    summary_output: int = 0
    digests: int = 0
    recall_calls: int = 0
    wait_seconds: float = 0.0  # the user's wait on summary calls
    parts: dict[str, Bill] = field(default_factory=lambda: {k: Bill() for k in PARTS})  # Claude, steady
    fingerprint: str = ""  # a hash of every request's bytes, in order
    probes: dict[str, list[bool]] = field(default_factory=lambda: {p: [] for p in PROBES})
    ledger: Ledger = field(default_factory=Ledger)  # the Claude bill at the steady pace, by cause

    @property
    def finished(self) -> bool:
        return self.failed_at is None

    def share(self, probe: str) -> float | None:
        checks = self.probes[probe]
        return sum(checks) / len(checks) if checks else None

    def dollars(self, cache: str, prices: ModelInfo) -> float:
        return self.bills[cache].dollars(prices, CLAUDE_RATIO if cache.startswith("claude") else 1.0)

    @property
    def peak(self) -> int:
        return max(self.requests, default=0)

    @property
    def mean(self) -> float:
        return sum(self.requests) / max(len(self.requests), 1)


class _Cache:
    """Prefixes (chains of content-block keys, hashed) with the time they were last used.

    A prefix ends at a content block, as the providers match it: Anthropic reads back a prefix "up to
    and including the block" a breakpoint marks, and OpenAI any prefix sent before. So a request that
    adds a block to a message (a summary request's instruction after the last tool result) reads the
    blocks before it back. Two kinds. *Marked* (Anthropic's): a request writes only the prefixes it
    marks (the frame, its last block, the end of the policy's anchor message) and reads the longest
    one it starts with. *Automatic* (OpenAI's): every prefix a request sent can be read back."""

    def __init__(self, marked: bool) -> None:
        self.marked = marked
        self.ttl = TTL if marked else AUTOMATIC_TTL
        self.alive: dict[str, float] = {}

    def read(self, chain: list[str], now: float, anchor: int | None = None) -> int:
        """How many leading keys are cached; refreshes what was read, stores what the request writes."""
        self.alive = {k: t for k, t in self.alive.items() if now - t <= self.ttl}
        best = next((n for n in range(len(chain), 0, -1) if chain[n - 1] in self.alive), 0)
        if self.marked:
            stored = [n for n in {1, len(chain), best, anchor or 0} if 0 < n <= len(chain)]
        else:
            stored = list(range(1, len(chain) + 1))
        for n in stored:
            self.alive[chain[n - 1]] = now
        return best


_Block = tuple[str, int]  # a content block's key (its role and JSON, hashed) and its reference count


class _Counts:
    """Per-message and per-block keys and reference counts, computed once per message object."""

    def __init__(self, frame_tokens: int) -> None:
        self.frame = frame_tokens
        self._keys: dict[int, tuple[str, int, tuple[_Block, ...], Message]] = {}

    def _of(self, message: Message) -> tuple[str, int, tuple[_Block, ...], Message]:
        got = self._keys.get(id(message))
        if got is None or got[3] is not message:
            content = [b.to_json() for b in message.content]
            key = hashlib.sha1(json.dumps([message.role, content], sort_keys=True).encode()).hexdigest()
            blocks = [
                (
                    hashlib.sha1(json.dumps([message.role, b], sort_keys=True).encode()).hexdigest(),
                    reference_count(json.dumps(b, ensure_ascii=False)),
                )
                for b in content
            ] or [(key, 0)]
            blocks[0] = (blocks[0][0], blocks[0][1] + 4)  # the message's own overhead, on its first block
            got = (key, sum(t for _, t in blocks), tuple(blocks), message)
            self._keys[id(message)] = got
        return got

    def blocks(self, messages: list[Message]) -> list[tuple[int, _Block]]:
        """Every content block of `messages` in order, with the index of its message."""
        return [(i, block) for i, m in enumerate(messages) for block in self._of(m)[2]]

    def chain(self, messages: list[Message]) -> list[str]:
        """Hash of each prefix: the frame, then the frame and the first n content blocks."""
        out = [h := "frame"]
        for _, (key, _) in self.blocks(messages):
            h = hashlib.sha1((h + key).encode()).hexdigest()
            out.append(h)
        return out

    def sizes(self, messages: list[Message]) -> list[int]:
        """The frame's count, then each content block's (the chain's units)."""
        return [self.frame, *(tokens for _, (_, tokens) in self.blocks(messages))]

    def end(self, messages: list[Message], index: int) -> int:
        """The chain position that ends message `index` (the frame is position 1)."""
        return 1 + sum(len(self._of(m)[2]) for m in messages[: index + 1])

    def tokens(self, messages: list[Message]) -> list[int]:
        return [self._of(m)[1] for m in messages]


class _Clocks:
    def __init__(self, seed: int) -> None:
        self.steady = self.paused = 0.0
        self.rng = random.Random(f"pauses-{seed}")

    def user(self) -> None:
        self.steady += USER_STEP_SECONDS
        self.paused += self.rng.lognormvariate(0, PAUSE_SIGMA) * PAUSE_MEDIAN_SECONDS

    def model(self, seconds: float = MODEL_STEP_SECONDS) -> None:
        self.steady += seconds
        self.paused += seconds


class _Biller:
    """Sends requests through the four caches and adds them to the run's bills."""

    def __init__(self, run: Run, counts: _Counts, clocks: _Clocks) -> None:
        self.run, self.counts, self.clocks = run, counts, clocks
        self.caches = {c: _Cache(marked=c.startswith("claude")) for c in CACHES}

    def bill(
        self,
        messages: list[Message],
        output: int,
        part: str,
        anchor: int | None = None,
        own: list[bool] | None = None,
    ) -> int:
        """Bill one request as `part` of the session; returns its reference count. `own[i]`: message i
        is the session's own (for the ledger; given for main requests)."""
        chain = self.counts.chain(messages)
        self.run.fingerprint = hashlib.sha1((self.run.fingerprint + chain[-1]).encode()).hexdigest()
        sizes = self.counts.sizes(messages)
        total = sum(sizes)
        mark = None if anchor is None else self.counts.end(messages, anchor)
        prefix = [0]
        for s in sizes:
            prefix.append(prefix[-1] + s)
        for name, cache in self.caches.items():
            now = self.clocks.paused if name.endswith("paused") else self.clocks.steady
            hit = cache.read(chain, now, mark)
            bills = [self.run.bills[name]] + ([self.run.parts[part]] if name == "claude" else [])
            for bill in bills:
                bill.read += prefix[hit]
                bill.write += total - prefix[hit]
                bill.output += output
            if name == "claude":
                if own is not None:
                    blocks = self.counts.blocks(messages)
                    keys = [key for _, (key, _) in blocks]
                    self.run.ledger.turn(keys, sizes, hit, output, [own[i] for i, _ in blocks])
                else:
                    line = "summary calls" if part == "summaries" else part
                    self.run.ledger.whole(line, prefix[hit], total - prefix[hit], output)
        return total


def claude(tokens: int) -> int:
    return math.ceil(tokens * CLAUDE_RATIO)


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def request_text(history: list[Message]) -> str:
    """Every string the request carries (texts, tool inputs and outputs), as the model reads them."""
    return "\n".join(s for m in history for b in m.content for s in _strings(b.to_json()))


@dataclass
class _State:
    facts: list[Fact] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    last_user: str = ""
    probes: int = 0  # probe points so far
    next_step: str = ""


class Bills(Protocol):
    """What sends a request through some caches and bills it (`_Biller`, or another model's own)."""

    def bill(self, messages: list[Message], output: int, part: str, anchor: int | None = None) -> int: ...


# Who bills the summary calls, made from the run's counts and clocks (None: the main model's caches).
WriterBiller = Callable[[Run, _Counts, _Clocks], Bills]


def replay(
    session: Session, policy: Policy, frame_tokens: int, *, seed: int = 0, writer: WriterBiller | None = None
) -> Run:
    with seeded_ids(f"{session.name}-{seed}-{policy.name}"):
        return _replay(session, policy, frame_tokens, seed, writer)


def _replay(
    session: Session, policy: Policy, frame_tokens: int, seed: int, writer: WriterBiller | None
) -> Run:
    run = Run(policy.name, policy.window, session.name, seed)
    counts, clocks = _Counts(frame_tokens), _Clocks(seed)
    biller = _Biller(run, counts, clocks)
    summaries: Bills = biller if writer is None else writer(run, counts, clocks)
    history: list[Message] = []
    originals: set[int] = set()
    state = _State()
    billed_summaries = 0
    sent = 0
    policy.summary_seconds = _summary_seconds
    for step in session.steps:
        if step.is_user:
            history.append(step.messages[0])
            originals.add(id(step.messages[0]))
            state.last_user, state.next_step = step.messages[0].text, ""  # a new request supersedes the plan
            state.facts += step.facts
            clocks.user()
            continue
        clocks.model()
        policy.now = clocks.steady
        given = history
        history = policy.prepare(history)
        cause = edits(given, history)
        size = frame_tokens + sum(counts.tokens(history))
        if claude(size) > policy.window:
            reacted = policy.react(history, claude(size))
            if reacted is not None:
                cause = first(cause, edits(history, reacted))
                history = reacted
                size = frame_tokens + sum(counts.tokens(history))
        billed_summaries = _bill_summaries(run, policy, summaries, billed_summaries)
        if claude(size) > policy.window:
            run.failed_at = sent + 1
            break
        sent += 1
        reply, *results = step.messages
        run.ledger.cause = cause
        own = [id(m) in originals for m in history]
        biller.bill(history, counts.tokens([reply])[0], "turns", policy.anchor(history, originals), own)
        run.requests.append(claude(size))
        policy.observe(history, Usage(input_tokens=claude(size)))
        if sent % PROBE_EVERY == 0:
            _probe(run, policy, biller, history, state)
        for call in reply.tool_uses:
            path = call.input.get("path")
            if isinstance(path, str) and path not in state.paths:
                state.paths.append(path)
        history.append(reply)
        originals.add(id(reply))
        uses = {u.id: u for u in reply.tool_uses}
        for message in results:
            kept = [
                policy.ingest(uses[r.tool_use_id], r, len(uses)) if isinstance(r, ToolResult) else r
                for r in message.content
            ]
            stored = (
                message
                if all(a is b for a, b in zip(kept, message.content, strict=True))
                else message.replace(kept)
            )
            history.append(stored)
            originals.add(id(stored))
        state.facts += step.facts
        state.next_step = step.next_step or state.next_step
    run.digests = policy.digests
    run.wait_seconds = sum(_waited(call) for call in policy.summaries)
    return run


def _summary_seconds(output: str) -> float:
    """How long a summary call with this output runs: the first token, then the output streamed."""
    return SUMMARY_FIRST_TOKEN_S + claude(reference_count(output)) / OUTPUT_TOKENS_PER_S


def _waited(call: SummaryCall) -> float:
    """How long a turn waited on one summary call: all of it when made at the trigger; what was
    left of it at the swap when made ahead (the steady clock since it was sent); none when an
    ahead record was never swapped in."""
    seconds = _summary_seconds(call.output)
    if not call.ahead:
        return seconds
    return 0.0 if call.taken is None else max(seconds - (call.taken - call.started), 0.0)


def _bill_summaries(run: Run, policy: Policy, biller: Bills, done: int) -> int:
    for call in policy.summaries[done:]:
        output = reference_count(call.output)
        size = biller.bill(list(call.messages), output, "summaries")
        run.summary_calls += 1
        run.summary_input += claude(size)
        run.summary_output += claude(output)
    return len(policy.summaries)


def _probe(run: Run, policy: Policy, biller: _Biller, history: list[Message], state: _State) -> None:
    text = request_text(history)
    missing: list[Fact] = []
    for fact in state.facts:
        if fact.kind == "decision":
            run.probes["decision"].append(fact.text in text)
        elif fact.text in text:
            run.probes["recall"].append(True)
        else:
            missing.append(fact)
    probe = state.probes
    state.probes += 1
    results: list[tuple[Fact, str | None]] = [(f, policy.recall(f.asked(probe))) for f in missing]
    run.probes["recall"] += [found is not None and f.text in found for f, found in results]
    asked = [(f, found) for f, found in results if found is not None]
    if asked:  # the recall round trip: one reply with the calls, then a request carrying their results
        calls = [
            ToolUse(f"recall_{run.recall_calls + n}", "recall", {"query": f.asked(probe)})
            for n, (f, _) in enumerate(asked)
        ]
        call = Message("assistant", tuple(calls))
        answers = Message(
            "user", tuple(ToolResult(c.id, found or "") for c, (_, found) in zip(calls, asked, strict=True))
        )
        for bill in [*run.bills.values(), run.parts["recall"]]:  # the probed request's reply is the calls ...
            bill.output += biller.counts.tokens([call])[0]
        run.ledger.whole("recall", 0, 0, biller.counts.tokens([call])[0])
        biller.bill([*history, call, answers], 0, "recall")  # ... and their results enter one more request
        run.recall_calls += len(asked)
    if state.paths:
        run.probes["artifact"].append(all(p in text for p in state.paths))
    if state.last_user:
        run.probes["continuation"].append(
            state.last_user in text and (not state.next_step or state.next_step in text)
        )
