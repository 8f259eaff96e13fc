"""Images into the REPL as a person gives them: a file dragged onto the terminal (its path pasted,
bracketed), a line that is only an image's path, and Ctrl+V of a clipboard image (read through the
clipboard helper: here a stand-in `wl-paste` on PATH). Each reaches the model as the image itself."""

from __future__ import annotations

import io
import stat
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from agent_cli.testing.fakeserver import FakeModelServer, Reply
from agent_cli.testing.fakeserver.images import seen_images
from agent_cli.ui.pasted_images import dropped_mentions
from tests.e2e import agent_env
from tests.reliability.procs import expect, spawn_repl

pexpect = pytest.importorskip("pexpect")

FAKE_SERVER = {"default": Reply("I see a picture.")}
PASTE_START, PASTE_END = "\x1b[200~", "\x1b[201~"


def _png(path: Path, width: int, height: int) -> Path:
    out = io.BytesIO()
    Image.new("RGB", (width, height), (10, 200, 30)).save(out, "PNG")
    path.write_bytes(out.getvalue())
    return path


def test_a_dropped_path_becomes_a_mention_only_when_every_word_is_an_image(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    inside = _png(root / "ui shot.png", 10, 10)
    outside = _png(tmp_path / "Screen Shot 1.png", 10, 10)
    (root / "notes.txt").write_text("text")
    assert dropped_mentions(f"'{inside}'", root) == '@"ui shot.png" '
    assert dropped_mentions(str(outside).replace(" ", "\\ "), root) == f'@"{outside}" '
    assert dropped_mentions(f"file://{str(outside).replace(' ', '%20')}", root) == f'@"{outside}" '
    assert dropped_mentions("notes.txt", root) is None  # not an image: pasted as it is
    assert dropped_mentions("look at this", root) is None
    assert dropped_mentions(f"'{inside}' notes.txt", root) is None


def _start(tmp_path: Path, server: FakeModelServer, extra_env: dict[str, str] | None = None) -> Any:
    project = tmp_path / "project"
    project.mkdir()
    env = agent_env(tmp_path / "home", server)
    env["TERM"] = "xterm-256color"
    env.update(extra_env or {})
    child = spawn_repl(project, env)
    expect(child, "auto-compact at ")
    return child


def _finish(child: Any) -> None:
    expect(child, "I see a picture")
    child.send("/exit\r")
    child.expect(pexpect.EOF)


@pytest.mark.e2e
def test_a_file_dragged_onto_the_terminal_is_attached(tmp_path: Path, fake_server: FakeModelServer) -> None:
    desktop = tmp_path / "Desktop"
    desktop.mkdir()
    shot = _png(desktop / "Screen Shot.png", 300, 200)
    child = _start(tmp_path, fake_server)
    try:
        child.send(f"{PASTE_START}'{shot}'{PASTE_END}")  # what a terminal sends for a dropped file
        child.send("what is wrong here?\r")
        _finish(child)
    finally:
        child.close(force=True)
    ((width, height),) = [(s.width, s.height) for s in seen_images(fake_server.requests[-1].body)]
    assert (width, height) == (300, 200)


@pytest.mark.e2e
def test_a_line_that_is_only_an_image_path_attaches_it(tmp_path: Path, fake_server: FakeModelServer) -> None:
    shot = _png(tmp_path / "shot.png", 120, 80)
    child = _start(tmp_path, fake_server)
    try:
        child.send(f"{shot}\r")
        _finish(child)
    finally:
        child.close(force=True)
    assert [(s.width, s.height) for s in seen_images(fake_server.requests[-1].body)] == [(120, 80)]


@pytest.mark.e2e
def test_ctrl_v_pastes_the_clipboard_image(tmp_path: Path, fake_server: FakeModelServer) -> None:
    clip = _png(tmp_path / "clip.png", 64, 48)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    helper = bin_dir / "wl-paste"
    helper.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = "--list-types" ]; then echo image/png; echo text/plain; exit 0; fi\n'
        f"cat '{clip}'\n"
    )
    helper.chmod(helper.stat().st_mode | stat.S_IXUSR)
    import os

    env = {"PATH": f"{bin_dir}:{os.environ.get('PATH', '')}", "WAYLAND_DISPLAY": "wayland-test"}
    child = _start(tmp_path, fake_server, env)
    try:
        child.send("\x16")  # Ctrl+V
        child.send("describe it\r")
        _finish(child)
    finally:
        child.close(force=True)
    assert [(s.width, s.height) for s in seen_images(fake_server.requests[-1].body)] == [(64, 48)]


@pytest.mark.e2e
def test_ctrl_v_without_a_clipboard_helper_says_so_in_one_line(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    empty = tmp_path / "nobin"
    empty.mkdir()
    import sys

    env = {"PATH": f"{empty}:{Path(sys.executable).parent}", "WAYLAND_DISPLAY": "", "DISPLAY": ""}
    child = _start(tmp_path, fake_server, env)
    try:
        child.send("\x16")
        expect(child, "no clipboard helper for images here")
        child.send("/exit\r")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert fake_server.requests == []
