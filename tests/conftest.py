"""Suite-wide test settings and fixtures.

Hypothesis writes nothing into the repository. No example database: it replayed a once-failing draw
in every later run (a stale replay of a since-fixed example failed each run), and a fresh clone in
CI has none, so local runs now draw as CI does. Its other caches (constants, unicode data) go to a
folder under the temp dir instead of `.hypothesis/` in the working tree. No deadline per example
either: Hypothesis's default (200 ms) is a wall-clock bound that a busy machine trips (DeadlineExceeded,
then Flaky), and no property here is about time.

Ctrl-C as a terminal sends it. A suite started as a background job of a shell without job control
(`.ci/run &`, nohup) inherits SIGINT ignored, and an ignored signal stays ignored across exec: every
agent a test starts would then shrug off the SIGINT the Ctrl-C tests send it. The workers take
Python's own handler back, so what they start gets the default, as under a terminal.

`fake_server`: the fake model server (`agent_cli.testing.fakeserver`), one per test module and
back to as built for each test. A module that needs it built otherwise says so in a `FAKE_SERVER`
dict of `FakeModelServer`'s keyword arguments (`FAKE_SERVER = {"responder": respond}`).
"""

from __future__ import annotations

import os
import signal
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings
from hypothesis.configuration import set_hypothesis_home_dir

from agent_cli.testing.fakeserver import FakeModelServer

set_hypothesis_home_dir(Path(tempfile.gettempdir()) / f"agent-cli-hypothesis-{os.getuid()}")
settings.register_profile("agent-cli", database=None, deadline=None)
settings.load_profile("agent-cli")
signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="module")
def module_fake_server(request: pytest.FixtureRequest) -> Iterator[FakeModelServer]:
    """One server for the module: stopping one waits out its poll interval (up to half a second)."""
    options: dict[str, Any] = getattr(request.module, "FAKE_SERVER", {})
    with FakeModelServer(**options) as fake:
        yield fake


@pytest.fixture
def fake_server(module_fake_server: FakeModelServer) -> FakeModelServer:
    """The module's server as built: nothing queued or recorded, nothing cached, its settings back."""
    module_fake_server.reset()
    return module_fake_server
