"""`TokenCounter`: how many input tokens a request costs, at O(new content) per turn.

Three sources, best first:

- What the provider reported. After each response, `observe` records an
  anchor: the frame (system prompt + tools), the ids of the messages sent and
  the prompt tokens the provider counted. While later requests keep that frame
  and extend that message list, their count is the reported number plus a
  local count of what was appended since. `calibrate_overflow` sets the anchor
  from the count an overflow error states. A report is believed unless it is
  far below the count made here (under `UNDER_REPORT` of it): a server that
  under-reports would otherwise switch compaction off while the requests grow
  past the window. Such a request is anchored on the local count instead
  (the larger of the two), and nothing is learned from it.
- A local count with tiktoken: exact for OpenAI models (o200k_base or
  cl100k_base); for Claude and every other model, cl100k_base scaled by a ratio
  learned from the provider's reports (starting at a conservative 1.25,
  smoothed, clamped to [0.8, 2.0]). Which applies is the model table's word,
  handed in as a `Tokenizer`: the counter reads no model names.
- The CJK-aware character estimate (`estimate.py`) when no vocabulary loads.

Raw (unscaled) counts are cached per message id (a message's content never
changes under its id) in a bounded LRU, and per frame by content hash, so the
ratio can change without invalidating anything; a frame's count is also kept
between runs when a `FrameMemory` is given.

The vocabulary (0.2-0.4 s to load) is loaded only when a count needs it. Before
that, `bound_request` bounds a request by its UTF-8 bytes (a token is at least
one byte), so the engine can see that a short request is far from every line
(`fits_under`), and a usage report that is believed even against that bound
anchors the next count at once while what it teaches about the ratio waits
(learned, in order, before the next count that scales anything).
"""

from __future__ import annotations

import hashlib
import math
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from agent_cli.core.messages import Message, Usage
from agent_cli.core.requests import ToolSpec
from agent_cli.tokens.encodings import EncodingName, VocabularyError, get_encoding
from agent_cli.tokens.estimate import estimate_tokens
from agent_cli.tokens.kept_counts import kept_count
from agent_cli.tokens.lru import Lru
from agent_cli.tokens.ratio import MIN_LEARN_RAW_TOKENS, RATIO_MAX, clamp, learned
from agent_cli.tokens.tally import (
    MESSAGE_OVERHEAD,
    MessageTokens,
    byte_bound,
    canonical_json,
    tally_frame,
    tally_message,
)
from agent_cli.tokens.tokenizer import Tokenizer

__all__ = [
    "MESSAGE_OVERHEAD",
    "Anchor",
    "Encoder",
    "FrameMemory",
    "MessageTokens",
    "RequestCount",
    "TokenCounter",
    "Tokenizer",
]

# No tokenizer counts under half of what the local count says (the learned ratio stays in [0.8, 2.0]
# and starts at most 1.625): a report below this share of the local count is not a count.
UNDER_REPORT = 0.5


class Encoder(Protocol):
    """The part of `tiktoken.Encoding` the counter uses."""

    def encode_ordinary(self, text: str) -> list[int]: ...


class FrameMemory(Protocol):
    """Raw counts of frames (system prompt, tools) kept between runs, by encoding and content hash:
    the frame is most of a first request, and the same run after run (store/frame_counts.py)."""

    def get(self, encoding: str, key: str) -> tuple[int, int] | None: ...

    def put(self, encoding: str, key: str, counts: tuple[int, int]) -> None: ...


@dataclass(frozen=True, slots=True)
class Anchor:
    """The last request whose size the provider told us."""

    frame_key: str
    message_ids: tuple[str, ...]
    tokens: int


@dataclass(frozen=True, slots=True)
class RequestCount:
    """How a request's count was made: `anchor` reported tokens plus `appended` counted locally."""

    total: int
    anchored: bool
    anchor_tokens: int
    appended_messages: int
    appended_tokens: int


def frame_key(system: str, tools: Sequence[ToolSpec]) -> str:
    """A content hash of the system prompt and tool definitions."""
    digest = hashlib.sha256(system.encode("utf-8", "surrogatepass"))
    digest.update(b"\0")
    digest.update(
        canonical_json([[t.name, t.description, dict(t.input_schema)] for t in tools]).encode(
            "utf-8", "surrogatepass"
        )
    )
    return digest.hexdigest()


class TokenCounter:
    """Counts requests for one model; see the module docstring for the method."""

    def __init__(
        self,
        model: str,
        tokenizer: Tokenizer,
        *,
        claude_ratio: float | None = None,
        cache_size: int = 16_384,
        load_encoding: Callable[[EncodingName], Encoder] = get_encoding,
        frames: FrameMemory | None = None,
    ) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.encoding_name, self._exact_model = tokenizer.encoding, tokenizer.exact
        # OpenAI models that fall back to the estimate start unscaled; others start conservative.
        start = tokenizer.start_ratio if claude_ratio is None else claude_ratio
        self._ratio = 1.0 if self._exact_model else clamp(start)
        self._load_encoding = load_encoding
        self._encoder: Encoder | None = None
        self._loaded = False
        self._load_lock = threading.Lock()
        # The engine's summary call counts in its own thread while the turn counts the next request:
        # the reports' queue is learned from under this lock (the caches keep their own).
        self._lock = threading.RLock()
        self._fallback_reason: str | None = None
        self._messages: Lru[str, MessageTokens] = Lru(cache_size)
        self._frames: Lru[str, tuple[int, int]] = Lru(16)  # frames change rarely; a few are plenty
        self._anchor: Anchor | None = None
        self._memory = frames
        # What usage reports taught, not learned yet: learning needs local counts, and the
        # vocabulary is loaded only when a count needs it (see `fits_under`). Applied in order.
        self._unlearned: list[Callable[[], None]] = []

    # -- introspection ----------------------------------------------------

    @property
    def ratio(self) -> float:
        """Provider tokens per local raw token (1.0 for exact counts)."""
        self._catch_up()
        return 1.0 if self.exact else self._ratio

    @property
    def exact(self) -> bool:
        """True when counts are tiktoken's own for an OpenAI model."""
        return self._exact_model and self._encoder_or_none() is not None

    @property
    def fallback_reason(self) -> str | None:
        """Why the character estimate is in use, or None if a vocabulary loaded."""
        self._encoder_or_none()
        return self._fallback_reason

    def load_vocabulary(self) -> None:
        """Load the vocabulary now, if it is not (safe from any thread: the REPL's warm-up calls this
        while a turn may be counting; a count that needs it meanwhile waits for this load)."""
        self._encoder_or_none()

    @property
    def anchor(self) -> Anchor | None:
        return self._anchor

    # -- raw counts ---------------------------------------------------------

    def _encoder_or_none(self) -> Encoder | None:
        if not self._loaded:
            # The REPL counts its first context in a background thread while commands may count
            # too: nobody may see "not loaded yet" and cache an estimate as if it were exact.
            with self._load_lock:
                if not self._loaded:
                    try:
                        self._encoder = self._load_encoding(self.encoding_name)
                    except VocabularyError as exc:
                        self._fallback_reason = str(exc)
                    self._loaded = True  # one attempt per counter: a failed load is not retried
        return self._encoder

    def raw_text(self, text: str) -> int:
        """Unscaled tokens of `text` in the local encoding (or the estimate)."""
        if not text:
            return 0
        encoder = self._encoder_or_none()
        if encoder is None:
            return estimate_tokens(text)
        return kept_count(encoder, text)

    def _scale(self, raw: int) -> int:
        if not raw:  # (nothing to scale: no vocabulary needed, nothing to learn first)
            return 0
        self._catch_up()
        return raw if self.exact else math.ceil(raw * self._ratio)

    def message_tokens(self, msg: Message) -> MessageTokens:
        """Raw tokens of `msg` by kind; computed once per message id."""
        counted = self._messages.get(msg.id)
        if counted is None:
            counted = tally_message(msg, self.raw_text, self.tokenizer.images)
            self._messages.put(msg.id, counted)
        return counted

    def _frame_tokens(self, key: str, system: str, tools: Sequence[ToolSpec]) -> tuple[int, int]:
        cached = self._frames.get(key)
        if cached is not None:
            return cached
        counted = self._memory.get(self.encoding_name, key) if self._memory is not None else None
        if counted is None:
            counted = tally_frame(system, tools, self.raw_text)
            if self._memory is not None:
                self._memory.put(self.encoding_name, key, counted)
        self._frames.put(key, counted)
        return counted

    def raw_request(self, system: str, tools: Sequence[ToolSpec], messages: Sequence[Message]) -> int:
        """Unscaled local count of a whole request (frame and every message)."""
        frame = sum(self._frame_tokens(frame_key(system, tools), system, tools))
        return frame + sum(self.message_tokens(m).total for m in messages)

    # -- scaled counts ------------------------------------------------------

    def count_text(self, text: str) -> int:
        return self._scale(self.raw_text(text))

    def count_message(self, msg: Message) -> int:
        return self._scale(self.message_tokens(msg).total)

    def count_messages(self, messages: Sequence[Message]) -> int:
        return sum(self.count_message(m) for m in messages)

    def count_frame(self, system: str, tools: Sequence[ToolSpec]) -> int:
        """The system prompt and tool definitions (and the request's fixed framing)."""
        return self._scale(sum(self._frame_tokens(frame_key(system, tools), system, tools)))

    def count_request(self, system: str, tools: Sequence[ToolSpec], messages: Sequence[Message]) -> int:
        """Input tokens of this request: the anchor plus what was appended, else a full local count."""
        return self.explain_request(system, tools, messages).total

    def explain_request(
        self, system: str, tools: Sequence[ToolSpec], messages: Sequence[Message]
    ) -> RequestCount:
        """`count_request`, saying whether the anchor was used and how much was counted locally."""
        key = frame_key(system, tools)
        anchor = self._anchor
        if anchor is not None and self._extends(anchor, key, messages):
            appended = messages[len(anchor.message_ids) :]
            tokens = self.count_messages(appended)
            return RequestCount(anchor.tokens + tokens, True, anchor.tokens, len(appended), tokens)
        total = self._scale(sum(self._frame_tokens(key, system, tools))) + self.count_messages(messages)
        return RequestCount(total, False, 0, len(messages), total)

    def bound_request(self, system: str, tools: Sequence[ToolSpec], messages: Sequence[Message]) -> int:
        """At least `count_request`, made without loading the vocabulary while it is not loaded: each
        text's UTF-8 bytes (`tally.byte_bound`), the frame's remembered count when there is one, at the
        highest ratio while reports wait to be learned from. Once loaded, the count itself."""
        if self._loaded:
            return self.explain_request(system, tools, messages).total
        scale = RATIO_MAX if self._unlearned else max(self._ratio, 1.0)
        key = frame_key(system, tools)
        anchor = self._anchor
        if anchor is not None and self._extends(anchor, key, messages):
            appended = messages[len(anchor.message_ids) :]
            grown = sum(tally_message(m, byte_bound, self.tokenizer.images).total for m in appended)
            return anchor.tokens + math.ceil(grown * scale)
        frame = self._frames.peek(key)
        if frame is None and self._memory is not None:
            frame = self._memory.get(self.encoding_name, key)
        if frame is None:
            frame = tally_frame(system, tools, byte_bound)
        raw = sum(frame) + sum(tally_message(m, byte_bound, self.tokenizer.images).total for m in messages)
        return math.ceil(raw * scale)

    def fits_under(
        self, system: str, tools: Sequence[ToolSpec], messages: Sequence[Message], limit: int
    ) -> bool:
        """Whether the request counts under `limit`, known without loading the vocabulary when its
        bound says so (a short first request: `agent -p "say hi"` never loads it)."""
        return self.bound_request(system, tools, messages) < limit

    @staticmethod
    def _extends(anchor: Anchor, key: str, messages: Sequence[Message]) -> bool:
        """Same frame, and the anchored messages are a prefix of `messages`."""
        ids = anchor.message_ids
        n = len(ids)
        if key != anchor.frame_key or len(messages) < n:
            return False
        if n and messages[n - 1].id != ids[-1]:  # the usual mismatch, found without a scan
            return False
        return all(messages[i].id == ids[i] for i in range(n))

    # -- learning from the provider ---------------------------------------

    def observe(
        self,
        system: str,
        tools: Sequence[ToolSpec],
        sent_messages: Sequence[Message],
        usage: Usage,
    ) -> int | None:
        """Record what the provider reported for the request just sent.

        Sets the anchor and learns the ratio: from the whole request when no anchor
        applied, else from the step (what the report grew by, against the local count
        of the messages added since). A report of zero tokens changes nothing. A report
        under `UNDER_REPORT` of the count made here is not believed: the request is
        anchored on that count, which is returned (None when the report was believed).
        """
        reported = usage.prompt_tokens
        if reported <= 0:
            return None
        key = frame_key(system, tools)
        sent = tuple(sent_messages)
        previous = self._anchor
        if not self._loaded and reported >= self.bound_request(system, tools, sent) * UNDER_REPORT:
            # Believed whatever the local count is: what it teaches waits for the vocabulary.
            self._unlearned.append(lambda: self._learn_from(previous, key, system, tools, sent, reported))
            self._anchor = Anchor(key, tuple(m.id for m in sent), reported)
            return None
        counted = self.explain_request(system, tools, sent).total
        if reported < counted * UNDER_REPORT:
            self._anchor = Anchor(key, tuple(m.id for m in sent), counted)
            return counted
        self._learn_from(previous, key, system, tools, sent, reported)
        self._anchor = Anchor(key, tuple(m.id for m in sent), reported)
        return None

    def _learn_from(
        self,
        previous: Anchor | None,
        key: str,
        system: str,
        tools: Sequence[ToolSpec],
        sent: Sequence[Message],
        reported: int,
    ) -> None:
        """Learn the ratio from a believed report: the whole request when no anchor applied, else the
        step (what the report grew by, against the local count of the messages added since)."""
        if previous is None or not self._extends(previous, key, sent):
            self._learn(reported, self.raw_request(system, tools, sent))
        elif reported > previous.tokens:
            added = sent[len(previous.message_ids) :]
            self._learn(reported - previous.tokens, sum(self.message_tokens(m).total for m in added))

    def _catch_up(self) -> None:
        """Learn what the reports believed without a count taught, in their order (loads the vocabulary)."""
        if not self._unlearned:  # (the usual case: no lock taken)
            return
        with self._lock:  # in order, each once, whichever thread counts first
            while self._unlearned:
                self._unlearned[0]()
                self._unlearned.pop(0)  # (only once learned: a thread that finds it empty counts on)

    def calibrate_overflow(
        self,
        system: str,
        tools: Sequence[ToolSpec],
        messages: Sequence[Message],
        reported_tokens: int,
    ) -> None:
        """The provider said this request has `reported_tokens` tokens: anchor on it and learn from it."""
        if reported_tokens <= 0:
            return
        self._catch_up()
        self._learn(reported_tokens, self.raw_request(system, tools, messages))
        self._anchor = Anchor(frame_key(system, tools), tuple(m.id for m in messages), reported_tokens)

    def _learn(self, reported: int, raw: int) -> None:
        if self.exact or raw < MIN_LEARN_RAW_TOKENS:
            return
        self._ratio = learned(self._ratio, reported / raw)
