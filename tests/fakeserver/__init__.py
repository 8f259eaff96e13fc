"""A scriptable fake of the Anthropic Messages API and OpenAI Chat Completions, over real HTTP.

For tests and benchmarks across the project: the real SDKs talk to it on
127.0.0.1, so streaming, retries, dropped connections and error parsing go
through the same code paths as in production.

    with FakeModelServer(context_window=50_000) as server:
        server.queue(
            Reply(tool_calls=[ToolCallSpec("read_file", {"path": "a.py"})]),
            Fault(529),                      # the next request is overloaded
            Drop(),                          # then one dies mid-stream
            Reply("done"),
        )
        provider = AnthropicProvider("claude-sonnet-4-5", api_key="k", base_url=server.anthropic_base_url)
        ...
        assert server.requests[0].body["messages"][0]["role"] == "user"

Each request takes the next queued item; when the queue is empty the
`responder` (a function of the RecordedRequest) answers, then `default`, then
an echo of the last user text if `echo=True`, else a 400 saying nothing was
scripted (a 400, so a missing script fails fast instead of being retried).

Like the real APIs it rejects, before consuming the queue: a prompt estimated
above `context_window` (each API's real overflow error), a tool_use without
its tool_result and an orphan tool_result, empty text blocks, more than four
cache_control breakpoints. Usage reports input tokens = the estimate
(`counter`, chars/4 by default). Anthropic prompt caching is simulated: a
request's prefix up to each `cache_control` breakpoint is written to the cache,
and a later request reads the longest cached prefix it starts with, at block
boundaries, as the real cache does.

The modules: `script` (the items a test queues, and script files), `server`
(the HTTP server, the queue, recording, the checks every API shares), `wire`
(what an API module provides), `prompt_cache` (token estimate and cache), and
one module per API: `anthropic_api`, `openai_chat`. A new API is one more
module implementing `wire.WireApi`, listed in `server.APIS`.

Standalone, for terminal tests (from the repository root):
    python -m tests.fakeserver --port 8765 [--script FILE.json] [--echo] [--reply TEXT] [--context-window N]
A script file is a JSON list of items: {"text": ..., "tool_calls": [{"name": ..., "input": {...}}]},
{"fault": {"status": 529}}, {"drop": {}}, {"truncate": {}}, {"stream_error": {"kind": "api_error"}}.
"""

from .prompt_cache import strip_cache_control
from .script import Drop, Fault, Reply, ScriptItem, StreamError, ToolCallSpec, Truncate, load_script
from .server import FakeModelServer, RecordedRequest, last_user_text

__all__ = [
    "Drop",
    "FakeModelServer",
    "Fault",
    "RecordedRequest",
    "Reply",
    "ScriptItem",
    "StreamError",
    "ToolCallSpec",
    "Truncate",
    "last_user_text",
    "load_script",
    "strip_cache_control",
]
