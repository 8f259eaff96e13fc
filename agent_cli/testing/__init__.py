"""Test doubles shipped with the package, for its tests and benchmarks; the product never imports them.

- `fakeserver`: a scriptable fake of the Anthropic Messages API, OpenAI Chat Completions and the
  OpenAI Responses API over real HTTP on 127.0.0.1, for the provider edge (the real SDKs talk to it).
- `scripted`: a scripted provider, a pass-through context policy and an in-memory session log, for
  the loop and the layers above it without HTTP.
- `summary_shape`: how a request is recognised as a summary request, by its structure only.

Shipped in the package (not under `tests/`) so the benchmarks need nothing from the test tree.
Nothing here is imported by `agent_cli` itself; `tests/test_architecture.py` holds that line.
"""
