"""agent-cli: a terminal coding agent whose conversations never die of a full context window."""

__version__ = "0.1.0"
