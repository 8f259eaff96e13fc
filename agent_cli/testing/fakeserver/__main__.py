"""The fake as a standalone process, for terminal tests: `python -m agent_cli.testing.fakeserver --port 8765`.

Run from the repository root. It prints the URL it listens on, then serves until interrupted.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

from .script import Reply, load_script
from .server import FakeModelServer

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m agent_cli.testing.fakeserver",
        description="Fake Anthropic + OpenAI model server for tests.",
    )
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--script", help="JSON list of replies/faults, answered in order")
    parser.add_argument("--echo", action="store_true", help="answer 'echo: <last user text>' when unscripted")
    parser.add_argument("--reply", help="fixed answer when unscripted")
    parser.add_argument("--context-window", type=int, default=None)
    parser.add_argument(
        "--overflow-in-stream",
        action="store_true",
        help="Responses API: overflow as response.failed in a stream",
    )
    args = parser.parse_args(argv)
    server = FakeModelServer(
        port=args.port,
        context_window=args.context_window,
        overflow_in_stream=args.overflow_in_stream,
        echo=args.echo,
        default=Reply(args.reply) if args.reply is not None else None,
    )
    if args.script:
        server.queue(*load_script(args.script))
    server.start()
    print(f"fakeserver listening on {server.url}", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
