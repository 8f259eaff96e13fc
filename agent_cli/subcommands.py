"""`agent transcripts list | show ID | search TEXT` and `agent mcp list`: what they print, their exit codes.

Typer parses them in cli.py; each returns the exit code. Only the standard library is imported here
at start-up (this module is loaded with cli.py), the rest when a command runs.
"""

from __future__ import annotations

import sys
from pathlib import Path

__all__ = ["fail", "mcp_command", "transcripts_command"]


def fail(message: str, code: int = 2) -> int:
    """`message` said in one line on stderr; `code` to exit with (2: a usage or config error)."""
    from agent_cli.core.text import visible

    print(f"agent: {visible(message)}", file=sys.stderr)  # errors quote config files, paths, providers
    return code


def transcripts_command(action: str, arg: str | None, *, cwd: Path | None = None) -> int:
    """`agent transcripts list | show ID | search TEXT`."""
    from agent_cli.core.errors import ConfigError
    from agent_cli.core.text import visible
    from agent_cli.store.sessions import list_sessions, resolve_session_id
    from agent_cli.ui import transcript_views as view

    root = cwd or Path.cwd()
    try:
        if action == "list":
            sessions = list_sessions(root)
            if not sessions:
                return fail(f"no sessions in {root / '.transcripts'}", 1)
            print(view.format_list(sessions))
        elif action == "show":
            assert arg is not None
            print(view.format_show(root, resolve_session_id(root, arg)))
        else:
            assert arg is not None
            unreadable: list[str] = []
            hits = view.search(root, arg, unreadable=unreadable)
            if unreadable:
                more = f" and {len(unreadable) - 1} more" if len(unreadable) > 1 else ""
                skipped = visible(f"{unreadable[0]}{more}")
                print(f"agent: warning: skipped what cannot be read: {skipped}", file=sys.stderr)
            if not hits:
                return fail(f"no match for {visible(repr(arg))}", 1)
            print(view.format_search(hits))
    except ConfigError as exc:
        return fail(str(exc))
    except OSError as exc:  # .transcripts/ or a log owned by another user, or mode 000
        return fail(f"cannot read {exc.filename or 'the transcripts'}: {exc.strerror or exc}", 1)
    return 0


def mcp_command(config: Path | None, *, env: dict[str, str] | None = None, cwd: Path | None = None) -> int:
    """`agent mcp list`: the servers as a session here would start them (a project's server that is
    not approved is listed as awaiting approval, and not started)."""
    import os

    from agent_cli.config.load import Flags, load_settings
    from agent_cli.core.errors import ConfigError
    from agent_cli.core.text import visible
    from agent_cli.extensions import start_mcp_servers

    env = dict(os.environ) if env is None else env
    try:
        settings = load_settings(config_path=config, env=env, flags=Flags(), cwd=cwd or Path.cwd())
        servers, notes = start_mcp_servers(settings, env, None)
    except ConfigError as exc:
        return fail(str(exc))
    for note in notes:
        print(f"agent: warning: {visible(note)}", file=sys.stderr)
    if servers is None:
        print("no MCP servers configured ([mcp.servers.NAME] in the config, or the project's .mcp.json)")
        return 0
    try:
        print("\n".join(servers.report()))
    finally:
        servers.close()
    return 0
