"""The REPL's input history never stores a key: what is typed or pasted is written redacted."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_cli.store.redact import Redactor
from agent_cli.ui.prompt_input import input_history

KEY = "sk-ant-api03-HISTORYcanary0123456789abcdefghijkl"
SHAPED = "ghp_" + "a1B2c3D4e5" * 4  # a GitHub token shape, configured nowhere


def test_a_pasted_key_is_not_written_to_the_history_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    history = input_history(Redactor([KEY]).redact)
    history.append_string(f"here is my key {KEY}, set it up")
    history.append_string(f"and the token\n{SHAPED}\nfor CI")
    history.append_string("an ordinary prompt")
    stored = (tmp_path / "state" / "agent-cli" / "history").read_text()
    assert KEY not in stored and KEY[:16] not in stored and SHAPED not in stored
    assert "here is my key [REDACTED], set it up" in stored and "an ordinary prompt" in stored
    # This session's own recall still has what was typed; a later session reads the file.
    assert list(history.get_strings())[-3] == f"here is my key {KEY}, set it up"
    later = list(input_history(Redactor([KEY]).redact).load_history_strings())
    assert later[0] == "an ordinary prompt" and all(KEY not in s for s in later)
