"""The todo list's placement, priced by the cache model (benchmarks/todo_placement.py): a note kept in
the history costs about its own tokens; the system prompt rewrites the cache at every change; a note
moved to every request's newest message misses the cache every time."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

from todo_placement import session_bill


def test_the_note_in_the_history_is_the_cheap_place_for_the_list() -> None:
    none, note, system, every = (session_bill(p) for p in ("none", "note", "system", "every"))
    assert note.usd < none.usd * 1.05  # about the list's own tokens
    assert system.usd > none.usd * 1.5  # five whole-cache rewrites
    assert every.usd > system.usd
