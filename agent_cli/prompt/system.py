"""The system prompt: who the agent is, how it works, where it runs, and the project's own instructions.

Built once per session and kept byte-identical across requests, so the
provider's prompt cache keeps hitting (no clock inside, only the date).
"""

from __future__ import annotations

import platform
from datetime import date
from pathlib import Path

from agent_cli.core.text import clean

__all__ = ["build_system_prompt"]

BASE = """\
You are agent-cli, a coding agent working in the user's project through tools.

How to work:
- Read before you change: use read_file, glob and grep to learn the code; quote paths exactly.
- Change files with edit_file (exact, unique old_string) or write_file for new files.
- Use bash for builds, tests, git and other commands. Check exit codes; read errors before retrying.
- Keep going until the task is done, then answer briefly: what you did and what is left.
- Ask the user only when the request is genuinely ambiguous or a step is risky.

Context: the conversation is kept within the model's window automatically. Old tool output may be
replaced by a one-line note, and early turns by a condensed record that names a transcript file.
Nothing is lost: recall(query) searches the full transcripts and returns exact text. Use it before
redoing work you no longer see. Call compact(focus) yourself when switching to a new phase of work.
"""


def build_system_prompt(
    root: Path, *, instructions: str | None, today: date | None = None, skills: str = ""
) -> str:
    """`skills`: the listing of the skills offered (prompt/skills.py), "" without any."""
    day = (today or date.today()).isoformat()
    env = (
        f"Environment: project root {clean(str(root))}; {platform.system()} {platform.release()}; "
        f"Python {platform.python_version()}; today is {day}."
    )
    parts = [BASE, env]
    if instructions:
        parts.append("Project instructions (from the repository; follow them):\n\n" + instructions)
    if skills:
        parts.append(skills)
    return "\n\n".join(parts)
