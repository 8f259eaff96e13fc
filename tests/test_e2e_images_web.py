"""Issue 40's "done when": a 32k session that reads 30 pages (web_fetch, from a local HTTP server)
and 20 screenshots (read_file) ends with no request over the window, and every page and every
image can be recalled: the model recalls the oldest of each in the session itself, and the
archive answers for all fifty afterwards (the same search `recall` runs).

`agent -p` runs through the real Anthropic SDK against the fake model server, which rejects any
request past 32,000 tokens (an image costs its pixels / 750 there, as on Anthropic's API)."""

from __future__ import annotations

import http.server
import io
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from agent_cli.store.archive import Archive
from agent_cli.testing.fakeserver import FakeModelServer, RecordedRequest, Reply, ToolCallSpec
from agent_cli.testing.summary_shape import is_summary_request
from tests.e2e import agent_env, run_agent, stream_events

pytestmark = pytest.mark.e2e

WINDOW = 32_000
PAGES, SHOTS = 30, 20


def _page(n: int) -> bytes:
    words = " ".join(f"topic{n}w{k} detail about section {k} of guide {n}." for k in range(520))
    body = f"<h1>Guide {n}</h1><p>PAGE-{n}-MARKER {words}</p><script>alert('x')</script>"
    return f"<html><head><title>Guide {n}</title></head><body>{body}</body></html>".encode()


@pytest.fixture
def site() -> Iterator[int]:
    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            n = int(self.path.strip("/").removeprefix("guide") or 0)
            body = _page(n)
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def _shot(path: Path, n: int) -> None:
    image = Image.new("RGB", (1280, 800), (n * 12 % 256, 90, 200 - n))
    for x in range(0, 1280, 64):  # a little structure, different in each
        image.paste((n, x % 256, 40), (x, n * 30, x + 32, n * 30 + 20))
    out = io.BytesIO()
    image.save(out, "PNG")
    path.write_bytes(out.getvalue())


def _script(port: int) -> Any:
    steps: list[ToolCallSpec] = []
    for i in range(max(PAGES, SHOTS)):
        if i < PAGES:
            steps.append(ToolCallSpec("web_fetch", {"url": f"http://127.0.0.1:{port}/guide{i + 1}"}))
        if i < SHOTS:
            steps.append(ToolCallSpec("read_file", {"path": f"shots/shot{i + 1:02}.png"}))
    steps += [ToolCallSpec("recall", {"query": q}) for q in ("shot01.png", "PAGE-1-MARKER")]
    at = {"n": 0}

    def answer(request: RecordedRequest) -> Reply:
        if is_summary_request(request.body):
            return Reply(f"## Work state\nRead {at['n']} of {len(steps)} items; next: the rest.")
        n = at["n"]
        at["n"] += 1
        if n < len(steps):
            return Reply(f"Step {n + 1}.", tool_calls=[steps[n]])
        return Reply("All pages and screenshots read.")

    return answer


def _recall_results(request: RecordedRequest) -> list[dict[str, Any]]:
    """The tool results of the request's last message (Anthropic's shape)."""
    content = request.body["messages"][-1]["content"]
    return [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]


def test_thirty_pages_and_twenty_screenshots_in_32k(tmp_path: Path, site: int) -> None:
    home, project = tmp_path / "home", tmp_path / "proj"
    (project / "shots").mkdir(parents=True)
    for n in range(1, SHOTS + 1):
        _shot(project / "shots" / f"shot{n:02}.png", n)
    config = home / ".config" / "agent-cli"
    config.mkdir(parents=True)
    (config / "config.toml").write_text('[web]\nallow_hosts = ["127.0.0.1"]\n')
    with FakeModelServer(context_window=WINDOW) as server:
        server.responder = _script(site)
        done = run_agent(
            [
                "-p", "Read the guides and the screenshots, one at a time.",
                "--model", "claude-haiku-4-5", "--context-window", str(WINDOW),
                "--output-format", "stream-json",
            ],
            project,
            agent_env(home, server),
            timeout=900,
        )  # fmt: skip
        requests = server.requests
    events = stream_events(done.stdout)
    assert done.returncode == 0, done.stderr[-3000:]
    assert events[-1]["type"] == "result" and events[-1]["text"] == "All pages and screenshots read."
    # No request went over the window: the fake would have refused it, and the agent never had to
    # recover from an overflow.
    assert max(q.input_tokens for q in requests) <= WINDOW
    assert not [e for e in events if e["type"] == "compact" and e["trigger"] == "overflow"]
    layers = {e["layer"] for e in events if e["type"] == "compact"}
    assert "clear" in layers, layers  # old pages and screenshots were cleared to stubs
    # The model recalled the oldest screenshot and page in the session: back as an image, and as text.
    image_recall, page_recall = requests[-2], requests[-1]
    (shown,) = _recall_results(image_recall)
    assert isinstance(shown["content"], list) and [b["type"] for b in shown["content"]] == ["text", "image"]
    assert "shot01.png (1280x800 px)" in shown["content"][0]["text"]
    (page,) = _recall_results(page_recall)
    assert "PAGE-1-MARKER" in str(page["content"])
    # Every page and every screenshot is on disk, and recall's search finds each.
    (session,) = [d for d in (project / ".transcripts").iterdir() if d.is_dir()]
    archive = Archive(session)
    for n in range(1, PAGES + 1):
        assert f"PAGE-{n}-MARKER" in archive.search(f"PAGE-{n}-MARKER", 8000), n
    for n in range(1, SHOTS + 1):
        found = archive.images(f"shot{n:02}.png")
        assert found and (found[0].width, found[0].height) == (1280, 800), n
