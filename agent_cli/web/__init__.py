"""The web as a tool: fetching a page without letting it reach the user's network (hosts.py),
the bytes over HTTP within limits (fetch.py), and its text as Markdown (page_text.py)."""
