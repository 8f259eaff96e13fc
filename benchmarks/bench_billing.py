"""The replay's bills: each request as the adapters put it on the wire, billed by `agent_cli.billing`.

    wire = Wire(frame)                          # the frame every request carries (system prompt, tools)
    sent = wire.send(messages, tool_choice, anchor)
    caches = Caches()                           # one per run: Claude and OpenAI, steady and paused
    bills = caches.bill(sent, steady, paused)   # cache name -> agent_cli.billing.Bill

A request is built as the agent builds it (`core.requests.Request`: the frame, the messages, the
request's `tool_choice` and its `cache_anchor`) and put on the wire by the product's own adapters:
`providers.anthropic_wire.to_wire(..., caching=True)` places the breakpoints as the product does
(`providers/cache_marks.py`: the system prompt, the last block of the newest message (unless the
engine expects its next clear to stub it: `cache_newest`, as the product sends it), the turn of
the anchor: for ours what the engine names, for a seed its own edit point, as a careful
implementer of it would; a bridge to the latest prefix an earlier request of the run wrote when no
other breakpoint is within 20 blocks of it; the last tool when a slot is left), and sends
`tool_choice: none` where the request asks for it, which Anthropic bills as a change of the
messages' prefix: such a request reads the tools and the system prompt back, nothing after.
`providers.chat_wire.to_wire` builds the OpenAI form. `billing.wire_units` reads each payload as the
units the cost models bill; `AnthropicCache` (explicit breakpoints, the 20-block look-back,
5-minute entries refreshed on a read) and `AutomaticCache` (OpenAI's: any earlier prefix from 1,024
tokens in 128-token steps, kept 5 minutes) bill them at the request's time, so at the paused pace
an entry past its TTL is written again.

Counts are the replay's reference tokenizer (o200k_base), counted once per text; a model's minimum
cacheable length is converted to those counts (`CLAUDE_RATIO` for Claude). What a bill costs is
priced by the caller (`Bill.dollars`, input, read, write and output at the model's prices).
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from agent_cli.billing import AnthropicCache, AnthropicRequest, AutomaticCache, AutomaticRequest, CacheTerms
from agent_cli.billing import Bill as WireBill
from agent_cli.billing.wire_units import _key as unit_key
from agent_cli.billing.wire_units import anthropic_request, chat_request
from agent_cli.context.protocol import Frame
from agent_cli.core.messages import Message
from agent_cli.core.requests import Request, RequestOptions
from agent_cli.providers import anthropic_wire, chat_wire
from agent_cli.providers.cache_marks import WrittenPrefixes
from agent_cli.providers.model_info import ModelInfo, cache_terms
from agent_cli.providers.model_names import keeps_prior_thinking
from agent_cli.providers.models import lookup
from agent_cli.tokens.encodings import get_encoding
from agent_cli.tokens.ratio import NEW_TOKENIZER_FACTOR

__all__ = [
    "CACHES",
    "CLAUDE_MODEL",
    "CLAUDE_RATIO",
    "OPENAI_MODEL",
    "Bill",
    "Caches",
    "Sent",
    "ToolChoice",
    "Wire",
    "read_units",
    "reference_count",
]

CLAUDE_MODEL, OPENAI_MODEL = "claude-sonnet-5-5", "gpt-6.2-sol"
CLAUDE_RATIO = NEW_TOKENIZER_FACTOR  # Claude 4.7 and later count about 30% more tokens for the same text
CACHES = ("claude", "claude-paused", "openai", "openai-paused")
ONE_HOUR_WRITE = 2.0  # a 1-hour write, times the input price (billing.prices.CachePrices.from_rates)
_ENCODING = get_encoding("o200k_base")
ToolChoice = Literal["auto", "none"]


@functools.lru_cache(maxsize=65_536)
def reference_count(text: str) -> int:
    """The reference tokenizer's count of `text`; kept (a session's texts are counted again by every
    run of it in the process: each policy, window and neighbour)."""
    return len(_ENCODING.encode_ordinary(text))


@dataclass
class Bill:
    """Tokens (reference counts) billed through one cache: read back, written, sent uncached, output."""

    read: int = 0
    write: int = 0  # every write, 5-minute and 1-hour
    output: int = 0
    input: int = 0
    write_1h: int = 0  # of `write`, those at the 1-hour TTL (2x the input price)

    def add(self, bill: WireBill, output: int) -> None:
        self.read += bill.read
        self.write += bill.write
        self.write_1h += bill.write_1h
        self.input += bill.input
        self.output += output

    def dollars(self, prices: ModelInfo, ratio: float = 1.0) -> float:
        billed = (
            self.read * prices.cache_read_price
            + (self.write - self.write_1h) * prices.cache_write_price
            + self.write_1h * ONE_HOUR_WRITE * prices.input_price
            + self.input * prices.input_price
            + self.output * prices.output_price
        )
        return ratio * billed / 1e6


@dataclass(frozen=True, slots=True)
class Sent:
    """One request as both wires send it, read as billing units (`at` set when it is billed)."""

    anthropic: AnthropicRequest
    openai: AutomaticRequest
    fingerprint: str  # a hash of the Anthropic payload's bytes
    frame_units: int  # how many leading Anthropic units are the frame (tools, system)

    @property
    def tokens(self) -> int:
        return sum(u.tokens for u in self.anthropic.units)


def _terms(model: str, ratio: float) -> CacheTerms:
    info = lookup(model)
    assert info is not None, model
    terms = cache_terms(info)
    return CacheTerms(terms.prices, math.ceil(terms.minimum / ratio))


class Wire:
    """Builds requests on the frame as the adapters send them; counts each text once."""

    def __init__(self, frame: Frame, count: Callable[[str], int] = reference_count) -> None:
        self.frame = frame
        self._count = count
        self._counted: dict[str, int] = {}
        self._keys: dict[int, tuple[Message, frozenset[str]]] = {}
        self._written = WrittenPrefixes()  # the run's breakpoints so far, as the provider keeps them

    def count(self, text: str) -> int:
        got = self._counted.get(text)
        if got is None:
            got = self._counted[text] = self._count(text)
        return got

    def send(
        self,
        messages: Sequence[Message],
        tool_choice: ToolChoice = "auto",
        anchor: int | None = None,
        newest: bool = True,
        span_end: int | None = None,
        at: float | None = None,
        checkpoint: int | None = None,
    ) -> Sent:
        """The request as the adapters send it; `newest` False leaves the newest message unmarked (the
        product's `cache_newest`: its next clear is expected to stub it), so it goes uncached;
        `span_end` marks the end of the span the policy's next summary sends (`cache_span_end`);
        `checkpoint` the message marked for an hour (`cache_checkpoint`)."""
        options = RequestOptions(
            tool_choice=tool_choice, cache_anchor=anchor, cache_newest=newest, cache_span_end=span_end,
            cache_checkpoint=checkpoint,
        )
        request = Request(self.frame.system, tuple(messages), tuple(self.frame.tools), options=options)
        wire = anthropic_wire.to_wire(request, CLAUDE_MODEL, caching=True, written=self._written, at=at)
        payload = {k: v for k, v in wire.items() if k != "max_tokens"}
        fingerprint = hashlib.sha1(json.dumps(payload, sort_keys=True).encode()).hexdigest()
        anthropic = anthropic_request(wire, self.count, 0.0, keeps_prior_thinking)
        openai = chat_request(chat_wire.to_wire(request, OPENAI_MODEL), self.count, 0.0)
        frame_units = sum(1 for u in anthropic.units if u.section != "messages")
        return Sent(anthropic, openai, fingerprint, frame_units)

    def keys(self, message: Message) -> frozenset[str]:
        """The billing keys of a message's blocks as the Anthropic wire sends them."""
        got = self._keys.get(id(message))
        if got is None or got[0] is not message:
            blocks: list[Any] = [anthropic_wire._block_to_wire(b) for b in message.content]
            keys = frozenset(unit_key(b) for b in blocks if b is not None)
            got = self._keys[id(message)] = (message, keys)
        return got[1]


class Caches:
    """The four caches of a run; `claude_model` / `openai_model` name whose terms they bill at."""

    def __init__(self, claude_model: str = CLAUDE_MODEL, openai_model: str = OPENAI_MODEL) -> None:
        claude, openai = _terms(claude_model, CLAUDE_RATIO), _terms(openai_model, 1.0)
        self.caches: dict[str, AnthropicCache | AutomaticCache] = {
            name: AnthropicCache(lambda _m, t=claude: t) if name.startswith("claude")
            else AutomaticCache(lambda _m, t=openai: t)
            for name in CACHES
        }  # fmt: skip

    def bill(self, sent: Sent, steady: float, paused: float) -> dict[str, WireBill]:
        out: dict[str, WireBill] = {}
        for name, cache in self.caches.items():
            at = paused if name.endswith("paused") else steady
            if isinstance(cache, AnthropicCache):
                out[name] = cache.bill(replace(sent.anthropic, at=at))
            else:
                out[name] = cache.bill(replace(sent.openai, at=at))
        return out


def read_units(sent: Sent, bill: WireBill) -> int:
    """How many leading Anthropic units `bill` read back (the units are whole: a read ends at one)."""
    total = 0
    if bill.read == 0:
        return 0
    for n, unit in enumerate(sent.anthropic.units, 1):
        total += unit.tokens
        if total >= bill.read:
            return n
    return len(sent.anthropic.units)
