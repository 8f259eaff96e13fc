"""The REPL's warm-up thread (issue 35, item 7): a prompt sent soon after start waits for the
SDK's import and the first count only, and then imports nothing the warm-up could have.

The thread imports the provider's SDK and its HTTP transport, counts the context for the toolbar
(the turn waits for these: the counter is not shared across threads), then imports rich's Markdown
and loads the tokenizer's vocabulary (what drawing the first answer and counting after it need),
which no turn waits for. After the warm-up, a first turn through the real SDK against the fake
server imports nothing of the SDK's, its HTTP transport's, rich's or the tokenizer's.
"""

from __future__ import annotations

import re
import threading
import time
from pathlib import Path

import pytest

from agent_cli.core.requests import Completion, Request
from agent_cli.testing.fakeserver import FakeModelServer, Reply
from agent_cli.testing.scripted import say
from agent_cli.tokens.counter import TokenCounter
from agent_cli.ui.repl import Repl
from agent_cli.ui.toolbar import Toolbar
from tests.e2e import agent_env
from tests.reliability.procs import expect
from tests.test_slash import Harness

pexpect = pytest.importorskip("pexpect")

LONG = 30.0  # seconds: only a wrong order waits this long (the old code), never a right one


def join_warm_up() -> None:
    for thread in threading.enumerate():
        if thread.name == "warm-up":
            thread.join(LONG)


def test_a_first_prompt_waits_for_the_import_and_the_count_not_for_what_follows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The turn waits for the SDK's import and the warm-up's count (the counter is not shared
    across threads), not for what the warm-up does after them (here held until the model was asked),
    and the warm-up then leaves the vocabulary to the turn's own count: loaded meanwhile it would
    take the processor from the turn. The old code waited for all of its warm-up."""
    asked = threading.Event()
    order: list[str] = []
    loads: list[str] = []
    load = getattr(TokenCounter, "load_vocabulary", lambda counter: None)

    def noted_load(counter: TokenCounter) -> None:
        loads.append(threading.current_thread().name)
        load(counter)

    monkeypatch.setattr(TokenCounter, "load_vocabulary", noted_load, raising=False)

    def answer(request: Request) -> Completion:
        order.append("model asked")
        asked.set()
        return say("hello back")

    class NotedToolbar(Toolbar):
        def count(self) -> None:
            order.append(f"count in {threading.current_thread().name}")
            super().count()

    h = Harness(tmp_path, [answer])
    held: list[bool] = []  # the toolbar's refresh, after the count: the warm-up's next step waits here
    toolbar = NotedToolbar(h.session)
    h.repl = Repl(
        h.session,
        lambda: h.renderer,
        h._read,
        toolbar=toolbar,
        invalidate=lambda: held.append(asked.wait(LONG)),
    )
    h.repl.warm_up(lambda: order.append("sdk imported"))
    text = h.run("hi")
    join_warm_up()
    assert "hello back" in text
    assert order == ["sdk imported", "count in warm-up", "model asked", "count in MainThread"]
    assert held == [True], "the turn asked the model while the warm-up went on"
    assert "warm-up" not in loads, "the vocabulary was left to the turn's count"


def test_an_idle_warm_up_loads_the_vocabulary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With no turn begun, the warm-up loads the tokenizer's vocabulary, so the count after the first
    answer does not (the old code left it to that count, on the main thread)."""
    loads: list[str] = []
    load = getattr(TokenCounter, "load_vocabulary", lambda counter: None)

    def noted_load(counter: TokenCounter) -> None:
        loads.append(threading.current_thread().name)
        load(counter)

    monkeypatch.setattr(TokenCounter, "load_vocabulary", noted_load, raising=False)
    h = Harness(tmp_path, [say("hello back")])
    h.repl.warm_up()
    join_warm_up()
    assert loads == ["warm-up"]


def test_a_count_under_way_is_waited_for(tmp_path: Path) -> None:
    """A warm-up count already running when the turn begins ends before the turn counts or asks
    the model (the counter is not shared across threads)."""
    asked = threading.Event()
    counting, release = threading.Event(), threading.Event()
    order: list[str] = []

    def answer(request: Request) -> Completion:
        order.append("model asked")
        asked.set()
        return say("hello back")

    class SlowToolbar(Toolbar):
        def count(self) -> None:
            if threading.current_thread().name == "warm-up":
                counting.set()
                release.wait(LONG)
                order.append("warm-up count done")
            super().count()

    h = Harness(tmp_path, [answer])
    h.repl = Repl(h.session, lambda: h.renderer, h._read, toolbar=SlowToolbar(h.session))
    h.repl.warm_up()
    assert counting.wait(LONG)
    threading.Timer(0.3, release.set).start()  # if the turn did not wait, it would ask meanwhile
    assert "hello back" in h.run("hi")
    join_warm_up()
    assert order == ["warm-up count done", "model asked"]


# What the warm-up imports, so that the first prompt does not: the SDK, its HTTP transport (the
# first client imports it), rich and the Markdown the first answer is drawn with, the tokenizer.
WARMED = ("anthropic", "httpx2", "httpcore2", "pydantic", "rich", "markdown_it", "pygments", "tiktoken")
IMPORT_LINE = re.compile(r"import time:\s+\d+ \|\s+\d+ \|\s+(\S.*)$")
COUNTED = re.compile(r"\(\d+%\) · auto-compact")  # the toolbar, once the warm-up counted


def _imported(log: Path, module: str) -> bool:
    """Whether `-X importtime` has logged `module` (waiting up to LONG for it)."""
    deadline = time.monotonic() + LONG
    while time.monotonic() < deadline:
        names = {
            m.group(1).strip() for line in log.read_text().splitlines() if (m := IMPORT_LINE.match(line))
        }
        if module in names:
            return True
        time.sleep(0.1)
    return False


@pytest.mark.e2e
def test_after_the_warm_up_a_first_turn_imports_nothing_of_the_sdk_or_rich(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    """The REPL on a pseudo-terminal with `-X importtime`: once the toolbar shows the warm-up's
    count and the warm-up has imported rich's Markdown, a prompt's turn (the real Anthropic SDK
    against the fake server) imports no module of those packages. The old code left httpcore2 (the
    SDK's first client) and rich.markdown with markdown_it (the answer's Markdown) to the turn."""
    fake_server.default = Reply("Hello from the model.")
    project = tmp_path / "project"
    project.mkdir()
    env = agent_env(tmp_path / "home", fake_server)
    env["TERM"] = "xterm-256color"
    del env["NO_COLOR"]  # a terminal in colour: the answer is drawn as Markdown
    imports = tmp_path / "imports.txt"
    child = pexpect.spawn(
        "/bin/sh",
        [
            "-c",
            'exec "$0" -X importtime -c "from agent_cli.cli import main; main()" 2>"$1"',
            __import__("sys").executable,
            str(imports),
        ],
        cwd=str(project),
        env=env,
        dimensions=(40, 120),
        encoding="utf-8",
        timeout=90,
    )
    try:
        expect(child, COUNTED)
        assert _imported(imports, "rich.markdown"), "the warm-up imports rich's Markdown"
        before = imports.stat().st_size
        child.send("say hi\r")
        expect(child, "Hello from the model")
        expect(child, COUNTED)  # the turn is over: the next prompt (the answer's Markdown drawn)
        with imports.open() as f:
            f.seek(before)
            during = [m.group(1).strip() for line in f if (m := IMPORT_LINE.match(line))]
        child.send("/exit\r")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    late = sorted({name for name in during if name.split(".")[0] in WARMED and name.count(".") <= 1})
    assert late == [], f"imported by the first turn, after the warm-up: {late}"
    assert fake_server.requests, "the turn reached the model"
