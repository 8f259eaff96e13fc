"""Frames' token counts kept between runs: `<state dir>/frame-counts.json`.

    FrameCounts(path).get(encoding, key) -> (system, tools) | None;  .put(encoding, key, counts)

A frame (the system prompt and the tools' definitions) is most of a first request and is the same
run after run; its raw count, kept here by encoding and content hash (`tokens.counter.frame_key`),
lets a short `agent -p` decide and believe its first usage report without loading a vocabulary.
The file is small (the last `KEEP` frames), private, written whole (temporary file, rename); one
that cannot be read or written is no error: the frame is counted as it would have been. A figure
that is not a pair of counts is ignored. `VERSION` changes when the way frames are counted does.
"""

from __future__ import annotations

import contextlib
import json
import threading
from pathlib import Path

from agent_cli.store.private_write import write_private

__all__ = ["KEEP", "VERSION", "FrameCounts"]

KEEP = 32
VERSION = 1
MAX_BYTES = 64 * 1024  # a file past this is not ours: ignored


class FrameCounts:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._entries: dict[str, list[int]] | None = None
        self._lock = threading.Lock()  # (the engine's summary call counts its frame in its own thread)

    def _load(self) -> dict[str, list[int]]:
        if self._entries is None:
            self._entries = {}
            with contextlib.suppress(OSError, ValueError):
                with open(self.path, "rb") as f:
                    data = json.loads(f.read(MAX_BYTES) or b"{}")
                if isinstance(data, dict) and data.get("version") == VERSION:
                    counts = data.get("frames")
                    if isinstance(counts, dict):
                        self._entries = {
                            k: v
                            for k, v in counts.items()
                            if isinstance(k, str)
                            and isinstance(v, list)
                            and len(v) == 2
                            and all(type(n) is int and 0 <= n < 10**9 for n in v)
                        }
        return self._entries

    def get(self, encoding: str, key: str) -> tuple[int, int] | None:
        with self._lock:
            found = self._load().get(f"{encoding}:{key}")
        return (found[0], found[1]) if found is not None else None

    def put(self, encoding: str, key: str, counts: tuple[int, int]) -> None:
        with self._lock:
            entries = self._load()
            name = f"{encoding}:{key}"
            entries.pop(name, None)
            entries[name] = [counts[0], counts[1]]  # the newest last: the oldest go first
            while len(entries) > KEEP:
                entries.pop(next(iter(entries)))
            data = json.dumps({"version": VERSION, "frames": entries}).encode()
        with contextlib.suppress(OSError):
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            write_private(self.path, data)
