"""The provider's own web search (issue 40, item 4): offered on the Messages and Responses wires to
the models that have it, never on Chat Completions; its blocks kept and sent back verbatim; shown as
one safe line; `[web] search = false` removes it. Unit tests over the pure wires, then `agent -p`
end to end against the fake server."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path
from types import SimpleNamespace

import pytest
from rich.console import Console

from agent_cli.config.settings import ProviderSettings, Settings, WebSettings
from agent_cli.core.events import WebSearchEvent
from agent_cli.core.messages import Message, ServerToolBlock, TextBlock, Usage
from agent_cli.core.requests import Request
from agent_cli.core.text import one_line
from agent_cli.providers import anthropic_wire, responses_wire
from agent_cli.providers.server_search import web_search_gap
from agent_cli.testing.fakeserver import FakeModelServer, Reply, ToolCallSpec
from agent_cli.testing.fakeserver.search_shapes import anthropic_blocks, responses_items
from agent_cli.ui.everyday_commands import _web_search
from agent_cli.ui.render import Renderer
from tests.e2e import MODELS, agent_env, run_agent, stream_events

SEARCH = {"type": "web_search_20250305", "name": "web_search"}


def _request(*messages: Message) -> Request:
    return Request(system="s", messages=tuple(messages), tools=(), max_tokens=100)


def _anthropic_reply(blocks: list[dict[str, object]]) -> dict[str, object]:
    content = [*blocks, {"type": "text", "text": "Python 3.14 came out in October.", "citations": []}]
    usage = {"input_tokens": 10, "output_tokens": 5, "server_tool_use": {"web_search_requests": 1}}
    return {"model": "claude-sonnet-4-5", "content": content, "stop_reason": "end_turn", "usage": usage}


# -- offered where the model has it ---------------------------------------------------------------


def test_anthropic_request_offers_the_search_tool_only_when_asked() -> None:
    request = _request(Message.user("what is new?"))
    on = anthropic_wire.to_wire(request, "claude-sonnet-4-5", caching=False, web_search=True)
    off = anthropic_wire.to_wire(request, "claude-sonnet-4-5", caching=False)
    assert on["tools"] == [SEARCH]
    assert "tools" not in off


def test_responses_request_offers_the_search_tool_only_when_asked() -> None:
    request = _request(Message.user("what is new?"))
    on = responses_wire.to_wire(request, "gpt-4o", web_search=True)
    assert on["tools"][0] == {"type": "web_search"}
    assert "tools" not in responses_wire.to_wire(request, "gpt-4o")


def test_which_models_have_a_provider_search() -> None:
    assert web_search_gap("anthropic", "messages", "claude-sonnet-4-5") is None
    assert web_search_gap("anthropic", "messages", "claude-opus-4-6") is None
    assert web_search_gap("anthropic", "messages", "claude-3-haiku-20240307") is not None
    assert web_search_gap("openai", "responses", "gpt-4o") is None
    assert "Chat Completions" in (web_search_gap("openai", "chat", "gpt-4o") or "")
    assert web_search_gap("openai", "chat-compatible", "qwen") is not None


def test_status_says_whether_search_is_offered() -> None:
    def line(provider: str, model: str, wire: str | None = None, search: bool = True) -> str:
        chosen = ProviderSettings(name=provider, wire=wire)  # type: ignore[arg-type]
        settings = Settings(provider=chosen, web=WebSettings(search=search))
        return _web_search(SimpleNamespace(settings=settings, provider_name=provider, model=model))  # type: ignore[arg-type]

    assert line("anthropic", "claude-sonnet-4-5") == "the provider's own (runs on its servers)"
    assert line("anthropic", "claude-sonnet-4-5", search=False) == "off ([web] search = false)"
    chat = line("openai", "gpt-4o", wire="chat")
    assert chat == "not offered: the Chat Completions wire has no provider web search"


# -- kept and sent back verbatim ------------------------------------------------------------------


def test_anthropic_search_blocks_round_trip_unchanged() -> None:
    blocks = anthropic_blocks(["python 3.14 release"])
    reply = anthropic_wire.from_wire(_anthropic_reply(blocks))
    kept = [b for b in reply.message.content if isinstance(b, ServerToolBlock)]
    assert [b.query for b in kept] == ["python 3.14 release", ""]
    assert reply.usage.web_searches == 1  # usage.server_tool_use.web_search_requests
    assert Usage.from_json(reply.usage.to_json()) == reply.usage
    assert "web_searches" not in Usage(1, 2).to_json()  # no search: the record is as before
    # Through the session log's JSON and back, then into the next request.
    message = Message.from_json(json.loads(json.dumps(reply.message.to_json())))
    history = _request(Message.user("q"), message, Message.user("more"))
    wire = anthropic_wire.to_wire(history, "m", caching=False, web_search=True)
    assert wire["messages"][1]["content"][:2] == blocks
    plain = anthropic_wire.to_wire(history, "m", caching=False)
    assert [b["type"] for b in plain["messages"][1]["content"]] == ["text"]


def test_anthropic_streamed_search_is_kept_with_its_query() -> None:
    use, result = anthropic_blocks(["a\x1b[2Jquery"])
    assembler = anthropic_wire.StreamAssembler("m")
    empty = {"type": "input_json_delta", "partial_json": ""}
    events: list[dict[str, object]] = [
        {"type": "message_start", "message": {"model": "m", "usage": {"input_tokens": 3}}},
        {"type": "content_block_start", "index": 0, "content_block": {**use, "input": {}}},
        {"type": "content_block_delta", "index": 0, "delta": empty},
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": json.dumps(use["input"])},
        },
        {"type": "content_block_start", "index": 1, "content_block": result},
        {"type": "content_block_start", "index": 2, "content_block": {"type": "text", "text": "ok"}},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 4}},
    ]
    for event in events:
        assembler.feed(event)
    message = assembler.finish().message
    wire = anthropic_wire.to_wire(_request(Message.user("q"), message), "m", caching=False, web_search=True)
    assert wire["messages"][1]["content"][:2] == [use, result]
    compact = json.dumps(use, separators=(",", ":"))
    assert message.content[0] == ServerToolBlock("anthropic", compact, "a\x1b[2Jquery")


def test_responses_search_call_round_trips_unchanged() -> None:
    items = responses_items(["rust 2027 edition"])
    part = {"type": "output_text", "text": "It is out."}
    text = {"type": "message", "role": "assistant", "content": [part]}
    body = {"status": "completed", "model": "gpt-4o", "output": [*items, text], "usage": {}}
    message = Message.from_json(responses_wire.from_wire(body).message.to_json())
    assert isinstance(message.content[0], ServerToolBlock) and message.content[0].query == "rust 2027 edition"
    history = _request(Message.user("q"), message, Message.user("and?"))
    sent = responses_wire.to_wire(history, "gpt-4o", web_search=True)
    assert sent["input"][1] == items[0]
    # A request without the tool (search turned off on resume) has nothing to pair them with.
    plain = responses_wire.to_wire(history, "gpt-4o")
    assert [i["type"] for i in plain["input"]] == ["message", "message", "message"]


def test_another_providers_search_is_not_sent() -> None:
    openai_block = ServerToolBlock("openai", json.dumps(responses_items(["x"])[0]), "x")
    message = Message.of("assistant", [openai_block, TextBlock("answer")])
    wire = anthropic_wire.to_wire(_request(Message.user("q"), message), "m", caching=False, web_search=True)
    assert wire["messages"][1]["content"] == [{"type": "text", "text": "answer"}]
    anthropic_block = ServerToolBlock("anthropic", json.dumps(anthropic_blocks(["y"])[0]), "y")
    theirs = _request(Message.user("q"), message.replace([anthropic_block]))
    sent = responses_wire.to_wire(theirs, "gpt-4o", web_search=True)
    assert [i["type"] for i in sent["input"]] == ["message"]


def test_the_repl_shows_one_safe_searched_line() -> None:
    out = StringIO()
    console = Console(file=out, width=80, force_terminal=True, color_system=None, highlight=False)
    Renderer(console, fancy=True).handle(WebSearchEvent(query="news\x1b]0;owned\x07\nrm -rf ~"))
    shown = out.getvalue()
    assert "\x1b]0" not in shown and "\x07" not in shown
    assert [line.strip() for line in shown.splitlines() if line.strip()] == [
        "searched: news\\x1b]0;owned\\x07\\x0arm -rf ~"
    ]


def test_the_search_line_writes_controls_out() -> None:
    shown = one_line("a\x1b[2J\nrm -rf /\tb")
    assert "\x1b" not in shown and "\n" not in shown and "\t" not in shown
    assert WebSearchEvent(query="q").to_json() == {"type": "web_search", "query": "q"}


# -- end to end: agent -p against the fake server -------------------------------------------------


@pytest.fixture
def project(tmp_path: Path) -> Path:
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "a.txt").write_text("alpha\n")
    return proj


@pytest.fixture
def home(tmp_path: Path) -> Path:
    h = tmp_path / "home"
    h.mkdir()
    return h


def _run(
    provider: str,
    project: Path,
    home: Path,
    server: FakeModelServer,
    *extra: str,
    wire: str = "responses",
    model: str | None = None,
) -> list[dict[str, object]]:
    wires = ["--wire", wire] if provider == "openai" else []
    args = ["-p", "look it up", "--provider", provider, "--model", model or MODELS[provider], *wires, "--yes"]
    args += ["--output-format", "stream-json", *extra]
    r = run_agent(args, project, agent_env(home, server, provider))
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    return stream_events(r.stdout)


def _search_blocks(provider: str, body: dict[str, object]) -> list[dict[str, object]]:
    if provider == "anthropic":
        turns = body["messages"]
        assert isinstance(turns, list)
        kinds = ("server_tool_use", "web_search_tool_result")
        return [b for t in turns for b in t["content"] if b.get("type") in kinds]
    items = body["input"]
    assert isinstance(items, list)
    return [i for i in items if i.get("type") == "web_search_call"]


@pytest.mark.e2e
@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_search_is_shown_and_goes_back_on_the_next_request(
    provider: str, project: Path, home: Path
) -> None:
    query = "release date\x1b]0;owned\x07"
    with FakeModelServer() as server:
        server.queue(
            Reply("Reading the file too.", [ToolCallSpec("read_file", {"path": "a.txt"})], searches=[query]),
            Reply("Done."),
        )
        events = _run(provider, project, home, server)
    first, second = server.requests[0].body, server.requests[1].body
    tools = first["tools"]
    assert isinstance(tools, list) and str(tools[0]["type"]).startswith("web_search")
    sent = _search_blocks(provider, second)
    assert sent, second
    searched = [e for e in events if e.get("type") == "web_search"]
    assert [e["query"] for e in searched] == [query]
    if provider == "anthropic":
        use, result = sent
        assert use["input"] == {"query": query} and result["tool_use_id"] == use["id"]
        assert len(result["content"]) == 2 and all(r["encrypted_content"] for r in result["content"])
    else:
        assert sent[0]["action"] == {"type": "search", "query": query} and sent[0]["id"].startswith("ws_")


@pytest.mark.e2e
def test_a_resumed_session_sends_its_searches_back(project: Path, home: Path) -> None:
    with FakeModelServer() as server:
        server.queue(Reply("In October.", searches=["python 3.14 release"]), Reply("Still October."))
        _run("anthropic", project, home, server)
        _run("anthropic", project, home, server, "--continue")
    first = _search_blocks("anthropic", server.requests[0].body)
    again = _search_blocks("anthropic", server.requests[1].body)
    assert first == [] and [b["type"] for b in again] == ["server_tool_use", "web_search_tool_result"]
    assert again[0]["input"] == {"query": "python 3.14 release"}


@pytest.mark.e2e
def test_a_reasoning_item_before_a_search_goes_back_with_it(project: Path, home: Path) -> None:
    """A reasoning model's output: reasoning, then the search, then the call; all three go back."""
    with FakeModelServer() as server:
        server.queue(
            Reply("Reading.", [ToolCallSpec("read_file", {"path": "a.txt"})], searches=["q"]), Reply("Done.")
        )
        _run("openai", project, home, server, model="gpt-6.2-sol")
    kinds = [i["type"] for i in server.requests[1].body["input"]]
    assert kinds[1:3] == ["reasoning", "web_search_call"], kinds


@pytest.mark.e2e
@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_web_search_false_removes_the_tool(provider: str, project: Path, home: Path) -> None:
    cfg = project.parent / "config.toml"
    cfg.write_text("[web]\nsearch = false\n")
    with FakeModelServer() as server:
        server.queue(Reply("No search here.", searches=["anything"]))
        events = _run(provider, project, home, server, "--config", str(cfg))
    tools = server.requests[0].body.get("tools") or []
    assert isinstance(tools, list)
    assert not any(str(t.get("type", "")).startswith("web_search") for t in tools)
    assert not [e for e in events if e.get("type") == "web_search"]


@pytest.mark.e2e
def test_chat_completions_gets_no_search_tool(project: Path, home: Path) -> None:
    with FakeModelServer() as server:
        server.queue(Reply("Plain."))
        _run("openai", project, home, server, wire="chat")
    tools = server.requests[0].body.get("tools") or []
    assert isinstance(tools, list) and tools
    assert all(t.get("type") == "function" for t in tools)
