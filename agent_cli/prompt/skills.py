"""Skills, as Claude Code reads them: `NAME/SKILL.md` folders, listed in the system prompt, loaded
by the model when it needs one (the `skill` tool) and kept in force from then on.

A *skill* is a folder holding `SKILL.md`: front matter (`---`, `name:`, `description:`, `---`, the
same reader as a command file's: `prompt.command_text`) and a Markdown *body*, the instructions.
The folders, in precedence order (the first to define a name has it; as in Claude Code, a
personal skill wins over a project's of the same name):

    ~/.claude/skills/NAME/SKILL.md     user (trusted: links followed)
    .claude/skills/NAME/SKILL.md       project (came with the repository: waits for approval)

A skill's `name` is its front matter's (else the folder's): lowercase letters, digits and hyphens,
at most 64 characters. Its `description` (at most 1024 characters) says what it does and when to
use it: the *listing* in the system prompt is the name and description of each, bounded in count
and size; the body stays on disk until the model loads it. A file that breaks a rule (no front
matter, no description, a bad name, not UTF-8, too large, a link out of the project, a FIFO) is
skipped and named in one *notice* line with the reason.

A skill *in use* (loaded once) is pinned: its body is carried in a section at the end of the
system prompt, after the user's pins (`in_use_section`), which no layer clears, condenses or drops,
and the session's log records it (a "skills" state record: `logged_skills`) so `--continue`
brings it back. Files are read as `AGENTS.md` is (`store.file_reads`): a project's only if it is a
regular file inside the project, at most `MAX_SKILL_BYTES`. Everything here is untrusted text: the
listing's descriptions are flattened to one line with control characters written out.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeAlias

from agent_cli.core.text import visible
from agent_cli.prompt.command_text import parse_command_text
from agent_cli.store.file_reads import UnreadableFile, describe_size, read_project_file, read_user_file
from agent_cli.store.log_records import LogRecord, StateRecord
from agent_cli.store.user_dirs import home_dir

__all__ = [
    "MAX_DESCRIPTION",
    "MAX_LISTED",
    "MAX_SKILL_BYTES",
    "TOPIC",
    "Skill",
    "SkillDir",
    "Skills",
    "SkillsInUse",
    "in_use_section",
    "listing",
    "logged_skills",
    "parse_skill",
    "read_skills",
    "skill_dirs",
]

Scope: TypeAlias = Literal["project", "user"]
MAX_SKILL_BYTES = 32 * 1024  # a body in use rides in every request: a few pages, not a manual
MAX_NAME = 64
MAX_DESCRIPTION = 1024
MAX_LISTED = 100  # skills in the listing
MAX_LISTING_CHARS = 16_000  # the listing's size in the system prompt
MAX_FOLDERS = 1000  # folders looked at under one skills folder
TOPIC = "skills"  # the session log's state record
_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
SKILL_FILE = "SKILL.md"

LISTING_INTRO = (
    "Skills: instructions for particular tasks, written by the user or shipped with this project. "
    "When a task matches a skill's description, call the skill tool with its name first and follow "
    "what it returns; the instructions stay in force for the rest of the conversation. Available:"
)
IN_USE_INTRO = (
    "Skills in use. These were loaded with the skill tool earlier in this conversation and stay in "
    "force, word for word, whatever a condensed record says:"
)


@dataclass(frozen=True, slots=True)
class SkillDir:
    path: Path
    scope: Scope
    shown: str  # how the folder is named to the user


@dataclass(frozen=True, slots=True)
class Skill:
    name: str
    description: str  # one line
    body: str
    scope: Scope
    shown_path: str  # ".claude/skills/review/SKILL.md"

    def definition(self) -> dict[str, str]:
        """What an approval covers: the name, the description and the body's digest."""
        digest = hashlib.sha256(self.body.encode()).hexdigest()
        return {"name": self.name, "description": self.description, "body": digest}


@dataclass(frozen=True, slots=True)
class Skills:
    skills: tuple[Skill, ...] = ()
    notices: tuple[str, ...] = ()

    def project(self) -> tuple[Skill, ...]:
        return tuple(s for s in self.skills if s.scope == "project")


def skill_dirs(project_root: Path, env: Mapping[str, str]) -> tuple[SkillDir, ...]:
    """The skills folders for this user and project, in precedence order."""
    return (
        SkillDir(home_dir(env) / ".claude" / "skills", "user", "~/.claude/skills"),
        SkillDir(project_root / ".claude" / "skills", "project", ".claude/skills"),
    )


def _one_line(text: str) -> str:
    return visible(" ".join(text.split()))


def parse_skill(text: str, folder_name: str, scope: Scope, shown_path: str) -> Skill | str:
    """A SKILL.md's text as a Skill, or why it is skipped (a phrase after the file's name)."""
    if not text.startswith("---"):
        return "has no front matter (a --- block with name: and description:)"
    parsed = parse_command_text(text)
    if not parsed.meta:
        return "has no readable front matter (a --- block with name: and description:, closed by ---)"
    name = " ".join(parsed.meta.get("name", "").split()) or folder_name
    if len(name) > MAX_NAME or not _NAME.fullmatch(name):
        return (
            f"has the name {_one_line(name)[:80]!r}: a skill's name is lowercase letters, digits and "
            f"hyphens, at most {MAX_NAME} characters"
        )
    description = " ".join(parsed.meta.get("description", "").split())
    if not description:
        return "has no description: in its front matter (the model reads it to know when to use it)"
    if len(description) > MAX_DESCRIPTION:
        return f"has a description of {len(description):,} characters; at most {MAX_DESCRIPTION:,}"
    return Skill(name, description, parsed.body, scope, shown_path)


def read_skills(project_root: Path, dirs: Sequence[SkillDir]) -> Skills:
    """Every readable skill of these folders (one per name, the first folder's), and a line for
    each file skipped or passed over."""
    found: dict[str, Skill] = {}
    notices: list[str] = []
    for folder in dirs:
        for skill in _read_folder(project_root, folder, notices):
            first = found.get(skill.name)
            if first is None:
                found[skill.name] = skill
            else:
                notices.append(f"skill {skill.name} is {first.shown_path}; {skill.shown_path} is not used")
    return Skills(tuple(found[n] for n in sorted(found)), tuple(notices))


def _read_folder(root: Path, folder: SkillDir, notices: list[str]) -> list[Skill]:
    project = folder.scope == "project"
    try:
        if not folder.path.is_dir():
            return []
        if project:
            real = folder.path.resolve(strict=True)
            if not real.is_relative_to(root.resolve(strict=True)):
                notices.append(
                    f"{folder.shown} leads outside the project (to {visible(str(real))}); not read"
                )
                return []
        entries = sorted(os.listdir(folder.path))
    except (OSError, RuntimeError):
        return []
    skills: list[Skill] = []
    for entry in entries[:MAX_FOLDERS]:
        if entry.startswith("."):
            continue
        path = folder.path / entry / SKILL_FILE
        shown = visible(f"{folder.shown}/{entry}/{SKILL_FILE}")
        if project and os.path.islink(folder.path / entry):
            if os.path.lexists(path):
                notices.append(f"{shown} skipped: its folder is a link (a project's links are not followed)")
            continue
        if not os.path.lexists(path):
            continue
        text, why = _read(root, path, project)
        skill = why or parse_skill(text, entry, folder.scope, shown)
        if isinstance(skill, str):
            notices.append(f"{shown} skipped: it {skill}")
        else:
            skills.append(skill)
    if len(entries) > MAX_FOLDERS:
        notices.append(f"{folder.shown} holds more than {MAX_FOLDERS} entries; the rest are not read")
    return skills


def _read(root: Path, path: Path, project: bool) -> tuple[str, str]:
    """(the file's text, "") or ("", why it was not read)."""
    try:
        if project:
            read = read_project_file(root, path, limit=MAX_SKILL_BYTES)
        elif not stat.S_ISREG(os.stat(path).st_mode):
            return "", "is not a regular file; only regular files are read"
        else:
            read = read_user_file(path, limit=MAX_SKILL_BYTES)
    except UnreadableFile as exc:
        return "", str(exc)
    except OSError as exc:
        return "", f"cannot be read: {exc.strerror or exc}"
    if read.more:
        return "", f"is larger than {describe_size(MAX_SKILL_BYTES)}, the limit for a skill"
    try:
        return read.data.decode("utf-8-sig"), ""
    except UnicodeDecodeError:
        return "", "is not UTF-8 text"


def listing(skills: Sequence[Skill]) -> tuple[str, list[str]]:
    """The system prompt's list of skills ("" without any), bounded, and a line for what it left out."""
    if not skills:
        return "", []
    lines: list[str] = []
    size = 0
    for skill in skills[:MAX_LISTED]:
        line = f"- {skill.name}: {_one_line(skill.description)}"
        if size + len(line) > MAX_LISTING_CHARS:
            break
        lines.append(line)
        size += len(line) + 1
    left = len(skills) - len(lines)
    notes = (
        [f"{left} skill{'s' if left != 1 else ''} not listed to the model (at most {MAX_LISTED})"]
        if left
        else []
    )
    return LISTING_INTRO + "\n" + "\n".join(lines), notes


def in_use_section(in_use: Mapping[str, str]) -> str:
    """The system prompt's section of skills in use (name -> body): "" without any."""
    if not in_use:
        return ""
    parts = [f'<skill name="{name}">\n{body}\n</skill>' for name, body in in_use.items()]
    return f"\n\n{IN_USE_INTRO}\n\n" + "\n\n".join(parts)


class SkillsInUse:
    """The skills loaded in a conversation (name -> body), in the order they were loaded."""

    def __init__(self, in_use: Mapping[str, str] | None = None) -> None:
        self._in_use = dict(in_use or {})

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._in_use)

    def add(self, name: str, body: str) -> bool:
        """Keep `name` in force; whether that changed anything."""
        if self._in_use.get(name) == body:
            return False
        self._in_use[name] = body
        return True

    def section(self) -> str:
        return in_use_section(self._in_use)

    def state(self) -> dict[str, object]:
        """What the session log's "skills" record holds (`logged_skills` reads it back)."""
        return {"in_use": [{"name": n, "body": b} for n, b in self._in_use.items()]}


def logged_skills(records: Sequence[LogRecord]) -> dict[str, str]:
    """The skills in use (name -> body) as the session's log (`records`) last recorded them."""
    last = next((r for r in reversed(records) if isinstance(r, StateRecord) and r.topic == TOPIC), None)
    if last is None:
        return {}
    items = last.data.get("in_use")
    if not isinstance(items, list):
        return {}
    return {
        item["name"]: item["body"]
        for item in items
        if isinstance(item, Mapping)
        and isinstance(item.get("name"), str)
        and isinstance(item.get("body"), str)
    }
