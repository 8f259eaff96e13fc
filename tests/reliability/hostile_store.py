"""Secrets in common shapes, and a disk that fills mid-session (issue "Found from outside", items 9 and 10).

Each case is a real `agent` process (or the real tool, where the tool alone is the boundary) in a
directory of its own, judged by `harness.judge` or a check of what it did.

Secrets: a credential of each shape sits in the project's `.env` and in the agent's environment; the
model reads the file, cats it, greps it and runs `env`. Its secret part must reach neither the model
(every request the fake server received) nor anything the agent wrote (`.transcripts/`, its state).

A full disk: the project lives on a small tmpfs (mounted by the case as root; a case that cannot
mount says so and fails). It fills during the session, by the model's own command or by the
session's own records; the run must end in one line naming the session, its log must parse, and
`--resume` must go on with what was said once the space is freed.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from functools import partial
from pathlib import Path

from agent_cli.testing.fakeserver import FakeModelServer, Reply, ToolCallSpec
from tests.reliability.harness import Case, Outcome, agent, env_for, judge, project_in
from tests.reliability.keys import written_by_the_agent

SUITE = "store"
DONE = "STORE-CASE-DONE"
HEX32 = "5f0c1e2d3b4a69788796a5b4c3d2e1f0"

# name -> (environment variable, its value, the part that must never be seen). Random-looking, never real.
SHAPES: dict[str, tuple[str, str, str]] = {
    "a password in DATABASE_URL": (
        "DATABASE_URL",
        "postgres://app:Hunter2-Pa55!@db.internal:5432/app",
        "Hunter2-Pa55!",
    ),
    "a SENTRY_DSN with public and secret key": (
        "SENTRY_DSN",
        f"https://{HEX32}:{HEX32[::-1]}@o11.ingest.sentry.io/42",
        HEX32[::-1],
    ),
    "a key-only SENTRY_DSN": ("SENTRY_DSN", f"https://{HEX32}@o11.ingest.us.sentry.io/42", HEX32),
    "a Slack webhook URL": (
        "SLACK_WEBHOOK_URL",
        "https://hooks.slack.com/services/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",
        "q9RtZ2mLx7Vb4NcKp1YsWd8E",
    ),
    "a Stripe sk_live_ key": (
        "STRIPE_API",
        "sk_live_51HqZ7kLmN2oP3qR4sT5uV6wX7yZ8aB9cD0eF1gH2iJ3kL4mN5oP6",
        "51HqZ7kLmN2oP3qR4sT5uV6wX7yZ8aB9cD0eF1gH2iJ3kL4mN5oP6",
    ),
    "a Stripe rk_live_ key": (
        "STRIPE_RESTRICTED",
        "rk_live_51HqZ7kLmN2oP3qR4sT5uV6wX7yZ8aB9cD0eF1gH2iJ3kL4mN5oQ7",
        "51HqZ7kLmN2oP3qR4sT5uV6wX7yZ8aB9cD0eF1gH2iJ3kL4mN5oQ7",
    ),
    "a GitLab glpat- token": ("GITLAB_PAT", "glpat-Xq3vR9sT2uW5yZ8bC1dE", "Xq3vR9sT2uW5yZ8bC1dE"),
    "an npm token in .npmrc form": (
        "NPM_CONFIG_LINE",
        "//registry.npmjs.org/:_authToken=npm_Q7w3E9r1T5y8U2i6O4p0A3s7D1f5G9h2J6k4",
        "Q7w3E9r1T5y8U2i6O4p0A3s7D1f5G9h2J6k4",
    ),
}


def _calls(*specs: tuple[str, dict[str, object]]) -> list[ToolCallSpec]:
    return [ToolCallSpec(tool, args, id=f"toolu_{tool}_{n}") for n, (tool, args) in enumerate(specs)]


def _shape(where: Path, name: str) -> Outcome:
    """The model reads a `.env` holding the credential, cats and greps it, and prints `env`."""
    variable, value, secret = SHAPES[name]
    project = project_in(where, files={".env": f"# app settings\n{variable}={value}\nDEBUG=1\n"})
    rounds = [
        _calls(("read_file", {"path": ".env"})),
        _calls(("bash", {"command": "cat .env; env | sort"}), ("grep", {"pattern": variable})),
    ]
    with FakeModelServer() as server:
        server.queue(*[Reply("Looking.", tool_calls=r) for r in rounds])
        server.default = Reply(DONE)
        env = env_for(where, server)
        env[variable] = value
        proc = agent(["-p", "what are the settings?", "--yes"], project, env)
        sent = json.dumps([q.body for q in server.requests], ensure_ascii=False)
        asked = len(server.requests)
    problems = []
    if asked < 3:
        problems.append(f"only {asked} requests: the tools did not all run")
    if secret in sent:
        problems.append("the secret was sent to the model")
    if "[REDACTED]" not in sent:
        problems.append("nothing was redacted")
    on_disk = [p.name for p in written_by_the_agent(where) if secret.encode() in p.read_bytes()]
    if on_disk:
        problems.append(f"the secret is on disk in {on_disk[:3]}")
    outcome = judge(proc, {"finished"}, check="; ".join(problems))
    seen = "redacted in the model's view and the log" if not problems else ""
    return Outcome(outcome.ok, f"{outcome.detail}; {seen}".rstrip("; "), outcome.traceback, outcome.internal)


# ---- a full disk -------------------------------------------------------------------------------


def _on_small_disk(where: Path, size: str, body: Callable[[Path], Outcome]) -> Outcome:
    """Run `body(project)` with the project on a tmpfs of `size`; unmounted whatever happens."""
    project = where / "project"
    project.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(project)],
        capture_output=True,
        text=True,
    )
    if mounted.returncode != 0:
        return Outcome(False, f"not run: cannot mount a small disk ({mounted.stderr.strip()[:80]})")
    try:
        return body(project)
    finally:
        # The agent's files are swept after the case: keep a copy of the session store off the tmpfs.
        (where / "copy").mkdir(exist_ok=True)
        subprocess.run(["cp", "-a", str(project / ".transcripts"), str(where / "copy")], check=False)
        subprocess.run(["umount", "-l", str(project)], check=False)


def _log_problems(project: Path) -> tuple[str, list[str]]:
    """The session's id and what is wrong with its log (torn or unreadable lines)."""
    logs = sorted((project / ".transcripts").glob("*/session.jsonl"))
    if len(logs) != 1:
        return "", [f"{len(logs)} session logs"]
    data = logs[0].read_bytes()
    torn = 0
    for line in data.split(b"\n"):
        if line.strip():
            try:
                json.loads(line)
            except ValueError:
                torn += 1
    problems = [f"{torn} torn lines"] if torn else []
    if data and not data.endswith(b"\n"):
        problems.append("the log ends mid-line")
    return logs[0].parent.name, problems


def _fill(path: Path, leave: int) -> None:
    """Fill the disk with `path`, then give back `leave` bytes."""
    subprocess.run(["sh", "-c", f"head -c 64M /dev/zero > '{path}'"], capture_output=True, check=False)
    os.truncate(path, max(0, path.stat().st_size - leave))


def _resume_after_freeing(where: Path, project: Path, session_id: str, filler: Path) -> list[str]:
    """Free the space, `--resume` the session; what went wrong (the earlier prompt must be sent)."""
    filler.unlink()
    with FakeModelServer() as server:
        server.default = Reply("RESUMED-" + DONE)
        proc = agent(["--resume", session_id, "-p", "go on"], project, env_for(where, server))
        sent = json.dumps([q.body for q in server.requests])
    problems = []
    if proc.returncode != 0:
        problems.append(f"--resume exit {proc.returncode}: {proc.stderr.decode(errors='replace')[-120:]}")
    if "PROMPT-BEFORE-THE-DISK-FILLED" not in sent:
        problems.append("--resume lost the earlier prompt")
    return problems


def _full_disk(where: Path, how: str) -> Outcome:
    def body(project: Path) -> Outcome:
        project_in(where)  # the case's config, on the small disk
        filler = project / "big.bin"
        if how == "by the model's command":
            command = "head -c 3M /dev/zero > big.bin; echo filled"
            rounds = [[ToolCallSpec("bash", {"command": command}, id="toolu_fill")]]
        else:  # by the session's own records: the disk nearly full, then outputs the log must hold
            _fill(filler, leave=120 * 1024)
            # Ordinary text: the fake server counts usage as characters / 4, which base64 of random
            # bytes is far denser than, and a report that far below the local count is warned about.
            command = "yes 'the disk fills with what this session had to keep' | head -c 30000"
            rounds = [[ToolCallSpec("bash", {"command": command}, id=f"toolu_out{n}")] for n in range(12)]
        with FakeModelServer() as server:
            server.queue(*[Reply("Running.", tool_calls=r) for r in rounds])
            server.default = Reply(DONE)
            proc = agent(["-p", "PROMPT-BEFORE-THE-DISK-FILLED", "--yes"], project, env_for(where, server))
        err = proc.stderr.decode("utf-8", "replace").strip()
        session_id, problems = _log_problems(project)
        if session_id and f"agent --resume {session_id}" not in err:
            problems.append("the line does not name the session to resume")
        if "the disk is full" not in err:
            problems.append("the line does not say the disk is full")
        if not problems:
            problems += _resume_after_freeing(where, project, session_id, filler)
        outcome = judge(proc, {"line"}, check="; ".join(problems))
        if outcome.ok:  # the line names a long path: say what it held instead
            said = "exit 1, one line: the disk is full, `agent --resume ID`"
            return Outcome(True, f"{said}; the log parses; --resume after freeing space goes on")
        return outcome

    return _on_small_disk(where, "2m", body)


def _full_at_start(where: Path) -> Outcome:
    """The disk is full before the session writes its first record."""

    def body(project: Path) -> Outcome:
        project_in(where)
        filler = project / "filler"
        _fill(filler, leave=0)
        with FakeModelServer() as server:
            server.default = Reply(DONE)
            proc = agent(["-p", "hello"], project, env_for(where, server))
        sessions = [p for p in (project / ".transcripts").glob("*") if p.is_dir()]
        err = proc.stderr.decode("utf-8", "replace")
        problems = [f"{len(sessions)} empty sessions left behind"] if sessions else []
        if "the disk is full" not in err:
            problems.append("the line does not say the disk is full")
        filler.unlink()
        return judge(proc, {"line"}, check="; ".join(problems))

    return _on_small_disk(where, "1m", body)


def _key_fifo(where: Path) -> Outcome:
    """The per-user session key is a FIFO: start-up does not hang; the run finishes with one line
    saying the session is not signed (and why), and the FIFO is left as it was."""
    project = project_in(where)
    env_home = where / "home"
    key = env_home / ".state" / "agent-cli" / "session-key"
    key.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(key)
    with FakeModelServer() as server:
        server.default = Reply(DONE)
        try:
            proc = agent(["-p", "hello"], project, env_for(where, server), timeout=120)
        except subprocess.TimeoutExpired:
            return Outcome(False, "hung: no answer within 120 s")
    err = proc.stderr.decode("utf-8", "replace")
    said = [line for line in err.splitlines() if "session key" in line]
    problems = [] if len(said) == 1 and "not a regular file" in said[0] else ["no one line about the key"]
    return judge(proc, {"finished"}, check="; ".join(problems))


def cases() -> list[Case]:
    shapes = [
        Case(
            SUITE,
            f"{name} is never sent nor logged",
            partial(_shape, name=name),
            sample=name in ("a password in DATABASE_URL", "a Stripe sk_live_ key"),
        )
        for name in SHAPES
    ]
    by_command = partial(_full_disk, how="by the model's command")
    by_records = partial(_full_disk, how="by its records")
    disk = [
        Case(SUITE, "disk fills mid-session by the model's command", by_command, sample=True),
        Case(SUITE, "disk fills mid-session by the session's own records", by_records),
        Case(SUITE, "disk full before the first record", _full_at_start),
    ]
    key = [Case(SUITE, "the session key is a FIFO: start-up does not hang, one line", _key_fifo, sample=True)]
    return [*shapes, *disk, *key]
