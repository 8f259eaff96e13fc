"""The OS sandbox every command the agent runs for the model (or a project) may be started in.

policy.py (what a command may reach: `SandboxPolicy`, the hidden paths, the environment it gets),
bwrap.py (that policy as a bubblewrap command line, pure), launch.py (the disk looked at, the command
made), probe.py (whether bubblewrap works here, once, with the reason), seatbelt.py (the macOS profile,
as text). It imports only `core/`; the tools, hooks and MCP servers that spawn call it.
"""
