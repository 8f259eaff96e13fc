"""`python -m agent_cli` runs the `agent` command."""

from agent_cli.cli import main

main()
