"""The headless run (`agent -p`, a piped prompt, `--goal`): one task driven on an open session.

The MCP servers are waited for (silently) before the first request, the session's start-up
warnings and its SessionStart hooks' output lead the events, and `ui/headless.py` prints them in
the chosen output format (text | json | stream-json); the SessionEnd hooks' output goes to stderr
after the result. The exit code: the render's (0, or 1 for an error), 0 / GOAL_NOT_MET for a
goal met or not, 128 + N after SIGTERM or SIGHUP, 130 after Ctrl-C; a bug is one line, its
traceback in the crash log. The session is closed whatever happens.
"""

from __future__ import annotations

import contextlib
import sys
from typing import TYPE_CHECKING

from agent_cli.cli_args import GOAL_NOT_MET
from agent_cli.subcommands import fail

if TYPE_CHECKING:
    from collections.abc import Iterator

    from agent_cli.core.events import Event
    from agent_cli.core.goals import GoalSpec
    from agent_cli.session import AgentSession

__all__ = ["run_headless"]


def run_headless(session: AgentSession, prompt: str | None, output_format: str, goal: GoalSpec | None) -> int:
    import itertools

    from agent_cli.core.errors import AgentError
    from agent_cli.store.crash_log import internal_error
    from agent_cli.ui import ending
    from agent_cli.ui.headless import OutputFormat, render_aside, render_headless
    from agent_cli.ui.headless_report import HeadlessReport, init_event

    fmt: OutputFormat = output_format  # type: ignore[assignment]  # checked by run_cli
    ending.install()
    try:
        # The MCP servers connect in the background: wait for them (silently) before the first request,
        # so the tools the run announces are all there.
        joined = list(session.connect(say_waiting=False))
        events = itertools.chain(session.warnings, joined, session.begin(), _task(session, prompt, goal))
        init = init_event(
            session_id=session.id,
            model=session.model,
            cwd=session.project_root,
            tools=session.tools.names(),
            mode=session.mode.mode,
        )
        report = HeadlessReport(lambda: session.usage_log)
        code = render_headless(events, fmt, tools=session.tools, init=init, report=report)
        render_aside(session.end())  # after the result: on stderr, so stream-json still ends with it
        if goal is not None and session.goal is not None and code in (0, 1):
            code = 0 if session.goal.status == "met" else (code or GOAL_NOT_MET)
        return _ended_by_signal() or code
    except KeyboardInterrupt:
        return _ended_by_signal() or 130
    except BrokenPipeError:  # `agent -p ... | head`: the reader left; nothing more to say
        sys.stderr.close()
        return 1
    except AgentError as exc:
        return fail(str(exc), 1)
    except MemoryError:  # said by main(), not logged as a bug
        raise
    except Exception as exc:  # a bug: one line here, the traceback in the crash log
        return fail(internal_error(exc), 1)
    finally:
        session.close()


def _task(session: AgentSession, prompt: str | None, goal: GoalSpec | None) -> Iterator[Event]:
    """The headless task: the prompt's turn, or with `--goal` the goal's rounds (started by the
    prompt when there is one, else by the goal's note, as `/goal TEXT` starts)."""
    if goal is None:
        assert prompt is not None
        yield from session.run(prompt)
    elif prompt is None:
        yield from session.pursue(goal)
    else:
        session.set_goal(goal)
        yield from session.run(prompt)


def _ended_by_signal() -> int | None:
    """128 + the signal's number after a SIGTERM or SIGHUP (said once on stderr), else None."""
    from agent_cli.ui import ending

    sig = ending.received()
    if sig is None:
        return None
    with contextlib.suppress(OSError, ValueError):  # a closed terminal cannot be told
        print(f"agent: stopped by {ending.stopped_by()}; its running command was killed", file=sys.stderr)
    return 128 + sig
