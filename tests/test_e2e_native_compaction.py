"""Native compaction end to end: `agent -p` with `context.summarizer = "native"`, the real SDKs over
HTTP, the fake server taught the providers' documented compaction rules.

Sources for the rules the fake holds (agent_cli/testing/fakeserver/compaction.py):
- Anthropic: platform.claude.com/docs/en/build-with-claude/compaction-keep-recent-turns and
  .../compaction-background (beta `compact-2026-09-04`, read 2026-12-02); `anthropic` 2.15's
  `BetaCompactionConfigParam`, `BetaCompactionBlock` and `compaction_*` errors.
- OpenAI: developers.openai.com/api/docs/guides/compaction (`/responses/compact`, read 2026-12-02);
  `openai` 3.57's `CompactedResponse` and `ResponseCompactionItem`.

A long session compacts natively; the provider's record goes back byte for byte on every later
request and after `--continue`; every request the agent sent is one the fake (as the API) accepts.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agent_cli.testing.fakeserver import (
    FakeModelServer,
    RecordedRequest,
    Reply,
    ToolCallSpec,
    anthropic_api,
    responses_api,
)
from agent_cli.testing.fakeserver.script import Fault
from agent_cli.testing.fakeserver.server import DEFAULT_KEY
from tests.e2e import agent_env, run_agent, stream_events

pytestmark = pytest.mark.e2e
MODELS = {"anthropic": "claude-opus-5-5", "openai": "gpt-6-sol"}
FILES = 8
FIRST_PROMPT = "Read every file under notes/ one by one: café, naïve — keep my words «exactly»."


def write_files(project: Path) -> list[str]:
    names = []
    for i in range(1, FILES + 1):
        # Prose, not digits: the fake counts characters / 4, as a tokenizer counts words.
        lines = [f"# file {i}"] + [
            f"the quiet river keeps its course past the old mill, line {n}" for n in range(120)
        ]
        path = project / f"notes/file{i}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines) + "\n")
        names.append(f"notes/file{i}.txt")
    return names


def responder(files: list[str]) -> Callable[[RecordedRequest], Reply]:
    """Reads every file, then answers; after that, answers whatever is asked."""
    step = {"n": 0}

    def answer(request: RecordedRequest) -> Reply:
        n = step["n"]
        step["n"] += 1
        if n < len(files):
            notes = " ".join(f"Observation {k} about file {n}." for k in range(120))
            return Reply(
                f"{notes}\nReading {files[n]}.", tool_calls=[ToolCallSpec("read_file", {"path": files[n]})]
            )
        return Reply("All files read." if n == len(files) else "Still here, with the record.")

    return answer


def config(tmp_path: Path, provider: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text('[context]\nsummarizer = "native"\n')
    return path


def args(provider: str, cfg: Path, prompt: str, *extra: str) -> list[str]:
    wire = ["--wire", "responses"] if provider == "openai" else []
    return [
        "-p", prompt, "--provider", provider, "--model", MODELS[provider], *wire, "--config", str(cfg),
        "--yes", "--output-format", "stream-json", "--context-window", "12000", *extra,
    ]  # fmt: skip


def accepted(request: RecordedRequest) -> bool:
    """The fake's (the API's) verdict on a recorded request, judged again: no refusal."""
    api = anthropic_api if request.api == "anthropic" else responses_api
    return not isinstance(api.admit(request.body, request.headers, DEFAULT_KEY), Fault)


def anthropic_record(request: RecordedRequest) -> dict[str, Any] | None:
    messages = request.body.get("messages") or []
    first = messages[0]["content"] if messages and isinstance(messages[0].get("content"), list) else []
    if first and first[0].get("type") == "compaction":
        return {k: v for k, v in first[0].items() if k != "cache_control"}
    return None


def responses_record(request: RecordedRequest) -> list[dict[str, Any]] | None:
    items = request.body.get("input") or []
    at = next((i for i, item in enumerate(items) if item.get("type") == "compaction"), None)
    if at is None:
        return None
    return [item for item in items[: at + 1]]


def log_records(project: Path) -> list[dict[str, Any]]:
    """The native records as the session log holds them."""
    found = []
    for path in sorted((project / ".transcripts").rglob("*.jsonl")):
        if path.name.startswith("span-"):  # an archived span, not the session log
            continue
        for line in path.read_text().splitlines():
            if '"native_record"' in line:
                found.append(json.loads(line))
    return found


def native_blocks(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            if value.get("type") == "native_record":
                out.append(value)
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    walk(records)
    return out


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_long_session_compacts_natively_and_resumes_with_the_record(provider: str, tmp_path: Path) -> None:
    project, home = tmp_path / "proj", tmp_path / "home"
    project.mkdir(exist_ok=True)
    home.mkdir()
    files = write_files(project)
    cfg = config(tmp_path, provider)
    with FakeModelServer(context_window=12_000) as server:
        server.responder = responder(files)
        env = agent_env(home, server, provider)
        first = run_agent(args(provider, cfg, FIRST_PROMPT), project, env, timeout=300)
        assert first.returncode == 0, first.stderr[-3000:]
        during = server.requests
        second = run_agent(args(provider, cfg, "What did you find?", "--continue"), project, env, timeout=300)
        assert second.returncode == 0, second.stderr[-3000:]
        after = server.requests[len(during) :]

    events = stream_events(first.stdout)
    assert events[-1]["type"] == "result" and events[-1]["text"] == "All files read.", events[-1]
    compactions = [e for e in events if e["type"] == "compact" and e["layer"] == "summarize"]
    assert compactions and not any(e.get("degraded") for e in compactions), compactions
    assert not [e for e in events if e["type"] == "warning"], [e for e in events if e["type"] == "warning"]

    # Every request the agent sent is one the API takes: no 400 anywhere.
    refused = [q.path for q in [*during, *after] if not accepted(q)]
    assert not refused, refused

    if provider == "anthropic":
        asks = [q for q in during if q.body.get("compaction") is not None]
        assert asks and all(q.body["compaction"]["type"] == "summarize" for q in asks)
        assert all("compact-2026-09-04" in q.headers.get("anthropic-beta", "") for q in asks)
        carried = [(i, anthropic_record(q)) for i, q in enumerate(during) if anthropic_record(q) is not None]
        later = [q for q in after if q.body.get("compaction") is None]
        resumed = [anthropic_record(q) for q in later]
    else:
        asks = [q for q in during if q.path.endswith("/responses/compact")]
        assert asks, [q.path for q in during]
        carried = [(i, responses_record(q)) for i, q in enumerate(during) if responses_record(q) is not None]
        later = [q for q in after if not q.path.endswith("/responses/compact")]
        resumed = [responses_record(q) for q in later]
    assert carried, "no request carried the provider's record"
    if provider == "anthropic":
        # Keep-tail: the turns kept after the block go as they were, thinking included, and it holds.
        for q in asks:
            following = during[during.index(q) + 1]
            thoughts = [
                b for m in following.body["messages"] for b in m["content"] if b.get("type") == "thinking"
            ]
            assert thoughts and following.reasoning_accepted == len(thoughts), following.reasoning_accepted
            assert following.reasoning_withheld == 0
    # Once made, a record goes back unchanged on every request until the next one replaces it.
    last_ask = max(during.index(q) for q in asks)
    newest = carried[-1][1]
    since = [r for i, r in carried if i > last_ask]
    assert since and all(r == newest for r in since)
    assert len({json.dumps(r, sort_keys=True) for _, r in carried}) >= len(asks) - 1
    # --continue: the resumed session sends the newest record as it came.
    assert later and resumed[0] == newest, (resumed[0], newest)

    # The session log holds it byte for byte: the JSON text the API returned.
    logged = native_blocks(log_records(project))
    assert logged and logged[-1]["provider"] == provider
    assert json.loads(logged[-1]["wire"]) == newest

    # The user's words are carried verbatim beside the record.
    text = json.dumps(later[0].body, ensure_ascii=False)
    assert FIRST_PROMPT in text


def test_a_bigger_frame_still_keeps_the_kept_turns_thinking(tmp_path: Path) -> None:
    """The same session with ~100 tokens more of frame (a project's AGENTS.md; the `remember` tool did
    the same): the first compaction then comes in a request where L1's estimate said its stubs get
    below the trigger and their count did not. L1 must then stub nothing, so the span the provider
    compacts is what was sent and the kept turn keeps its thinking (tests/test_context_keep_tail.py)."""
    project = tmp_path / "proj"
    project.mkdir()
    (project / "AGENTS.md").write_text("# Notes\n" + " ".join(["keep the tests green"] * 20) + "\n")
    test_a_long_session_compacts_natively_and_resumes_with_the_record("anthropic", tmp_path)
