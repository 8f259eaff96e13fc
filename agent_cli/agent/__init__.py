"""The agent that runs the values in `agent_cli.core`: the loop and its seams, the tool runner, the
approvals (and the shell parsing and program lists they rest on), the summary call."""
