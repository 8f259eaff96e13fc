"""Images the user drops or pastes into the REPL's input line, turned into `@path` mentions.

    dropped_mentions(text, root) -> str | None   text that is nothing but paths of image files (as a
                                                 terminal pastes a file dragged onto it: quoted,
                                                 backslash-escaped or a file:// URI) as mentions
    clipboard_image(env) -> bytes | None | str   the clipboard's image through a helper (bytes), None
                                                 when it holds none, or a line saying why it cannot
                                                 be read here
    save_pasted(data) -> Path                    the pasted image in a private temporary folder

A terminal sends a program text only: dropping a file pastes its path, and Ctrl+V of an image
reaches the program as a bare Ctrl+V. So a pasted path of an image file is attached (bracketed
paste, or a line that is only such paths), and Ctrl+V asks the platform's clipboard helper for an
image: `wl-paste` (Wayland, wl-clipboard), `xclip` (X11), `pngpaste` (macOS). Where none is
installed, or over SSH where the clipboard is the other machine's, Ctrl+V says so in one line.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import unquote, urlparse

from agent_cli.agent.attachments import mention
from agent_cli.tools.images import MAX_FILE_BYTES, image_type

__all__ = ["clipboard_image", "dropped_mentions", "save_pasted"]

_HELPERS: tuple[tuple[str, list[str], list[str]], ...] = (
    # (program, command listing the clipboard's types, command writing its PNG to stdout)
    ("wl-paste", ["wl-paste", "--list-types"], ["wl-paste", "--no-newline", "--type", "image/png"]),
    ("xclip", ["xclip", "-selection", "clipboard", "-t", "TARGETS", "-o"],
     ["xclip", "-selection", "clipboard", "-t", "image/png", "-o"]),
    ("pngpaste", [], ["pngpaste", "-"]),
)  # fmt: skip
_TIMEOUT = 5.0


def _is_image(file: Path) -> bool:
    try:
        if not file.is_file():
            return False
        with file.open("rb") as f:
            return image_type(f.read(16)) is not None
    except OSError:
        return False


def dropped_mentions(text: str, root: Path) -> str | None:
    """`text` as `@path` mentions when every word of it is the path of an image file, else None."""
    if not text.strip() or "\n" in text.strip() or len(text) > 4096:
        return None
    try:
        words = shlex.split(text.strip())
    except ValueError:
        return None
    found: list[str] = []
    for word in words:
        path = unquote(urlparse(word).path) if word.startswith("file://") else word
        file = Path(path).expanduser()
        file = file if file.is_absolute() else root / file
        if not _is_image(file):
            return None
        try:
            shown = file.resolve().relative_to(root.resolve()).as_posix()
        except (ValueError, OSError):
            shown = str(file)
        found.append(mention(shown))
    return " ".join(found) + " " if found else None


def clipboard_image(env: Mapping[str, str]) -> bytes | str | None:
    """The clipboard's image (PNG bytes), None when it holds no image, or why it cannot be read."""
    for program, types, command in _HELPERS:
        if shutil.which(program, path=env.get("PATH")) is None:
            continue
        if program == "wl-paste" and not env.get("WAYLAND_DISPLAY"):
            continue
        if program == "xclip" and not env.get("DISPLAY"):
            continue
        try:
            if types:
                listed = subprocess.run(types, capture_output=True, timeout=_TIMEOUT, env=dict(env))
                if b"image/png" not in listed.stdout:
                    return None
            got = subprocess.run(command, capture_output=True, timeout=_TIMEOUT, env=dict(env))
        except (OSError, subprocess.TimeoutExpired):
            return f"{program} did not answer: the clipboard's image could not be read"
        data = got.stdout[: MAX_FILE_BYTES + 1]
        return data if got.returncode == 0 and image_type(data[:16]) is not None else None
    return (
        "no clipboard helper for images here (install wl-clipboard or xclip; pngpaste on macOS); "
        "drag the image file onto the terminal or type @path instead"
    )


def save_pasted(data: bytes) -> Path:
    """`data` as a PNG file only this user may read, in a folder of its own under the temp dir."""
    folder = Path(tempfile.mkdtemp(prefix="agent-paste-"))
    path = folder / "clipboard.png"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    return path
