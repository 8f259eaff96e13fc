"""A scriptable fake of the Anthropic Messages API, OpenAI Chat Completions and the OpenAI
Responses API, over real HTTP.

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
boundaries, as the real cache does. The Responses API caches automatically.

Today's reasoning rules, as the providers document them. The Claude 5.5 family
and Fable think by default: each reply begins with a thinking block whose
`signature` binds it to the model and the conversation before it; replayed
unchanged it is read, after an edit before it (or with a block left out between
kept ones) it is the real 400, or dropped under `drop_block`; what these models
refuse is in `model_rules`. Reasoning OpenAI models open with a reasoning item
whose `encrypted_content` binds the same way (withheld silently when it no
longer holds), and the Responses API checks how items pair up. A script sets
what the reasoning says and costs: `Reply(thinking=..., progress=[...],
redacted=True, reasoning_tokens=N)`. `RecordedRequest.reasoning_accepted` and
`.reasoning_withheld` count the replayed reasoning each request carried.
`FakeModelServer(models={"claude-opus-6": (1_000_000, 128_000)})` answers the
Models API; `overflow_in_stream=True` sends the Responses overflow as
`response.failed` inside a 200 stream.

The providers' own compaction, as their docs describe it (`compaction`): Anthropic's on-demand
compaction (a request with `compaction: {"type": "summarize"}` and the `compact-2026-09-04` beta is
answered with one signed `compaction` block, which later requests must send back first and
unchanged; the kept turns' thinking holds behind it) and OpenAI's `POST /v1/responses/compact` (the
user's messages and one sealed `compaction` item). Neither takes a script item; `compactor` (a
function of the user's texts) writes the summary. A refused block is the API's 400 with its
`error.details.error_code`, which the SDK raises as its `Compaction*Error`.

The modules: `script` (the items a test queues, and script files), `server`
(the queue, recording, the checks every API shares), `handler` (HTTP in and
out), `wire` (what an API module provides), `prompt_cache` (token estimate and
caches), `binding` (seals), `thinking` (Anthropic thinking blocks),
`model_rules` (what each model accepts), `responses_items` (Responses input
items), `compaction` (both providers' own compaction), and one module per API: `anthropic_api`, `openai_chat`,
`responses_api`. A new API is one more module implementing `wire.WireApi`,
listed in `server.APIS`.

Standalone, for terminal tests (from the repository root):
    python -m agent_cli.testing.fakeserver --port 8765 [--script FILE.json] [--echo] [--reply TEXT]
        [--context-window N]
A script file is a JSON list of items: {"text": ..., "tool_calls": [{"name": ..., "input": {...}}]},
{"fault": {"status": 529}}, {"drop": {}}, {"truncate": {}}, {"stream_error": {"kind": "api_error"}},
{"drip": {"interval": 0.2}} (a byte at a time), {"pings": {"seconds": 60}} (keep-alives only).
"""

from .prompt_cache import strip_cache_control
from .script import (
    DEFAULT_THINKING,
    Drip,
    Drop,
    Fault,
    Pings,
    Reply,
    ScriptItem,
    Stall,
    StreamError,
    ToolCallSpec,
    Truncate,
    load_script,
)
from .server import FakeModelServer, RecordedRequest, last_user_text

__all__ = [
    "DEFAULT_THINKING",
    "Drip",
    "Drop",
    "FakeModelServer",
    "Fault",
    "Pings",
    "RecordedRequest",
    "Reply",
    "ScriptItem",
    "Stall",
    "StreamError",
    "ToolCallSpec",
    "Truncate",
    "last_user_text",
    "load_script",
    "strip_cache_control",
]
