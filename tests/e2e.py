"""Helpers for end-to-end tests: run `agent` as a user would, in a temp project, against a fake server."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agent_cli.testing.fakeserver import FakeModelServer, RecordedRequest

ANTHROPIC_KEY = "sk-ant-api03-E2ECANARYkey0123456789abcdefghij"
OPENAI_KEY = "sk-proj-E2ECANARYkey0123456789abcdefghijklmn"
MODELS = {"anthropic": "claude-sonnet-4-5", "openai": "gpt-4o"}


def agent_env(
    home: Path, server: FakeModelServer | None = None, provider: str = "anthropic"
) -> dict[str, str]:
    # (Nor the runner's COLUMNS/LINES, which pytest-xdist sets: a REPL on a pty takes its size from it.)
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ANTHROPIC_", "OPENAI_")) and k not in ("COLUMNS", "LINES")
    }
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_STATE_HOME=str(home / ".state"),
        NO_COLOR="1",
        PYTHONUNBUFFERED="1",
    )
    if server is not None:
        if provider == "anthropic":
            env.update(ANTHROPIC_API_KEY=ANTHROPIC_KEY, ANTHROPIC_BASE_URL=server.anthropic_base_url)
        else:
            env.update(OPENAI_API_KEY=OPENAI_KEY, OPENAI_BASE_URL=server.openai_base_url)
    return env


def agent_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "agent_cli", *args]


def run_agent(
    args: list[str], cwd: Path, env: dict[str, str], timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        agent_cmd(*args),
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def stream_events(stdout: str) -> list[dict[str, Any]]:
    events = []
    for line in stdout.splitlines():
        line = line.strip()
        if line.startswith("{"):
            events.append(json.loads(line))
    return events


def user_texts(request: RecordedRequest) -> list[str]:
    """The text blocks of a request's user messages, in order (Anthropic's shape)."""
    return [
        b["text"]
        for m in request.body["messages"]
        if m["role"] == "user"
        for b in m["content"]
        if "text" in b
    ]


def transcript_blob(project: Path) -> str:
    root = project / ".transcripts"
    return "".join(p.read_text(errors="replace") for p in root.rglob("*") if p.is_file())


def tool_results(requests: Sequence[RecordedRequest]) -> dict[str, tuple[str, bool]]:
    """Every tool result the model was sent (Anthropic wire), by call id: its text and is_error."""
    found: dict[str, tuple[str, bool]] = {}
    for q in requests:
        for m in q.body.get("messages", []):
            for b in m["content"] if isinstance(m.get("content"), list) else []:
                if b.get("type") == "tool_result":
                    found[b["tool_use_id"]] = (str(b.get("content")), bool(b.get("is_error")))
    return found


def without_read_rights() -> list[str] | None:
    """A prefix that runs a command without the right to read others' files: nothing for a normal
    user; for root, `setpriv` dropping the capabilities that bypass file modes; None if neither."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return None
    cmd = [setpriv, "--bounding-set=-dac_override,-dac_read_search"]
    return cmd if subprocess.run([*cmd, "true"], capture_output=True).returncode == 0 else None
