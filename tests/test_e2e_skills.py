"""Skills end to end: `agent -p` against the fake model server, real SDKs. The listing is in the
system prompt; the model calls `skill` and reads the body back; after a compaction the body is still
in every request (pinned), and `--continue` brings it back; a project's skills are neither listed
nor loadable before the user approved them."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agent_cli.testing.fakeserver import FakeModelServer, RecordedRequest, Reply, ToolCallSpec
from agent_cli.testing.summary_shape import is_summary_request
from tests.e2e import MODELS, agent_env, run_agent, stream_events

pytestmark = pytest.mark.e2e

BODY = "# Deploying\n\nRun `make release` then tag it.\nNever\tpush on a Friday — ✓ (שלום)."
SKILL = f"---\nname: deploy\ndescription: How to ship a release. Use when asked to deploy.\n---\n\n{BODY}\n"
COMMON = ["--model", MODELS["anthropic"], "--output-format", "stream-json"]


def write_skill(folder: Path, name: str, text: str) -> None:
    (folder / name).mkdir(parents=True, exist_ok=True)
    (folder / name / "SKILL.md").write_text(text)


def system_text(request: RecordedRequest) -> str:
    system = request.body.get("system", "")
    return system if isinstance(system, str) else "".join(b["text"] for b in system)


def tool_names(request: RecordedRequest) -> list[str]:
    return [t["name"] for t in request.body.get("tools", [])]


def tool_results(request: RecordedRequest) -> list[dict[str, Any]]:
    return [
        block
        for message in request.body["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]


def result_text(block: dict[str, Any]) -> str:
    content = block["content"]
    return content if isinstance(content, str) else "".join(c.get("text", "") for c in content)


def loads_then_compacts() -> Callable[[RecordedRequest], Reply]:
    step = {"n": 0}

    def answer(request: RecordedRequest) -> Reply:
        if is_summary_request(request.body):
            return Reply("## Goal\nship the release\n## Done\nloaded the deploy skill")
        step["n"] += 1
        if step["n"] == 1:
            return Reply("Loading a skill.", tool_calls=[ToolCallSpec("skill", {"name": "nope"})])
        if step["n"] == 2:
            return Reply("That one.", tool_calls=[ToolCallSpec("skill", {"name": "deploy"})])
        if step["n"] == 3:
            return Reply("Condensing.", tool_calls=[ToolCallSpec("compact", {"focus": "the release"})])
        return Reply("Released.")

    return answer


def test_the_model_loads_a_skill_and_it_survives_a_compaction_and_continue(tmp_path: Path) -> None:
    project, home = tmp_path / "proj", tmp_path / "home"
    project.mkdir()
    write_skill(home / ".claude" / "skills", "deploy", SKILL)
    with FakeModelServer() as server:
        server.responder = loads_then_compacts()
        env = agent_env(home, server)
        first = run_agent(["-p", "Ship it.", *COMMON], project, env)
        assert first.returncode == 0, first.stderr[-2000:]
        loaded_at = len(server.requests)
        server.responder = lambda request: Reply("Still shipping.")
        again = run_agent(["-p", "And now?", "--continue", *COMMON], project, env)
        assert again.returncode == 0, again.stderr[-2000:]
        requests = [r for r in server.requests if r.api == "anthropic"]
    first_request = requests[0]
    assert "- deploy: How to ship a release. Use when asked to deploy." in system_text(first_request)
    assert BODY not in system_text(first_request)  # the body waits until the model loads it
    assert "skill" in tool_names(first_request)
    # The unknown name is an error result that names the skills there are.
    wrong = tool_results(requests[1])[0]
    assert wrong["is_error"] is True and "no skill named 'nope'" in result_text(wrong)
    assert "The skills are: deploy." in result_text(wrong)
    # The right one returns the body, byte for byte.
    loaded = tool_results(requests[2])[-1]
    assert result_text(loaded) == BODY and not loaded.get("is_error")
    assert BODY in system_text(requests[2])  # pinned from the request after the load
    compacts = [e for e in stream_events(first.stdout) if e["type"] == "compact"]
    assert compacts and compacts[-1]["layer"] == "manual", compacts
    after = [r for r in requests[3:] if not is_summary_request(r.body)]
    assert after and len(requests) > loaded_at
    for request in after:  # after the compaction (the result itself summarized away) and --continue
        assert BODY in system_text(request)
    assert not any(BODY in result_text(b) for b in tool_results(after[0]))  # it is the pin that holds it


def test_a_projects_skills_wait_for_approval(tmp_path: Path) -> None:
    project, home = tmp_path / "proj", tmp_path / "home"
    write_skill(project / ".claude" / "skills", "evil", SKILL.replace("name: deploy", "name: evil"))
    write_skill(project / ".claude" / "skills", "broken", "no front matter here\n")
    with FakeModelServer() as server:
        env = agent_env(home, server)
        server.responder = lambda request: Reply("Done.")
        refused = run_agent(["-p", "hi", *COMMON], project, env)
        assert refused.returncode == 0, refused.stderr[-2000:]
        before = server.requests[-1]
        approved = run_agent(["-p", "hi", "--yes", *COMMON], project, env)
        assert approved.returncode == 0, approved.stderr[-2000:]
        after = server.requests[-1]
    said = refused.stdout + refused.stderr  # (warnings are stream-json events here)
    assert "1 project skill from .claude/skills not approved, so not offered" in said
    assert ".claude/skills/broken/SKILL.md skipped: it has no front matter" in said
    assert "evil" not in system_text(before) and "skill" not in tool_names(before)
    assert "- evil: How to ship a release." in system_text(after) and "skill" in tool_names(after)
    assert json.dumps(BODY)[1:-1] not in json.dumps(before.body)


def test_the_repl_asks_once_for_a_projects_skills(tmp_path: Path, fake_server: FakeModelServer) -> None:
    pexpect = pytest.importorskip("pexpect")
    from tests.reliability.procs import ANSI, expect, spawn_repl

    project = tmp_path / "project"
    write_skill(project / ".claude" / "skills", "evil", SKILL.replace("name: deploy", "name: evil"))
    env = agent_env(tmp_path / "home", fake_server)
    env["TERM"] = "xterm-256color"
    fake_server.queue(Reply("Hello."), Reply("Hello again."), Reply("Hello once more."))
    for answer, offered in (("n", False), ("y", True), (None, True)):
        child = spawn_repl(project, env)
        try:
            if answer is not None:
                expect(child, "Offer them to the model")
                assert "evil: How to ship a release." in ANSI.sub("", child.before).replace("\r\n", "")
                child.send(answer)
            expect(child, "auto-compact at ")
            assert "Offer them" not in ANSI.sub("", child.before), "asked once for this project"
            child.send("hi\r")
            expect(child, "Hello")
            expect(child, "auto-compact at ")  # the prompt is back: /exit is a line, not typeahead
            child.send("/exit\r")
            child.expect(pexpect.EOF)
        finally:
            child.close(force=True)
        request = fake_server.requests[-1]
        assert ("- evil: How to ship a release." in system_text(request)) is offered, answer
        assert ("skill" in tool_names(request)) is offered, answer
    assert len(fake_server.requests) == 3
