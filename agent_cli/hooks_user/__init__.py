"""The user's hooks: their own commands, run on the agent's events (Claude Code's conventions).

    config.py      `[[hooks.EVENT]]` tables -> `HookSpec`s (validated; a bad one is a ConfigError)
    trust.py       which of a project's own hooks the user approved (asked once, in the REPL)
    process.py     one command run: JSON on stdin, its own process group, a timeout, capped output
    outcome.py     what a run means: go on, block (with the reason), or a warning (pure)
    user_hooks.py  `UserHooks`, the `agent.hooks.Hooks` that runs them at each point
    claude_hooks.py  the hooks of Claude Code's settings files: specs of their own dialect, told
                   Claude Code's stdin (its tool names and input fields)

They are a second consumer of the loop's hook surface, beside the panels that render events.
"""
