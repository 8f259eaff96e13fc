"""The vocabulary is loaded only when a count needs it (issue 35, item 7): a short first request
is seen to be far from every line by its bytes, a believed usage report anchors the next count at
once and teaches the ratio later, in order, with the same result as counting at once; a frame's
count is kept between runs. End to end, `agent -p "say hi"` never imports tiktoken once its frame
is remembered, nor typer (a plain -p is parsed without it)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from agent_cli.core.messages import Message, Usage
from agent_cli.core.requests import ToolSpec
from agent_cli.providers.model_names import tokenizer_for
from agent_cli.store.frame_counts import FrameCounts
from agent_cli.testing.fakeserver import FakeModelServer, Reply
from agent_cli.tokens.counter import Encoder, TokenCounter
from agent_cli.tokens.encodings import EncodingName, get_encoding
from tests.e2e import agent_env, run_agent

SYSTEM = "You are a coding agent. Read before you write. " * 30
SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}}
TOOLS = (ToolSpec("read_file", "Read a file.", SCHEMA),)


class Loads:
    """A `load_encoding` that says how often it was asked."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, name: EncodingName) -> Encoder:
        self.count += 1
        return get_encoding(name)


def _counter(
    loads: Loads,
    model: str = "claude-opus-5-5",
    provider: str = "anthropic",
    frames: FrameCounts | None = None,
) -> TokenCounter:
    return TokenCounter(model, tokenizer_for(model, provider), load_encoding=loads, frames=frames)


def test_a_short_first_request_is_decided_and_believed_without_the_vocabulary() -> None:
    loads = Loads()
    c = _counter(loads)
    sent = [Message.user("say hi")]
    assert c.fits_under(SYSTEM, TOOLS, sent, 50_000)
    assert not c.fits_under(SYSTEM, TOOLS, sent, 100)  # a line it may be past: not claimed
    # (a report this far above the count: believed on the bound alone; the frame's remembered count
    # makes the bound close for a real report, see the last test)
    assert c.observe(SYSTEM, TOOLS, sent, Usage(input_tokens=2_000)) is None
    assert c.count_request(SYSTEM, TOOLS, sent) == 2_000  # the anchor, nothing appended
    assert loads.count == 0  # was 1: every request was counted before it went
    grown = [*sent, Message.assistant("hi"), Message.user("and now?")]
    assert c.count_request(SYSTEM, TOOLS, grown) > 2_000
    assert loads.count == 1


def test_learning_later_learns_what_counting_at_once_learned() -> None:
    eager, lazy = _counter(Loads()), _counter(Loads())
    eager.count_text("load it now")
    history = [Message.user("fix the parser " * 200)]
    for step in range(3):
        usage = Usage(input_tokens=int(eager.raw_request(SYSTEM, TOOLS, history) * (1.1 + step / 10)))
        assert eager.observe(SYSTEM, TOOLS, history, usage) is None
        assert lazy.observe(SYSTEM, TOOLS, history, usage) is None
        history = [*history, Message.assistant("done " * 50), Message.user(f"step {step} " * 300)]
    assert lazy.count_request(SYSTEM, TOOLS, history) == eager.count_request(SYSTEM, TOOLS, history)
    assert lazy.ratio == eager.ratio != 1.625


def test_a_report_below_the_bound_is_still_checked_against_the_count() -> None:
    loads = Loads()
    c = _counter(loads)
    sent = [Message.user("the parser reads tokens one at a time. " * 300)]
    local = _counter(Loads()).count_request(SYSTEM, TOOLS, sent)
    assert c.observe(SYSTEM, TOOLS, sent, Usage(input_tokens=3)) == local  # not believed, said
    assert loads.count == 1


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(min_size=0, max_size=80), min_size=1, max_size=4))
def test_the_bound_is_never_below_the_count(texts: list[str]) -> None:
    for model, provider in (("claude-opus-5-5", "anthropic"), ("gpt-4o", "openai")):
        c = _counter(Loads(), model, provider)
        messages = [Message.user(t) for t in texts]
        bound = c.bound_request(SYSTEM, TOOLS, messages)
        assert bound >= _counter(Loads(), model, provider).count_request(SYSTEM, TOOLS, messages)


def test_a_frames_count_is_remembered_between_runs(tmp_path: Path) -> None:
    path = tmp_path / "state" / "frame-counts.json"
    first = _counter(Loads(), frames=FrameCounts(path))
    counted = first.count_request(SYSTEM, TOOLS, [])
    assert os.stat(path).st_mode & 0o777 == 0o600
    loads = Loads()
    again = _counter(loads, frames=FrameCounts(path))
    assert again.count_request(SYSTEM, TOOLS, []) == counted
    assert loads.count == 0
    path.write_text(json.dumps({"version": 1, "frames": {"x": "junk", "y": [1, -2]}}))
    assert FrameCounts(path).get("cl100k_base", "x") is None
    assert FrameCounts(path).get("cl100k_base", "y") is None
    path.write_text("not json")
    assert FrameCounts(path).get("cl100k_base", "x") is None


def test_say_hi_headless_never_imports_tiktoken(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with FakeModelServer(default=Reply("hi")) as server:
        env = agent_env(home, server)
        first = run_agent(["-p", "say hi"], tmp_path, env)  # counts its frame once, and keeps it
        assert first.returncode == 0, first.stderr
        env["PYTHONPROFILEIMPORTTIME"] = "1"
        again = run_agent(["-p", "say hi"], tmp_path, env)
    assert again.returncode == 0, again.stderr
    assert "hi" in again.stdout
    imported = {line.split("|")[-1].strip() for line in again.stderr.splitlines() if "|" in line}
    assert "anthropic" in imported
    assert "tiktoken" not in imported  # was imported, and its vocabulary loaded, before each request
    assert "typer" not in imported  # a plain -p is parsed without it (was imported: ~40 ms)
