"""Replay a session through a policy as the agent's loop would, and score every request it sends.

    replay(session, policy, prices) -> Run

For each step: a user message is appended; a model step first prepares and sends the request (the
policy's history), then appends the reply and its tool results (through the policy's `ingest`).
Every request is counted with one reference tokenizer (o200k_base, exact), the same for every
policy whatever its own estimate, and priced with prompt caching, two ways: Anthropic's cache
reads back the longest prefix some request marked (each request marks the frame, its last
message, and the policy's anchor if it names one), OpenAI's any prefix sent before; what is read
costs the cache-read price, the rest the cache-write price; an entry lives 5 minutes (Anthropic)
or 30 minutes (OpenAI) after its last use, and the clock advances 20 s per model step and 90 s
per user step. Summary calls are
priced as requests too (their input written, their output at the output price), though ours
reuses the cached prefix for its summary request: conservative for ours.

After every request where the policy changed history, four probes (after Factory, Dec 2025):
    recall        each fact planted so far is in the request, or one recall returns it
    artifact      every file a tool call touched so far is named in the request
    continuation  the latest user request, and the next step stated since it, are in the request
    decision      the user's constraints and decisions are in the request, verbatim
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

from bench_policies import Policy
from bench_sessions import Fact, Session

from agent_cli.core.messages import Message, ToolResult, Usage
from agent_cli.providers.model_info import ModelInfo
from agent_cli.tokens.encodings import get_encoding

__all__ = ["PROBES", "PROBE_EVERY", "Run", "reference_count", "replay"]

PROBES = ("recall", "artifact", "continuation", "decision")
PROBE_EVERY = 10  # every policy is probed on the same requests: the 10th, 20th, ... of the session
TTL = 300.0  # Anthropic's default cache entry lives 5 minutes after its last use
AUTOMATIC_TTL = 1_800.0  # OpenAI's writes on GPT-6.x are priced for 30 minutes
MODEL_STEP_SECONDS = 20.0
USER_STEP_SECONDS = 90.0
_ENCODING = get_encoding("o200k_base")


def reference_count(text: str) -> int:
    return len(_ENCODING.encode_ordinary(text))


def _message_key(message: Message) -> str:
    return hashlib.sha1(json.dumps(message.to_json()["content"], sort_keys=True).encode()).hexdigest()


def _message_tokens(message: Message, cache: dict[str, int]) -> int:
    key = message.id
    if key not in cache:
        cache[key] = 4 + sum(
            reference_count(json.dumps(b.to_json(), ensure_ascii=False)) for b in message.content
        )
    return cache[key]


@dataclass
class Run:
    policy: str
    window: int
    requests: list[int] = field(default_factory=list)  # input tokens of each request, in order
    over_window: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read: int = 0
    cache_write: int = 0
    auto_read: int = 0  # the same requests through an automatic cache (OpenAI's)
    auto_write: int = 0
    summary_calls: int = 0
    summary_input: int = 0
    summary_output: int = 0
    dollars: float = 0.0
    probes: dict[str, list[bool]] = field(default_factory=lambda: {p: [] for p in PROBES})

    def share(self, probe: str) -> float | None:
        checks = self.probes[probe]
        return sum(checks) / len(checks) if checks else None

    @property
    def peak(self) -> int:
        return max(self.requests, default=0)

    @property
    def mean(self) -> float:
        return sum(self.requests) / max(len(self.requests), 1)


class _Cache:
    """Prefixes (as chains of message keys) with the time they were last used.

    Two kinds. *Marked* (Anthropic's): a request writes only the prefixes it marks (the frame, the
    last message, and the policy's anchor if it names one) and reads the longest one it starts with.
    *Automatic* (OpenAI's): every prefix a request sent can be read back."""

    def __init__(self, marked: bool) -> None:
        self.marked = marked
        self.ttl = TTL if marked else AUTOMATIC_TTL
        self.alive: dict[tuple[str, ...], float] = {}

    def read(self, keys: list[str], now: float, anchor: int | None = None) -> int:
        """How many leading keys are cached; refreshes what was read, stores what the request writes."""
        self.alive = {k: t for k, t in self.alive.items() if now - t <= self.ttl}
        best = 0
        for n in range(len(keys), 0, -1):
            if tuple(keys[:n]) in self.alive:
                best = n
                break
        if self.marked:
            marks = {1, len(keys), best} | ({anchor} if anchor else set())
            stored = [n for n in marks if 0 < n <= len(keys)]
        else:
            stored = list(range(1, len(keys) + 1))
        for n in stored:
            self.alive[tuple(keys[:n])] = now
        return best


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _request_text(history: list[Message]) -> str:
    """Every string the request carries (texts, tool inputs and outputs), as the model reads them."""
    return "\n".join(s for m in history for b in m.content for s in _strings(b.to_json()))


def _prefix_tokens(hit: int, history: list[Message], frame_tokens: int, cache: dict[str, int]) -> int:
    """Tokens of the first `hit` keys (the frame, then whole messages)."""
    return frame_tokens + sum(_message_tokens(m, cache) for m in history[: hit - 1]) if hit else 0


def replay(session: Session, policy: Policy, prices: ModelInfo, frame_tokens: int) -> Run:
    run = Run(policy.name, policy.window)
    history: list[Message] = []
    tokens: dict[str, int] = {}
    marked, automatic = _Cache(marked=True), _Cache(marked=False)
    now = 0.0
    facts: list[Fact] = []
    paths: list[str] = []
    last_user = ""
    next_step = ""
    counted_summaries = 0
    for step in session.steps:
        if step.is_user:
            history.append(step.messages[0])
            last_user = step.messages[0].text
            next_step = ""  # a new request supersedes the plan stated before it
            facts += step.facts
            now += USER_STEP_SECONDS
            continue
        now += MODEL_STEP_SECONDS
        history = policy.prepare(history)
        size = frame_tokens + sum(_message_tokens(m, tokens) for m in history)
        run.requests.append(size)
        run.over_window += size > policy.window
        keys = ["frame", *(_message_key(m) for m in history)]
        anchor = policy.anchor(history)
        read = _prefix_tokens(
            marked.read(keys, now, None if anchor is None else anchor + 2), history, frame_tokens, tokens
        )
        auto_read = _prefix_tokens(automatic.read(keys, now), history, frame_tokens, tokens)
        reply, *results = step.messages
        out = _message_tokens(reply, tokens)
        run.input_tokens += size
        run.cache_read += read
        run.cache_write += size - read
        run.auto_read += auto_read
        run.auto_write += size - auto_read
        run.output_tokens += out
        run.dollars += (
            read * prices.cache_read_price
            + (size - read) * prices.cache_write_price
            + out * prices.output_price
        ) / 1e6
        policy.observe(history, Usage(input_tokens=size))
        if policy.actions and history:
            _probe(run, policy, _request_text(history), facts, paths, last_user, next_step)
        for call in reply.tool_uses:
            path = call.input.get("path")
            if isinstance(path, str) and path not in paths:
                paths.append(path)
        history.append(reply)
        for message in results:
            uses = {u.id: u for u in reply.tool_uses}
            kept = [
                policy.ingest(uses[r.tool_use_id], r, len(uses)) if isinstance(r, ToolResult) else r
                for r in message.content
            ]
            history.append(message.replace(kept))
        facts += step.facts
        next_step = step.next_step or next_step
        for inp, outp in policy.summaries[counted_summaries:]:
            run.summary_calls += 1
            run.summary_input += inp
            run.summary_output += outp
            run.dollars += (inp * prices.cache_write_price + outp * prices.output_price) / 1e6
        counted_summaries = len(policy.summaries)
    return run


def _probe(
    run: Run, policy: Policy, text: str, facts: list[Fact], paths: list[str], last_user: str, next_step: str
) -> None:
    for fact in facts:
        if fact.kind == "recall":
            found = fact.text in text or fact.text in (policy.recall(fact.query) or "")
            run.probes["recall"].append(found)
        else:
            run.probes["decision"].append(fact.text in text)
    if paths:
        run.probes["artifact"].append(all(p in text for p in paths))
    if last_user:
        run.probes["continuation"].append(last_user in text and (not next_step or next_step in text))
