"""A real terminal for tests: a program in tmux on a private socket, and the screen as a person sees it.

    with Screen(cmd, cwd=..., env=..., width=80) as screen:
        screen.wait_for("auto-compact at")
        screen.send("hello", "Enter")
        text = screen.text()       # the rendered screen (and its scrollback), not the bytes sent

tmux runs on its own socket (`tmux -L NAME`) with an empty config, so a test never touches another
server's sessions or options; the pane stays after the program exits, so its last screen can be read.
What tmux shows is what a terminal shows: an escape sequence that erases a line and returns the
carriage is obeyed, so a spoof that works on a person works here too.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType

__all__ = ["Screen", "have_tmux", "python_path_env"]


def have_tmux() -> bool:
    return shutil.which("tmux") is not None


class Screen:
    def __init__(
        self,
        cmd: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        width: int = 120,
        height: int = 40,
    ) -> None:
        self.socket = f"agent-test-{uuid.uuid4().hex[:10]}"
        self.cmd = list(cmd)
        self.cwd = cwd
        self.env = dict(env)
        self.width, self.height = width, height
        self._conf = cwd.parent / f".{self.socket}.conf"

    def __enter__(self) -> Screen:
        # set-clipboard on: an OSC 52 that reaches the terminal lands in a tmux buffer (see `buffers`).
        self._conf.write_text(
            "set -g remain-on-exit on\nset -g history-limit 5000\nset -g status off\n"
            "set -g set-clipboard on\n"
        )
        # `env -i`: the program sees exactly this environment, not the tmux server's.
        env = [f"{k}={v}" for k, v in self.env.items()]
        self._tmux(
            "-f",
            str(self._conf),
            "new-session",
            "-d",
            "-s",
            "t",
            "-x",
            str(self.width),
            "-y",
            str(self.height),
            "-c",
            str(self.cwd),
            "--",
            "env",
            "-i",
            *env,
            *self.cmd,
        )
        return self

    def __exit__(self, *exc: tuple[type[BaseException], BaseException, TracebackType] | object) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, check=False)
        self._conf.unlink(missing_ok=True)

    def _tmux(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-L", self.socket, *args], capture_output=True, text=True, check=True, timeout=10
        )
        return done.stdout

    def send(self, *keys: str) -> None:
        """Keys as tmux names them (`Enter`, `C-c`) or literal text (sent with -l when not a key name)."""
        for key in keys:
            if key in ("Enter", "C-c", "C-d", "Escape", "BSpace") or key.startswith("C-"):
                self._tmux("send-keys", "-t", "t", key)
            else:
                self._tmux("send-keys", "-t", "t", "-l", key)

    def text(self) -> str:
        """The screen and its scrollback as shown, one line per row, trailing blanks removed."""
        shown = self._tmux("capture-pane", "-p", "-J", "-t", "t", "-S", "-5000")
        lines = [line.rstrip() for line in shown.split("\n") if not line.startswith("Pane is dead")]
        return "\n".join(lines).rstrip("\n")

    def raw_rows(self) -> list[str]:
        """The rows as laid out (no joining of wrapped lines)."""
        return self._tmux("capture-pane", "-p", "-t", "t", "-S", "-5000").rstrip("\n").split("\n")

    def title(self) -> str:
        """The pane's title: what an OSC 0 or 2 that reached the terminal set."""
        return self._tmux("display-message", "-p", "-t", "t", "#{pane_title}").strip()

    def buffers(self) -> list[str]:
        """tmux's paste buffers: an OSC 52 clipboard write that reached the terminal makes one."""
        listed = subprocess.run(
            ["tmux", "-L", self.socket, "list-buffers", "-F", "#{buffer_sample}"],
            capture_output=True,
            text=True,
            check=False,
            timeout=10,
        )
        return [line for line in listed.stdout.splitlines() if line]

    def exited(self) -> bool:
        return self._tmux("display-message", "-p", "-t", "t", "#{pane_dead}").strip() == "1"

    def exit_status(self, timeout: float = 30.0) -> int | None:
        """The exit code of the pane's program; None if it was killed by a signal or still runs.
        tmux may show a pane dead a moment before it has the status (seen under load): wait for it."""
        deadline = time.monotonic() + timeout
        while True:
            dead, _, status = self._tmux(
                "display-message", "-p", "-t", "t", "#{pane_dead}|#{pane_dead_signal}|#{pane_dead_status}"
            ).strip().partition("|")
            signal_number, _, status = status.partition("|")
            if status.lstrip("-").isdigit():
                return int(status)
            if dead != "1" or signal_number or time.monotonic() >= deadline:
                return None
            time.sleep(0.05)

    def wait_for(self, needle: str, timeout: float = 90.0) -> bool:
        """Whether `needle` shows on the screen within `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if needle in self.text():
                return True
            if self.exited():
                return needle in self.text()
            time.sleep(0.1)
        return False

    def wait_exit(self, timeout: float = 90.0) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.exited():
                return True
            time.sleep(0.1)
        return False


def python_path_env(env: Mapping[str, str]) -> dict[str, str]:
    """`env` with the PATH, PYTHONPATH and TERM a program in the pane needs."""
    out = dict(env)
    out.setdefault("PATH", os.environ.get("PATH", "/usr/bin:/bin"))
    if "PYTHONPATH" in os.environ:
        out.setdefault("PYTHONPATH", os.environ["PYTHONPATH"])
    out.setdefault("TERM", "xterm-256color")
    return out
