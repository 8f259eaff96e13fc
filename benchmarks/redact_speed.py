"""How fast the redactor passes text that holds no secret (every log record and tool result goes
through it), and text with a few secrets in it.

Builds about 4 MB of ordinary text (Python source from the standard library, a JSON-like log, a
shell session's output), then times `Redactor.redact` on each, best of N runs, with the three
configured keys a session usually has. Prints MB/s per kind and the time for 1 MB.

    python benchmarks/redact_speed.py [-n 5]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from agent_cli.store.redact import Redactor


def corpora() -> dict[str, str]:
    stdlib = Path(json.__file__).resolve().parent.parent
    source = ""
    for path in sorted(stdlib.glob("*.py")):
        source += path.read_text(encoding="utf-8", errors="replace")
        if len(source) > 2_000_000:
            break
    records = "".join(
        json.dumps(
            {
                "rid": f"r_{i:08x}",
                "ts": "2026-12-01T10:00:00.000+00:00",
                "kind": "message",
                "message": {
                    "role": "user",
                    "content": [
                        {
                            "type": "text",
                            "text": f"line {i}: fix the "
                            "tests in src/app/handlers.py and run pytest -q http://localhost:8000/x",
                        }
                    ],
                },
            }
        )
        + "\n"
        for i in range(8000)
    )
    shell = "".join(
        f"-rw-r--r-- 1 user staff {i * 37 % 99991:>6} Dec  1 10:{i % 60:02d} file_{i}.txt\n"
        f"PATH=/usr/local/bin:/usr/bin:/bin HOME=/home/user TERM=xterm-256color id={i:032x}\n"
        for i in range(8000)
    )
    return {"python source": source, "jsonl log": records, "shell output": shell}


def best(redactor: Redactor, text: str, runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        redactor.redact(text)
        times.append(time.perf_counter() - started)
    return min(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=5)
    args = parser.parse_args(argv)
    keys = ["sk-ant-api03-" + "Q7x" * 30 + "AA", "sk-proj-" + "abc123" * 20, "local-db-password-123"]
    started = time.perf_counter()
    redactor = Redactor(keys)
    print(f"Redactor(3 keys) built in {1000 * (time.perf_counter() - started):.2f} ms")
    for name, text in corpora().items():
        seconds = best(redactor, text, args.n)
        mb = len(text) / 1e6
        print(
            f"{name:14} {mb:5.2f} MB  {seconds * 1000:7.1f} ms  {mb / seconds:7.1f} MB/s  "
            f"({seconds / mb * 1000:.1f} ms per MB)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
