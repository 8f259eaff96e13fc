"""The MCP client: the servers a session may start, their tools offered to the model.

    config.py   the `[mcp.servers.NAME]` tables and a project's `.mcp.json`, validated
    runtime.py  the clients' event loop on one background thread, one connection per server
    errlog.py   a stdio server's stderr: a bounded log per project in the state dir
    tools.py    a server's tool as one of the agent's tools (`mcp__<server>__<tool>`)
    servers.py  which servers start (a project's only once approved), their state, stopping them

Named `mcp_client`, not `mcp`, so it never shadows the `mcp` package it drives; that package is
imported only when a server is configured.
"""
