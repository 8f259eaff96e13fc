"""The values every layer shares: messages, events, the error tree, usage, the request and reply
shapes, and the text helpers that keep outside text off the terminal. It imports nothing else of
the package; the agent that runs these values is `agent_cli.agent`."""
