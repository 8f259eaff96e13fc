"""The `agent` command: parse flags, load settings, wire the parts, run headless or the REPL.

This module parses; `wiring.py` builds the session from the settings. This is
the only module importing typer. `agent --version` (and the bare `agent` that
starts the REPL) answer before typer loads, so they cost little more than
starting Python.
"""

import sys
from pathlib import Path
from typing import Annotated, Any

__all__ = ["main"]


def main() -> None:
    argv = sys.argv[1:]
    if argv in (["--version"], ["-V"]):
        from agent_cli import __version__

        print(f"agent-cli {__version__}")
        return
    if not argv:  # the REPL: skip typer (about 100 ms) so the prompt appears sooner
        from agent_cli.wiring import CliArgs, run_cli

        sys.exit(run_cli(CliArgs()))
    app = _build_app()
    app(prog_name="agent")


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
        output_format: Annotated[
            str, typer.Option("--output-format", help="Headless output: text, json or stream-json.")
        ] = "text",
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
        from agent_cli.wiring import CliArgs, run_cli

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
            )
        )
        raise typer.Exit(code)

    @transcripts.command("list")
    def transcripts_list() -> None:
        """List this project's sessions, newest first."""
        from agent_cli.wiring import transcripts_command

        raise typer.Exit(transcripts_command("list", None))

    @transcripts.command("show")
    def transcripts_show(
        session_id: Annotated[str, typer.Argument(help="Session id or unique prefix.")],
    ) -> None:
        """Show one session's conversation."""
        from agent_cli.wiring import transcripts_command

        raise typer.Exit(transcripts_command("show", session_id))

    @transcripts.command("search")
    def transcripts_search(
        text: Annotated[str, typer.Argument(help="Text to find (literal, any case).")],
    ) -> None:
        """Search every session's transcripts in this project."""
        from agent_cli.wiring import transcripts_command

        raise typer.Exit(transcripts_command("search", text))

    return app


if __name__ == "__main__":
    main()
