"""Real hook commands for the hook tests: a script that records its stdin and answers as told."""

from __future__ import annotations

import json
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_cli.hooks_user.config import HookEventName, HookSpec

# argv: LOG [STDOUT [STDERR [EXIT]]]: appends its stdin's JSON object to LOG as one line, then
# prints STDOUT and STDERR and exits with EXIT.
RECORDER = """\
import json, sys
data = json.load(sys.stdin)
with open(sys.argv[1], "a", encoding="utf-8") as out:
    out.write(json.dumps(data, ensure_ascii=False) + "\\n")
args = sys.argv[2:] + ["", "", "0"][len(sys.argv) - 2:]
sys.stdout.write(args[0])
sys.stderr.write(args[1])
sys.exit(int(args[2]))
"""


@dataclass(frozen=True)
class Place:
    id: str
    transcript_path: Path


class Recorder:
    """Hook commands that record what they were sent in one file, in order."""

    def __init__(self, folder: Path) -> None:
        self.script = folder / "recorder.py"
        self.script.write_text(RECORDER)
        self.log = folder / "hooks.jsonl"

    def command(self, stdout: str = "", stderr: str = "", code: int = 0) -> str:
        return shlex.join([sys.executable, str(self.script), str(self.log), stdout, stderr, str(code)])

    def spec(
        self, event: HookEventName, stdout: str = "", stderr: str = "", code: int = 0, matcher: str = ""
    ) -> HookSpec:
        return HookSpec(event, self.command(stdout, stderr, code), matcher, timeout=30)

    def seen(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text(encoding="utf-8").splitlines()]
