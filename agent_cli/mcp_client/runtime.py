"""The MCP clients' event loop: one background thread the synchronous agent calls into.

The `mcp` package is async and a client must be entered and left in one task, so each server gets
one long-lived task on this loop (`Connection._serve`) that opens the client, lists its tools, and
waits to be closed; a call is a coroutine sent to the loop with `run_coroutine_threadsafe`. The
`mcp` package is imported here, inside the loop's thread, and only when a server is configured.

A server's stderr goes to a bounded log per project in the state dir (errlog.py; never to the
terminal: it is untrusted text), and the `mcp` package's own log records are kept off the terminal too.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass
from typing import Any, TextIO, TypeVar

from agent_cli.mcp_client.config import ServerSpec
from agent_cli.tools import children

__all__ = ["MAX_EVENT_BYTES", "CallResult", "Connection", "EventLoop", "ListedTool", "McpFailure"]

T = TypeVar("T")
# The HTTP client's cap on one event (the SDK's default is 1 MiB): raised so a large result arrives
# whole and L0 caps it like any tool result; a result past this is a tool error saying so.
MAX_EVENT_BYTES = 64 * 1024 * 1024
STOP_GRACE = 8.0  # seconds the servers get to stop (the SDK escalates to a kill within that)
MAX_TOOL_PAGES = 1000


class McpFailure(Exception):
    """A server failed to start or to answer: one line saying why."""


@dataclass(frozen=True, slots=True)
class ListedTool:
    name: str
    description: str
    input_schema: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class CallResult:
    text: str
    is_error: bool


def _why(exc: BaseException) -> str:
    """One line for an exception, however the SDK wrapped it (exception groups included)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _retrieved(task: asyncio.Future[Any]) -> None:
    """Mark a call's outcome as seen: one nobody waits for any more is not reported at exit."""
    if not task.cancelled():
        task.exception()


def _unreported(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """asyncio's report of an error nobody awaited would print a traceback: the failures that
    matter reach the user as tool errors and warnings already."""


class EventLoop:
    """An asyncio loop on a daemon thread."""

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._loop.set_exception_handler(_unreported)
        self._thread = threading.Thread(target=self._loop.run_forever, name="mcp-clients", daemon=True)
        self._thread.start()

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        return asyncio.run_coroutine_threadsafe(coro, self._loop)

    def call_soon(self, callback: Callable[[], object]) -> None:
        self._loop.call_soon_threadsafe(callback)

    def stop(self) -> None:
        if self._loop.is_running():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(STOP_GRACE)


def _quiet_sdk_logs() -> None:
    """The SDK logs parse failures with their tracebacks; none of that may reach the terminal."""
    logger = logging.getLogger("mcp")
    if not any(isinstance(h, logging.NullHandler) for h in logger.handlers):
        logger.addHandler(logging.NullHandler())  # (so Python's last-resort handler never prints them)


class Connection:
    """One server's client, living on the event loop. Thread-safe: every method blocks the caller."""

    def __init__(
        self,
        spec: ServerSpec,
        loop: EventLoop,
        errlog: TextIO,
        say: Callable[[str], None] = lambda line: None,
    ) -> None:
        self.spec = spec
        self._loop = loop
        self._errlog = errlog
        self._client: Any = None
        self._closing: asyncio.Event | None = None
        self._task: asyncio.Task[Any] | None = None
        self._served: concurrent.futures.Future[None] | None = None
        # Set when the server's task has truly ended (its process stopped), cancelled or not.
        self._finished: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._ready: concurrent.futures.Future[list[ListedTool]] = concurrent.futures.Future()
        self.lost: str | None = None  # why the connection ended, once it did
        self._say = say  # failed calls, for the session to warn about (each said once)
        self._said: set[str] = set()
        self._notes_lock = threading.Lock()

    def note(self, line: str) -> None:
        """A call failed: a line to warn with, said once per distinct failure."""
        with self._notes_lock:
            if line in self._said:
                return
            self._said.add(line)
        self._say(line)

    def start(self) -> concurrent.futures.Future[list[ListedTool]]:
        """Start the server; the future holds its tools (McpFailure when it fails)."""
        self._served = self._loop.submit(self._serve())
        return self._ready

    def call(self, name: str, arguments: Mapping[str, Any]) -> concurrent.futures.Future[CallResult]:
        return self._loop.submit(self._call(name, dict(arguments)))

    def close(self) -> None:
        """Ask the server to stop and wait (bounded) until its process is gone."""
        closing = self._closing
        if closing is not None:
            self._loop.call_soon(closing.set)
            if self._wait_finished(STOP_GRACE):
                return
        self.abandon()

    def abandon(self) -> None:
        """Stop the server now, whatever it is doing (starting, say): its task is cancelled, and the
        SDK's shielded shutdown still stops its process; waits (bounded) for that."""
        task = self._task
        if task is not None:
            self._loop.call_soon(task.cancel)
        elif self._served is not None and self._served.cancel():
            return  # it had not begun: it never will
        self._wait_finished(STOP_GRACE)

    def _wait_finished(self, seconds: float) -> bool:
        if self._served is None:
            return True
        try:
            self._finished.result(seconds)
        except concurrent.futures.TimeoutError:
            return False
        return True

    def _target(self) -> Any:
        import httpx2
        from mcp.client.stdio import StdioServerParameters, stdio_client
        from mcp.client.streamable_http import streamable_http_client

        spec = self.spec
        if spec.url is not None:
            http = httpx2.AsyncClient(
                headers=dict(spec.headers), timeout=httpx2.Timeout(30.0, read=max(spec.timeout, 30.0))
            )
            return streamable_http_client(
                spec.url, http_client=http, max_sse_event_size=MAX_EVENT_BYTES
            ), http
        assert spec.command is not None
        children.enter()  # the server starts in the session's container, like the bash tool's commands
        params = StdioServerParameters(
            command=spec.command,
            args=list(spec.args),
            env=dict(spec.env) or None,
            encoding_error_handler="replace",
        )
        return stdio_client(params, errlog=self._errlog), None

    async def _serve(self) -> None:
        try:
            await self._run()
        finally:
            self._finished.set_result(None)

    async def _run(self) -> None:
        self._closing = asyncio.Event()
        self._task = asyncio.current_task()
        try:
            _quiet_sdk_logs()
            from mcp import Client

            transport, http = self._target()
            try:
                async with Client(transport, read_timeout_seconds=self.spec.timeout) as client:
                    self._client = client
                    tools = await asyncio.wait_for(self._list(client), self.spec.timeout)
                    self._ready.set_result(tools)
                    await self._closing.wait()
            finally:
                if http is not None:
                    await http.aclose()
        except BaseException as exc:  # the task's end: said once, as the start's or the connection's failure
            why = "stopped" if isinstance(exc, asyncio.CancelledError) else _why(exc)
            if not self._ready.done():
                self._ready.set_exception(McpFailure(why))
            elif not self._closing.is_set():
                self.lost = why
            if not isinstance(exc, Exception):
                raise
        finally:
            self._client = None
            self._errlog.close()
            if not self._ready.done():
                self._ready.set_exception(
                    McpFailure("the connection ended before the server listed its tools")
                )
            elif self.lost is None and not self._closing.is_set():
                self.lost = "the server closed the connection"

    @staticmethod
    async def _list(client: Any) -> list[ListedTool]:
        """Every page of the server's tools."""
        tools: list[ListedTool] = []
        cursor: str | None = None
        for _ in range(MAX_TOOL_PAGES):
            page = await client.list_tools(cursor=cursor)
            for tool in page.tools:
                schema = tool.input_schema if isinstance(tool.input_schema, dict) else {"type": "object"}
                tools.append(ListedTool(str(tool.name), str(tool.description or ""), schema))
            cursor = page.next_cursor
            if not cursor:
                break
        return tools

    async def _call(self, name: str, arguments: dict[str, Any]) -> CallResult:
        import json

        client = self._client
        if client is None:
            raise McpFailure(f"not connected ({self.lost or 'the server is gone'})")
        call = client.call_tool(name, arguments, read_timeout_seconds=self.spec.timeout)
        # The served task ends when the server dies: a call waiting on it must not wait out its timeout.
        served = asyncio.wrap_future(self._served) if self._served is not None else None
        task = asyncio.ensure_future(call)
        task.add_done_callback(_retrieved)
        waits: set[asyncio.Future[Any]] = {task} | ({served} if served is not None else set())
        try:
            done, _ = await asyncio.wait(
                waits, timeout=self.spec.timeout, return_when=asyncio.FIRST_COMPLETED
            )
        finally:  # (the caller gave up on it: the user cancelled, or the agent is stopping)
            if not task.done():
                task.cancel()
        if task not in done:
            task.cancel()
            if done:
                raise McpFailure(f"the server stopped during the call ({self.lost or 'connection closed'})")
            raise McpFailure(f"no answer within {self.spec.timeout:g} s (its timeout)")
        try:
            result = task.result()
        except Exception as exc:
            from mcp_types import CONNECTION_CLOSED

            if getattr(exc, "code", None) == CONNECTION_CLOSED:
                said = str(getattr(exc, "message", "") or exc)
                if said.startswith("SSE stream"):  # this answer's stream broke (too large, cut off)
                    limit = MAX_EVENT_BYTES // (1024 * 1024)
                    raise McpFailure(
                        f"the answer did not arrive whole ({said}); one HTTP event may hold {limit} MiB"
                    ) from None
                self.lost = "the server closed the connection (it exited or crashed)"
                raise McpFailure(self.lost) from None
            raise McpFailure(_why(exc)) from None
        parts: list[str] = []
        for block in result.content:
            text = getattr(block, "text", None)
            if isinstance(text, str):
                parts.append(text)
            else:
                kind = getattr(block, "type", "content")
                parts.append(f"[{kind} content: not shown as text]")
        if result.structured_content is not None:
            structured = json.dumps(result.structured_content, ensure_ascii=False, indent=1)
            if structured not in parts:  # servers often send the same JSON as text too
                parts.append(structured)
        return CallResult("\n".join(parts), bool(result.is_error))
