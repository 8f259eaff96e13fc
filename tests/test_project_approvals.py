"""The per-user store of what a project's own files may run, and the raw config tables."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent_cli.config.load import Flags, load_settings
from agent_cli.config.raw_tables import tables_named
from agent_cli.core.errors import ConfigError
from agent_cli.store.project_approvals import ProjectApprovals


def test_an_approval_holds_for_the_exact_definition_only(tmp_path: Path) -> None:
    store = ProjectApprovals(tmp_path / "state" / "approvals.json", tmp_path / "project")
    server = {"command": "python3", "args": ["server.py"]}
    assert not store.approved("mcp", "notes", server)
    store.approve("mcp", "notes", server)
    assert store.approved("mcp", "notes", dict(reversed(server.items())))  # key order is not a change
    assert not store.approved("mcp", "notes", {**server, "args": ["evil.py"]})
    assert not store.approved("hook", "notes", server)
    other = ProjectApprovals(store.path, tmp_path / "elsewhere")
    assert not other.approved("mcp", "notes", server)
    assert os.stat(store.path).st_mode & 0o777 == 0o600
    store.revoke("mcp", "notes")
    assert not store.approved("mcp", "notes", server)


def test_an_unreadable_store_approves_nothing_and_is_rewritten_whole(tmp_path: Path) -> None:
    path = tmp_path / "approvals.json"
    path.write_text("{not json")
    store = ProjectApprovals(path, tmp_path)
    assert not store.approved("mcp", "x", {})
    store.approve("mcp", "x", {})
    assert store.approved("mcp", "x", {})
    assert [p.name for p in tmp_path.iterdir()] == ["approvals.json"]  # no temporary file left


def test_raw_tables_reach_the_settings_with_their_origin(tmp_path: Path) -> None:
    user = tmp_path / "user.toml"
    user.write_text('[context]\ntrigger_ratio = 0.7\n\n[mcp.servers.notes]\ncommand = "python3"\n')
    project = tmp_path / "proj"
    (project / ".agent").mkdir(parents=True)
    (project / ".agent" / "config.toml").write_text('[[hooks.Stop]]\ncommand = "true"\n')
    env = {"XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    (tmp_path / "cfg" / "agent-cli").mkdir(parents=True)
    (tmp_path / "cfg" / "agent-cli" / "config.toml").write_text(user.read_text())
    settings = load_settings(config_path=None, env=env, flags=Flags(), cwd=project)
    (mcp,) = tables_named(settings.tables, "mcp")
    assert mcp.body == {"servers": {"notes": {"command": "python3"}}} and not mcp.project
    assert mcp.where("servers.notes.command").endswith("config.toml:5")
    (hooks,) = tables_named(settings.tables, "hooks")
    assert hooks.project and hooks.body == {"Stop": [{"command": "true"}]}
    assert settings.context.trigger_ratio == 0.7


def test_a_raw_section_that_is_not_a_table_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text("mcp = 3\n")
    with pytest.raises(ConfigError, match=r"c.toml:1: mcp must be a table"):
        load_settings(config_path=path, env={}, flags=Flags(), cwd=tmp_path)
