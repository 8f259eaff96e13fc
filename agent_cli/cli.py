"""The `agent` command: flags and dispatch (the headless run: headless_run.py; `agent transcripts` and
`mcp`: subcommands.py).

    agent                 the REPL (ui/repl.py) on a new session
    agent -p PROMPT       one task headless (ui/headless.py prints its events); `/NAME args`
                          names a Markdown command, expanded as in the REPL
    agent -p --goal 'TEXT [--check CMD] [--budget USD]'   headless rounds until the goal is met
                          (exit 0), or GOAL_NOT_MET (3) when its budget is spent; with -p PROMPT,
                          the prompt starts the first round
    echo PROMPT | agent   the same, from stdin
    cat F | agent -p P    the same, with what was piped in as context after the prompt
                          (ui/task_prompt.py: what a headless task is asked)
    agent transcripts ... browse this project's sessions
    agent mcp list        the configured MCP servers, their state and their tools

The only module importing typer. Settings are loaded here and the session is
built by `app.open_session` (headless_run.py drives a headless one). `agent --version`
(and the bare `agent` that starts the REPL) answer before typer loads, so they cost little more than
starting Python; everything else is imported when it is needed. Errors a user
can fix (config, missing key, unknown session) are one line on stderr with
exit code 2, never a traceback.
"""

# No `from __future__ import annotations`: typer reads the annotations of the commands below at run time.
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any

from agent_cli.cli_args import OUTPUT_FORMATS, CliArgs, print_flag_before_goal, simple_headless
from agent_cli.subcommands import fail, mcp_command, transcripts_command

__all__ = ["CliArgs", "main", "mcp_command", "run_cli", "transcripts_command"]

def main() -> None:
    from agent_cli.address_space import fit_address_space, out_of_memory

    refused = fit_address_space()  # under `ulimit -v`: reserve less, or say it cannot fit
    if refused is not None:
        sys.exit(fail(refused, 1))
    try:
        _main()
    except MemoryError:  # not a bug: one line naming the limit, no traceback
        fail(out_of_memory(), 1)
        sys.stderr.flush()
        os._exit(1)  # no teardown: with no memory left it would print a screen of "Exception ignored"


def _main() -> None:
    from agent_cli.ui import glyphs

    glyphs.install()  # an ASCII or Latin-1 stdout: replace what it cannot show, never fail on it
    argv = sys.argv[1:]
    if argv in (["--version"], ["-V"]):
        from agent_cli import __version__

        print(f"agent-cli {__version__}")
        return
    if not argv:  # the REPL: skip typer (about 100 ms) so the prompt appears sooner
        if sys.stdin.isatty() and sys.stdout.isatty():
            from agent_cli.ui import typeahead

            typeahead.hold(sys.stdin.fileno())  # keys typed from now on wait for the prompt, unechoed
        sys.exit(run_cli(CliArgs()))
    if "--goal" in argv or any(a.startswith("--goal=") for a in argv):
        sys.argv[1:] = argv = print_flag_before_goal(argv)
    simple = simple_headless(argv)
    if simple is not None:  # `agent -p "say hi"` and the like: skip typer too
        sys.exit(run_cli(simple))
    app = _build_app()
    try:
        code = app(prog_name="agent", standalone_mode=False)
    except Exception as exc:
        if any(cls.__name__ == "Abort" for cls in type(exc).__mro__):  # Ctrl-C while typer was parsing
            sys.exit(130)
        said = _usage_error(exc)
        if said is None:
            raise
        sys.exit(fail(said))
    sys.exit(code if isinstance(code, int) else 0)


def _usage_error(exc: Exception) -> str | None:
    """A flag that does not exist or a value of the wrong kind, as one line; None for anything else.

    Typer raises click's UsageError, from click or from the copy newer typers carry, so it is
    known by its class name rather than imported."""
    names = {cls.__name__ for cls in type(exc).__mro__}
    if "UsageError" not in names or not hasattr(exc, "format_message"):
        return None
    what = " ".join(str(exc.format_message()).split()).rstrip(".") or "bad usage"
    return f"{what[0].lower()}{what[1:]} (agent -h lists the flags)"


def _build_app() -> Any:  # a typer.Typer; typer is imported lazily to keep --version fast
    import typer

    app = typer.Typer(
        add_completion=False,
        no_args_is_help=False,
        rich_markup_mode=None,
        pretty_exceptions_enable=False,
        context_settings={"help_option_names": ["-h", "--help"]},
        help="agent-cli: a terminal coding agent whose conversation never dies of a full context window.\n\n"
        "Run `agent` for the interactive REPL, or `agent -p PROMPT` for one task headless.",
    )
    transcripts = typer.Typer(
        help="Browse and search this project's session transcripts.", add_completion=False
    )
    app.add_typer(transcripts, name="transcripts")
    mcp = typer.Typer(help="The MCP servers this project's sessions start.", add_completion=False)
    app.add_typer(mcp, name="mcp")

    def version_callback(value: bool) -> None:
        if value:
            from agent_cli import __version__

            typer.echo(f"agent-cli {__version__}")
            raise typer.Exit()

    @app.callback(invoke_without_command=True)
    def run(
        ctx: typer.Context,
        prompt: Annotated[
            str | None, typer.Option("-p", "--print", help="Run one task headless and print the answer.")
        ] = None,
        provider: Annotated[str | None, typer.Option("--provider", help="anthropic or openai.")] = None,
        model: Annotated[
            str | None, typer.Option("--model", help="Model name (see the README's model table).")
        ] = None,
        context_window: Annotated[
            int | None, typer.Option("--context-window", help="Override the model's context window (tokens).")
        ] = None,
        config: Annotated[
            Path | None,
            typer.Option(
                "--config", help="Config file (TOML); without it the user config, then .agent/config.toml."
            ),
        ] = None,
        yes: Annotated[
            bool, typer.Option("--yes", "-y", help="Approve every tool call without asking.")
        ] = False,
        wire: Annotated[
            str | None,
            typer.Option(
                "--wire",
                help="OpenAI API to speak: responses or chat (default: responses on OpenAI's endpoint, "
                "chat with a base URL).",
            ),
        ] = None,
        effort: Annotated[
            str | None,
            typer.Option("--effort", help="How hard the model thinks: low, medium, high, xhigh or max."),
        ] = None,
        summary_model: Annotated[
            str | None,
            typer.Option(
                "--summary-model", help="Model that writes the context's summaries (default: --model)."
            ),
        ] = None,
        permission_mode: Annotated[
            str | None,
            typer.Option(
                "--permission-mode",
                help="Start in an approval mode: default, acceptEdits, plan (read-only tools only), "
                "auto (in the sandbox, what stays in the project runs unasked) or bypassPermissions "
                "(as --yes). Shift+Tab switches in the REPL.",
            ),
        ] = None,
        sandbox: Annotated[
            str | None,
            typer.Option(
                "--sandbox",
                help="What the model's commands may reach: workspace-write (the project; no network), "
                "read-only, or off. Default: workspace-write (where it cannot work here, every "
                "command is asked).",
            ),
        ] = None,
        output_format: Annotated[
            str, typer.Option("--output-format", help="Headless output: text, json or stream-json.")
        ] = "text",
        goal: Annotated[
            str | None,
            typer.Option(
                "--goal",
                help="Run headless until a goal is met: 'TEXT [--check COMMAND] [--budget USD]' (as /goal). "
                "Exit 0 when met, 3 when the budget is spent first.",
            ),
        ] = None,
        pin: Annotated[
            list[str] | None,
            typer.Option(
                "--pin", help="Pin an instruction every request carries word for word (repeatable)."
            ),
        ] = None,
        continue_: Annotated[
            bool, typer.Option("--continue", "-c", help="Continue the latest session in this directory.")
        ] = False,
        resume: Annotated[
            str | None,
            typer.Option("--resume", "-r", help="Resume the session with this id (or unique prefix)."),
        ] = None,
        version: Annotated[
            bool,
            typer.Option(
                "--version",
                "-V",
                callback=version_callback,
                is_eager=True,
                help="Print the version and exit.",
            ),
        ] = False,
    ) -> None:
        if ctx.invoked_subcommand is not None:
            return
        code = run_cli(
            CliArgs(
                prompt=prompt,
                provider=provider,
                model=model,
                context_window=context_window,
                config=config,
                yes=yes,
                output_format=output_format,
                continue_session=continue_,
                resume=resume,
                wire=wire,
                effort=effort,
                summary_model=summary_model,
                pins=tuple(pin or ()),
                permission_mode=permission_mode,
                sandbox=sandbox,
                goal=goal,
            )
        )
        raise typer.Exit(code)

    @transcripts.command("list")
    def transcripts_list() -> None:
        """List this project's sessions, newest first."""
        raise typer.Exit(transcripts_command("list", None))

    @transcripts.command("show")
    def transcripts_show(
        session_id: Annotated[str, typer.Argument(help="Session id or unique prefix.")],
    ) -> None:
        """Show one session's conversation."""
        raise typer.Exit(transcripts_command("show", session_id))

    @transcripts.command("search")
    def transcripts_search(
        text: Annotated[str, typer.Argument(help="Text to find (literal, any case).")],
    ) -> None:
        """Search every session's transcripts in this project."""
        raise typer.Exit(transcripts_command("search", text))

    @mcp.command("list")
    def mcp_list(
        config: Annotated[
            Path | None, typer.Option("--config", help="Config file (TOML), as for a session.")
        ] = None,
    ) -> None:
        """Start the configured MCP servers, list each with its state and tools, and stop them."""
        raise typer.Exit(mcp_command(config))

    return app


def run_cli(args: CliArgs, *, env: dict[str, str] | None = None, cwd: Path | None = None) -> int:
    """Run `agent` with these flags; the process exit code."""
    from agent_cli.app import LATEST, open_session
    from agent_cli.config.load import Flags, load_settings
    from agent_cli.core.errors import AgentError, ConfigError
    from agent_cli.core.text import clean, decode
    from agent_cli.ui.task_prompt import read_piped, task_prompt

    if args.output_format not in OUTPUT_FORMATS:
        return fail(
            f"--output-format must be one of {', '.join(OUTPUT_FORMATS)} (got {args.output_format!r})"
        )
    if args.continue_session and args.resume:
        return fail("use either --continue or --resume, not both")
    if args.resume is not None and not args.resume.strip():
        return fail("--resume needs a session id (or a unique prefix); `agent transcripts list` shows them")
    if args.prompt is not None:  # stray bytes on the command line arrive as lone surrogates
        args = replace(args, prompt=clean(args.prompt))
    args = replace(args, pins=tuple(clean(p) for p in args.pins))
    if any(not p.strip() for p in args.pins):
        return fail("--pin needs the instruction to pin: agent --pin 'never use tabs'")
    if args.prompt is not None and not args.prompt.strip():
        return fail("-p needs a prompt: agent -p 'what to do'")
    goal = None
    if args.goal is not None:
        from agent_cli.core.goals import GoalSpec, parse_goal

        try:
            parsed = parse_goal(clean(args.goal))
        except ValueError as exc:
            return fail(f"--goal: {exc}")
        if not isinstance(parsed, GoalSpec):
            return fail("--goal needs the goal: --goal 'make the tests pass --check \"pytest -q\"'")
        goal = parsed
    interactive = args.prompt is None and goal is None
    context = ""  # what was piped in next to -p
    if interactive and not sys.stdin.isatty():  # `echo "fix the tests" | agent`: one headless task
        piped = decode(sys.stdin.buffer.read()).strip()  # not sys.stdin.read(): odd bytes must not fail
        if not piped:
            return fail("stdin is empty: pipe a prompt in (echo 'task' | agent) or run agent in a terminal")
        args, interactive = replace(args, prompt=piped), False
    elif interactive and not sys.stdout.isatty():  # `agent > file`: nobody would see the prompt
        return fail("stdout is not a terminal; for output to a file or a pipe use agent -p PROMPT")
    elif args.prompt is not None:  # `cat log | agent -p "why does it fail?"`: the prompt, then the log
        context = read_piped()
    env = dict(os.environ) if env is None else env
    if args.prompt is not None:  # `/NAME args` names a Markdown command: its body, expanded
        try:
            args = replace(args, prompt=task_prompt(args.prompt, context, cwd or Path.cwd(), env))
        except ConfigError as exc:
            return fail(str(exc))
    flags = Flags(
        provider=args.provider,
        model=args.model,
        context_window=args.context_window,
        wire=args.wire,
        effort=args.effort,
        summary_model=args.summary_model,
        yes=args.yes,
        permission_mode=args.permission_mode,
        sandbox=args.sandbox,
    )
    resume = args.resume if args.resume else (LATEST if args.continue_session else None)
    try:
        settings = load_settings(config_path=args.config, env=env, flags=flags, cwd=cwd or Path.cwd())
        if interactive:
            from agent_cli.ui import typeahead
            from agent_cli.ui.repl import run_repl

            typeahead.hold(sys.stdin.fileno())  # (already, for a bare `agent`)
            pins = args.pins
            return run_repl(lambda ask: open_session(settings, env=env, resume=resume, ask=ask, pins=pins))
        session = open_session(settings, env=env, resume=resume, pins=args.pins)
    except ConfigError as exc:
        return fail(str(exc))
    except AgentError as exc:
        return fail(str(exc), 1)
    except OSError as exc:  # the project's .transcripts/ cannot be created or read
        return fail(f"cannot open the session log: {exc}", 1)
    from agent_cli.headless_run import run_headless

    return run_headless(session, args.prompt, args.output_format, goal)


if __name__ == "__main__":
    main()
