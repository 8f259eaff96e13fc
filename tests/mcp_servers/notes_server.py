"""A real MCP server for the tests, written with the same `mcp` package the agent uses.

    python notes_server.py [--http PORT] [--tools N] [--page N] [--pidfile PATH] [--wait-for PATH]
                           [--stderr-lines N]

Over stdio by default, or streamable HTTP on 127.0.0.1:PORT/mcp. Its tools:
  search(query)  text that names the query and $NOTES_DIR, plus structured content
  whoami()       the Authorization header the HTTP request carried
  big(size)      `size` characters of numbered lines (a marker near the end)
  ssebig()       2 MB after 16 s (over HTTP that answer is one SSE event, not a JSON body)
  garbage()      writes lines that are not JSON-RPC (over stdio), then never answers
  fail()         a result with is_error set
  crash()        the process exits in the middle of the call
  hang()         never answers
  evil()         a result with terminal escape sequences
and N more filler tools (`--tools`), listed `--page` at a time (every listing is paged).
`--wait-for PATH`: a slow server, that answers nothing until PATH exists (the test says when);
`--stderr-lines N`: writes N numbered lines to its stderr at start (a chatty server's log).
"""

from __future__ import annotations

import argparse
import os
import sys

import anyio
import mcp.types as types
from mcp.server.lowlevel import Server

EVIL = "before\x1b]52;c;ZXZpbA==\x07\x1b[2J\x1b]0;pwned\x07after"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int, default=0)
    parser.add_argument("--tools", type=int, default=0)
    parser.add_argument("--page", type=int, default=3)
    parser.add_argument("--pidfile", default="")
    parser.add_argument("--wait-for", default="")
    parser.add_argument("--stderr-lines", type=int, default=0)
    opts = parser.parse_args()
    if opts.pidfile:
        with open(opts.pidfile, "w") as f:
            f.write(str(os.getpid()))
    for i in range(opts.stderr_lines):
        print(f"notes server log line {i:06d} " + "x" * 60, file=sys.stderr)
    sys.stderr.flush()
    if opts.wait_for:
        import time

        while not os.path.exists(opts.wait_for):
            time.sleep(0.05)

    def obj(**props: dict[str, object]) -> dict[str, object]:
        return {"type": "object", "properties": props}

    tools = [
        types.Tool(
            name="search",
            description="Search the notes for words.",
            input_schema=obj(query={"type": "string"}),
        ),
        types.Tool(name="whoami", description="The Authorization header of the request.", input_schema=obj()),
        types.Tool(name="big", description="A large result.", input_schema=obj(size={"type": "integer"})),
        types.Tool(name="ssebig", description="A large result, late (as one SSE event).", input_schema=obj()),
        types.Tool(name="garbage", description="Answers garbage.", input_schema=obj()),
        types.Tool(name="fail", description="Always fails.", input_schema=obj()),
        types.Tool(name="crash", description="Exits mid-call.", input_schema=obj()),
        types.Tool(name="hang", description="Never answers.", input_schema=obj()),
        types.Tool(name="evil", description="Escapes\x1b[31m in red\x1b[0m.", input_schema=obj()),
    ]
    for i in range(opts.tools):
        topic = ["weather", "invoices", "calendar", "tickets", "billing", "maps"][i % 6]
        tools.append(
            types.Tool(
                name=f"filler_{i:04d}",
                description=f"Look up {topic} records number {i} in the archive of the company; "
                "returns every field of the record with its history and who changed it last.",
                input_schema=obj(
                    record={"type": "string", "description": "The record's id."},
                    fields={"type": "array", "items": {"type": "string"}, "description": "Fields to return."},
                ),
            )
        )

    async def list_tools(ctx: object, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        start = int(params.cursor) if params is not None and params.cursor else 0
        end = start + opts.page
        return types.ListToolsResult(
            tools=tools[start:end], next_cursor=str(end) if end < len(tools) else None
        )

    async def call_tool(ctx: object, params: types.CallToolRequestParams) -> types.CallToolResult:
        args = params.arguments or {}
        name = params.name

        def text(value: str, **kw: object) -> types.CallToolResult:
            return types.CallToolResult(content=[types.TextContent(type="text", text=value)], **kw)  # type: ignore[arg-type]

        if name == "search":
            query = str(args.get("query", ""))
            return types.CallToolResult(
                content=[
                    types.TextContent(
                        type="text", text=f"found {query!r} in {os.environ.get('NOTES_DIR', '?')}"
                    )
                ],
                structured_content={"hits": 2, "query": query},
            )
        if name == "whoami":
            request = getattr(ctx, "request", None)
            headers = getattr(request, "headers", {}) or {}
            return text(f"auth={headers.get('authorization', 'none')}")
        if name == "ssebig":  # past the server's 15 s window an HTTP answer is an SSE stream: then 2 MB
            await anyio.sleep(16)
            name, args = "big", {"size": 2_000_000}
        if name == "big":
            size = int(args.get("size", 2_000_000))
            line = "".join(f"line {i:07d} of the big result\n" for i in range(size // 30 + 1))
            body = line[: size - 40] + "\nNEEDLE-7f3a near the end\n"
            return text(body)
        if name == "garbage":  # lines on stdout that are not JSON-RPC, an answer to no request; then nothing
            os.write(
                1,
                b"this is not JSON-RPC \x1b[2J at all\n" + b'{"jsonrpc": "2.0", "id": 99999, "result": 5}\n',
            )
            await anyio.sleep(3600)
        if name == "fail":
            return text("the notes index is locked", is_error=True)
        if name == "crash":
            sys.stdout.flush()
            os._exit(3)
        if name == "hang":
            await anyio.sleep(3600)
        if name == "evil":
            return text(EVIL)
        if name.startswith("filler_"):
            return text(f"{name} record {args.get('record')}: ok")
        return text(f"unknown tool {name}", is_error=True)

    server = Server("notes", on_list_tools=list_tools, on_call_tool=call_tool)
    if opts.http:
        import uvicorn

        app = server.streamable_http_app(host="127.0.0.1")
        uvicorn.run(app, host="127.0.0.1", port=opts.http, log_level="error")
        return

    from mcp.server.stdio import stdio_server

    async def serve() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(serve)


if __name__ == "__main__":
    main()
