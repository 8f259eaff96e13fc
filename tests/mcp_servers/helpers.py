"""Starting the test MCP server (notes_server.py) and pointing `agent` at it."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

SERVER = Path(__file__).with_name("notes_server.py")


def stdio_table(name: str = "notes", *extra: str, timeout: float = 60, env: str = "") -> str:
    """A `[mcp.servers.NAME]` table that starts the server over stdio."""
    args = ", ".join(f'"{a}"' for a in (str(SERVER), *extra))
    lines = [f"[mcp.servers.{name}]", f'command = "{sys.executable}"', f"args = [{args}]"]
    if env:
        lines.append(f"env = {env}")
    lines.append(f"timeout = {timeout}")
    return "\n".join(lines) + "\n"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def http_server(*extra: str) -> Iterator[str]:
    """The server over streamable HTTP on 127.0.0.1; its URL."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, str(SERVER), "--http", str(port), *extra],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                time.sleep(0.1)
        else:
            raise RuntimeError("the HTTP MCP server did not start")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.kill()
        proc.wait(10)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (exited, not reaped by its parent) counts as gone
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[-1][:1] != "Z"
    except OSError:
        return False


def gone_soon(pid: int, seconds: float = 60) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.1)
    return False
