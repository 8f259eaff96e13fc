"""Files a cloned repository ships are read only if they are regular files inside it, and bounded.

`.agent/config.toml` as a FIFO, as a link to `/dev/zero` or to a file outside, and `AGENTS.md` as
a link to a secret outside; the user's own files (user config, `--config`) may be pipes or
`/dev/null`, but a FIFO nobody writes to must not hang start-up either.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from agent_cli.config.load import CONFIG_MAX_BYTES, Flags, load_settings
from agent_cli.core.errors import ConfigError
from agent_cli.prompt.instructions import load_project_instructions, read_project_instructions
from agent_cli.store.file_reads import UnreadableFile, read_project_file, read_user_file


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "proj" / ".agent").mkdir(parents=True)
    (tmp_path / "home").mkdir()
    return tmp_path / "proj"


def _load(project: Path, config_path: Path | None = None) -> object:
    env = {"HOME": str(project.parent / "home")}
    return load_settings(config_path=config_path, env=env, flags=Flags(), cwd=project)


def _error(project: Path, config_path: Path | None = None) -> str:
    start = time.monotonic()
    with pytest.raises(ConfigError) as info:
        _load(project, config_path)
    assert time.monotonic() - start < 30, "start-up waited on the file"  # before: for ever
    message = str(info.value)
    assert "\n" not in message and message.startswith("config error: ")
    return message


def test_a_project_config_that_is_a_fifo_is_refused_at_once(project: Path) -> None:
    os.mkfifo(project / ".agent" / "config.toml")
    message = _error(project)  # before: open() blocked for ever waiting for a writer
    assert "is a FIFO, not a regular file" in message


def test_a_project_config_linked_to_dev_zero_is_refused(project: Path) -> None:
    (project / ".agent" / "config.toml").symlink_to("/dev/zero")
    message = _error(project)  # before: read_bytes() ate memory until a MemoryError
    assert "leads outside the project (to /dev/zero)" in message


def test_a_project_config_linked_outside_is_refused(project: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.toml"
    outside.write_text('[provider]\nmodel = "claude-opus-4-1"\n')
    (project / ".agent" / "config.toml").symlink_to(outside)
    assert "leads outside the project" in _error(project)


def test_a_project_config_linked_inside_is_read(project: Path) -> None:
    (project / "shared.toml").write_text("[tools]\nbash_timeout = 7\n")
    (project / ".agent" / "config.toml").symlink_to(project / "shared.toml")
    assert _load(project).tools.bash_timeout == 7  # type: ignore[attr-defined]


def test_a_huge_config_is_refused_with_the_cap(project: Path) -> None:
    (project / ".agent" / "config.toml").write_text("# x\n" * (CONFIG_MAX_BYTES // 4 + 10))
    assert "is larger than 256 KiB" in _error(project)


def test_the_users_dev_zero_config_is_capped_not_eaten(project: Path) -> None:
    assert "is larger than 256 KiB" in _error(project, Path("/dev/zero"))


def test_the_users_dev_null_config_is_an_empty_config(project: Path) -> None:
    assert _load(project, Path("/dev/null")).tools.bash_timeout == 120.0  # type: ignore[attr-defined]


def test_the_users_fifo_config_without_a_writer_ends(project: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.toml"
    os.mkfifo(fifo)
    _load(project, fifo)  # no writer: reads as empty, does not block


def test_the_users_fifo_config_that_never_writes_times_out(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.toml"
    os.mkfifo(fifo)

    # A writer that says nothing, there before the read begins (Linux opens a FIFO for reading and
    # writing at once; a writer thread might not have opened it yet on a busy machine).
    silent_writer = os.open(fifo, os.O_RDWR)
    try:
        with pytest.raises(UnreadableFile, match=r"did not reach its end within 0\.5 s"):
            read_user_file(fifo, limit=1024, timeout=0.5)
    finally:
        os.close(silent_writer)


def test_the_users_pipe_config_is_read(tmp_path: Path) -> None:
    read, write = os.pipe()
    os.write(write, b"[tools]\nmax_iterations = 3\n")
    os.close(write)
    try:
        got = read_user_file(Path(f"/dev/fd/{read}"), limit=1024)
    finally:
        os.close(read)
    assert got.data == b"[tools]\nmax_iterations = 3\n" and not got.more


def test_read_project_file_states_the_kind(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    with pytest.raises(UnreadableFile, match="is a directory"):
        read_project_file(tmp_path, tmp_path / "d", limit=10)
    (tmp_path / "f").write_bytes(b"0123456789abc")
    got = read_project_file(tmp_path, tmp_path / "f", limit=10)
    assert got.data == b"0123456789" and got.more


# ---- AGENTS.md and CLAUDE.md ------------------------------------------------------------------


def test_agents_md_linked_to_a_secret_outside_is_not_sent(project: Path, tmp_path: Path) -> None:
    secret = tmp_path / "home" / "credentials"
    secret.write_text("[default]\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n")
    (project / "AGENTS.md").symlink_to(secret)
    (project / "CLAUDE.md").write_text("Run the tests.\n")
    found = read_project_instructions(project)
    assert found.text == "# CLAUDE.md\n\nRun the tests."  # before: the credentials were the first section
    assert len(found.notices) == 1
    assert found.notices[0].startswith("AGENTS.md was not read: it leads outside the project")


def test_agents_md_as_a_fifo_does_not_hang(project: Path) -> None:
    os.mkfifo(project / "AGENTS.md")
    found = read_project_instructions(project)
    assert found.text is None and "is a FIFO" in found.notices[0]


def test_agents_md_linked_inside_is_read(project: Path) -> None:
    (project / "docs").mkdir()
    (project / "docs" / "rules.md").write_text("Use ruff.\n")
    (project / "AGENTS.md").symlink_to("docs/rules.md")
    assert load_project_instructions(project) == "# AGENTS.md\n\nUse ruff."
