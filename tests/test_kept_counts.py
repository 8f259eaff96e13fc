"""A text counted once in a process is not encoded again by another counter (tokens/kept_counts.py),
the counts are the encoder's own, and the kept texts stay under their bound."""

from __future__ import annotations

import pytest

from agent_cli.core.messages import Message, ToolResult, ToolUse
from agent_cli.providers.model_names import tokenizer_for
from agent_cli.tokens import kept_counts
from agent_cli.tokens.counter import TokenCounter
from agent_cli.tokens.encodings import EncodingName, get_encoding


class _Counting:
    """The real encoding, saying how many texts it was asked to encode."""

    def __init__(self, name: EncodingName) -> None:
        self.inner = get_encoding(name)
        self.encoded: list[str] = []

    def encode_ordinary(self, text: str) -> list[int]:
        self.encoded.append(text)
        return self.inner.encode_ordinary(text)


def _output(n: int) -> str:
    return "\n".join(f"line {i}: def handler_{i}(request): return respond(request, {i})" for i in range(n))


def test_a_second_counter_does_not_encode_a_text_again() -> None:
    encoder = _Counting("cl100k_base")
    tokenizer = tokenizer_for("claude-sonnet-5-5", "anthropic")
    history = [
        Message("user", ("show me the handlers",)),
        Message("assistant", (ToolUse("t1", "read_file", {"path": "app.py"}),)),
        Message("user", (ToolResult("t1", _output(200)),)),
    ]
    first = TokenCounter("claude-sonnet-5-5", tokenizer, load_encoding=lambda _: encoder)
    counted = first.count_messages(history)
    big = _output(200)
    assert big in encoder.encoded
    encoder.encoded.clear()
    second = TokenCounter("claude-sonnet-5-5", tokenizer, load_encoding=lambda _: encoder)
    assert second.count_messages(history) == counted
    assert encoder.encoded  # the short texts (under MIN_CHARS) are encoded again, and only they
    assert all(len(text) < kept_counts.MIN_CHARS for text in encoder.encoded)
    assert second.raw_text(big) == len(get_encoding("cl100k_base").encode_ordinary(big))


def test_kept_texts_stay_under_their_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kept_counts, "KEPT_CHARS", 10_000)
    monkeypatch.setattr(kept_counts, "_kept", type(kept_counts._kept)())
    monkeypatch.setattr(kept_counts, "_chars", 0)
    encoder = get_encoding("o200k_base")
    texts = [f"{n} " + _output(30) for n in range(20)]  # about 2,000 characters each
    counts = [kept_counts.kept_count(encoder, t) for t in texts]
    assert counts == [len(encoder.encode_ordinary(t)) for t in texts]
    assert kept_counts._chars == sum(len(t) for (_, t) in kept_counts._kept) <= 10_000
    assert (encoder, texts[-1]) in kept_counts._kept and (encoder, texts[0]) not in kept_counts._kept
