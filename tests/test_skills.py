"""Skills: SKILL.md files found and parsed as Claude Code writes them (a bad one skipped with one
clear line), the listing bounded and made safe, the `skill` tool's results, and a project's skills
offered only once the user approved them (real files, a real approvals file in a temp dir)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from agent_cli.agent.approvals import APPROVE_PROJECT_SKILLS
from agent_cli.agent.skill_trust import skills_to_offer
from agent_cli.prompt.skills import (
    MAX_LISTED,
    MAX_SKILL_BYTES,
    Skill,
    SkillDir,
    SkillsInUse,
    listing,
    logged_skills,
    parse_skill,
    read_skills,
)
from agent_cli.store.log_records import StateRecord
from agent_cli.store.project_approvals import ProjectApprovals
from agent_cli.tools.base import ToolContext
from agent_cli.tools.skill import MAX_RESULT_CHARS, SkillTool

GOOD = (
    "---\nname: review\ndescription: >\n  Review a change\n  for bugs.\n---\n\n# Review\n\nRead the diff.\n"
)


def write(folder: Path, name: str, text: str | bytes) -> Path:
    path = folder / name / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


def dirs(tmp_path: Path) -> tuple[Path, Path, tuple[SkillDir, ...]]:
    project, user = tmp_path / "proj", tmp_path / "home" / ".claude" / "skills"
    project.mkdir(exist_ok=True)
    user.mkdir(parents=True, exist_ok=True)
    return (
        project,
        user,
        (
            SkillDir(user, "user", "~/.claude/skills"),
            SkillDir(project / ".claude" / "skills", "project", ".claude/skills"),
        ),
    )


def test_a_skill_is_its_front_matter_and_body() -> None:
    skill = parse_skill(GOOD, "folder", "user", "x")
    assert isinstance(skill, Skill)
    assert (skill.name, skill.description, skill.body) == (
        "review",
        "Review a change for bugs.",
        "# Review\n\nRead the diff.",
    )
    # Without a name, the folder's.
    named = parse_skill("---\ndescription: d\n---\nbody", "my-skill", "user", "x")
    assert isinstance(named, Skill) and named.name == "my-skill"


@pytest.mark.parametrize(
    ("text", "folder", "why"),
    [
        ("# just markdown\n", "a", "has no front matter"),
        ("---\nname: a\ndescription: d\nbody without a closing line\n", "a", "has no readable front matter"),
        ("---\nname: a\n---\nbody", "a", "has no description"),
        ("---\nname: Bad_Name\ndescription: d\n---\n", "a", "has the name 'Bad_Name': a skill's name is"),
        ("---\ndescription: d\n---\n", "Has Space", "has the name 'Has Space'"),
        (f"---\nname: {'a' * 65}\ndescription: d\n---\n", "a", "has the name 'aaaa"),
        (f"---\nname: a\ndescription: {'x' * 1025}\n---\n", "a", "has a description of 1,025 characters"),
    ],
)
def test_bad_front_matter_is_one_clear_reason(text: str, folder: str, why: str) -> None:
    skipped = parse_skill(text, folder, "project", "x")
    assert isinstance(skipped, str) and skipped.startswith(why), skipped
    assert "\n" not in skipped


def test_discovery_skips_bad_files_with_a_line_and_the_users_skill_wins(tmp_path: Path) -> None:
    project, user, folders = dirs(tmp_path)
    skills_dir = project / ".claude" / "skills"
    write(user, "review", GOOD)
    write(skills_dir, "review", GOOD.replace("for bugs", "and approve it"))  # shadowed by the user's
    write(skills_dir, "lint", "---\nname: lint\ndescription: Lint the code.\n---\nRun ruff.\n")
    write(skills_dir, "broken", "no front matter\n")
    write(skills_dir, "latin", b"---\nname: latin\ndescription: caf\xe9\n---\n")
    write(skills_dir, "huge", "---\nname: huge\ndescription: d\n---\n" + "x" * MAX_SKILL_BYTES)
    secret = tmp_path / "secret.md"
    secret.write_text(GOOD.replace("review", "stolen"))
    (skills_dir / "linked").mkdir()
    (skills_dir / "linked" / "SKILL.md").symlink_to(secret)
    os.mkfifo(skills_dir / "lint" / "fifo")  # (not a SKILL.md: ignored)
    (skills_dir / "fifo").mkdir()
    os.mkfifo(skills_dir / "fifo" / "SKILL.md")
    (skills_dir / "elsewhere").symlink_to(tmp_path / "home" / ".claude" / "skills" / "review")
    found = read_skills(project, folders)
    assert [(s.name, s.scope) for s in found.skills] == [("lint", "project"), ("review", "user")]
    notes = "\n".join(found.notices)
    assert (
        "skill review is ~/.claude/skills/review/SKILL.md; .claude/skills/review/SKILL.md is not used"
        in notes
    )
    assert ".claude/skills/broken/SKILL.md skipped: it has no front matter" in notes
    assert ".claude/skills/latin/SKILL.md skipped: it is not UTF-8 text" in notes
    assert ".claude/skills/huge/SKILL.md skipped: it is larger than 32 KiB, the limit for a skill" in notes
    assert ".claude/skills/linked/SKILL.md skipped: it leads outside the project" in notes
    assert ".claude/skills/fifo/SKILL.md skipped: it is a FIFO, not a regular file" in notes
    assert ".claude/skills/elsewhere/SKILL.md skipped: its folder is a link" in notes
    assert all("\n" not in n for n in found.notices)


def test_the_listing_is_bounded_and_its_text_made_safe() -> None:
    many = [Skill(f"s{i:03d}", "does a thing", "b", "user", "x") for i in range(MAX_LISTED + 20)]
    text, notes = listing(many)
    assert text.count("\n- ") == MAX_LISTED
    assert notes == [f"20 skills not listed to the model (at most {MAX_LISTED})"]
    text, _ = listing([Skill("x", "a\x1b[2Kb\u202ec", "b", "user", "x")])
    assert "- x: a\\x1b[2Kb\\u202ec" in text
    assert listing([]) == ("", [])


def test_the_tool_returns_the_body_or_an_error_naming_the_skills(tmp_path: Path) -> None:
    tool = SkillTool({"review": "Read the diff.", "lint": "x" * (MAX_RESULT_CHARS + 5)})
    ctx = ToolContext(root=tmp_path)
    out = tool.run({"name": "review"}, ctx)
    assert out.content == "Read the diff." and not out.is_error
    assert out.skill is not None and (out.skill.name, out.skill.body) == ("review", "Read the diff.")
    wrong = tool.run({"name": "deploy"}, ctx)
    assert wrong.is_error and wrong.skill is None
    assert wrong.content == "Error: no skill named 'deploy'. The skills are: lint, review."
    long = tool.run({"name": "lint"}, ctx)
    assert long.content.endswith("[5 more characters of this skill not shown]")
    assert tool.spec.name == "skill" and tool.approval == "never"


def test_skills_in_use_round_trip_through_the_log_record() -> None:
    in_use = SkillsInUse()
    assert in_use.add("review", "Read the diff.") and not in_use.add("review", "Read the diff.")
    record = StateRecord(rid="r", ts="t", topic="skills", data=in_use.state())
    assert logged_skills([record]) == {"review": "Read the diff."}
    assert '<skill name="review">\nRead the diff.\n</skill>' in in_use.section()
    assert logged_skills([StateRecord(rid="r", ts="t", topic="skills", data={"in_use": "junk"})]) == {}


class Asked:
    def __init__(self, answer: str) -> None:
        self.answer = answer
        self.questions: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, name: str, args: dict[str, Any], why: object) -> str:
        self.questions.append((name, args))
        return self.answer


def test_a_projects_skills_are_offered_only_once_approved(tmp_path: Path) -> None:
    project, user, folders = dirs(tmp_path)
    write(user, "mine", "---\ndescription: my own\n---\nbody")
    path = write(
        project / ".claude" / "skills", "theirs", "---\ndescription: from the repo\x1b[31m\n---\nbody"
    )
    approvals = ProjectApprovals(tmp_path / "state" / "approvals.json", project)
    found = read_skills(project, folders)
    offered, notes = skills_to_offer(found, approvals, ask=None, yes=False)  # headless
    assert [s.name for s in offered] == ["mine"]
    assert notes[0].startswith("1 project skill from .claude/skills not approved, so not offered")
    refuse = Asked("no")
    offered, notes = skills_to_offer(found, approvals, ask=refuse, yes=False)
    assert [s.name for s in offered] == ["mine"] and notes == [
        "1 project skill from .claude/skills not approved: not offered this session"
    ]
    name, args = refuse.questions[0]
    assert name == APPROVE_PROJECT_SKILLS
    assert "theirs: from the repo\\x1b[31m   (.claude/skills/theirs/SKILL.md)" in args["question"]
    assert "mine" not in args["question"]
    accept = Asked("yes")
    offered, notes = skills_to_offer(found, approvals, ask=accept, yes=False)
    assert [s.name for s in offered] == ["mine", "theirs"] and notes == []
    again = Asked("no")
    offered, _ = skills_to_offer(read_skills(project, folders), approvals, ask=again, yes=False)
    assert [s.name for s in offered] == ["mine", "theirs"] and again.questions == []  # remembered
    path.write_text("---\ndescription: from the repo\n---\nnow do something else")
    changed = Asked("no")
    offered, _ = skills_to_offer(read_skills(project, folders), approvals, ask=changed, yes=False)
    assert [s.name for s in offered] == ["mine"] and len(changed.questions) == 1  # a changed body asks again


def test_the_loop_pins_a_loaded_skill_logs_it_and_clear_ends_it(tmp_path: Path) -> None:
    from agent_cli.agent.approvals import AutoApprover
    from agent_cli.agent.loop import AgentLoop
    from agent_cli.providers.retry import RetryPolicy
    from agent_cli.testing.scripted import MemorySession, PassThroughContext, ScriptedProvider, calls, say
    from agent_cli.tools.registry import default_tools

    tools = default_tools()
    tools.add(SkillTool({"review": "Read the diff."}))
    provider = ScriptedProvider(
        [calls(("skill", {"name": "nope"})), calls(("skill", {"name": "review"})), say("done"), say("again")]
    )
    log = MemorySession()
    loop = AgentLoop(
        provider=provider,
        tools=tools,
        context=PassThroughContext(),
        system="S",
        log=log,
        approver=AutoApprover(),
        tool_context=ToolContext(root=tmp_path),
        retry=RetryPolicy(max_retries=0),
        sleep=lambda s: None,
    )
    list(loop.run("review it"))
    systems = [r.system for r in provider.requests]
    assert "Read the diff." not in systems[0] and "Read the diff." not in systems[1]  # not the wrong name
    assert systems[2].startswith("S\n\nSkills in use.") and systems[2].endswith("Read the diff.\n</skill>")
    assert loop.frame_parts.skills.names == ("review",) and loop.frame.pins.endswith("</skill>")
    assert log.states == [("skills", {"in_use": [{"name": "review", "body": "Read the diff."}]})]
    loop.clear()
    assert loop.frame_parts.skills.names == () and log.states[-1] == ("skills", {"in_use": []})
    list(loop.run("again"))
    assert provider.requests[-1].system == "S"
    loop.edit_frame(
        lambda parts: parts.restore_skills(
            logged_skills([StateRecord("r", "t", "skills", log.states[0][1])])
        ),
        "skills",
    )
    assert loop.frame.system.endswith("Read the diff.\n</skill>")
