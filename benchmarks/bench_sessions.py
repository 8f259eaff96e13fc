"""Replayable coding sessions: seeded, deterministic, with facts planted early to probe for later.

    make_session("long", seed=1, outputs="typical") -> Session

A session is a list of steps, each what the agent's loop appends to its history: a user message,
or one model reply (its text, its tool calls) followed by the tool results. The shapes:

- `long`: 320 model steps of an engineering task: reading files, editing, running tests that fail
  and then pass, searching; a user follow-up every 12-20 steps; long and short answers.
- `survey`: 60 steps of reading files of varied size with a long analysis each (file-heavy).
- `chat`: 120 steps of conversation with small tool calls (conversation-heavy).

Sizes are drawn from stated distributions (tokens, before the cap any policy applies):
    tool outputs  two distributions (`OUTPUTS`), each a lognormal for command output (clipped to
                  [20, 48,000]) and one for file reads (clipped to [200, 30,000]):
                  typical: commands median 900, sigma 1.1; files median 2,400, sigma 0.9
                  heavy:   commands median 2,000, sigma 1.4; files median 4,800, sigma 1.1
                  (the chat's small commands are a quarter of a command's draw)
    answer        80% short (40-250), 20% long (700-2,200)

Planted in the first steps (and named in `facts`): an error string from a failing test, the
port the dev server listens on, a constraint the user sets, a decision and its reason, and a
line an edit changed. Each fact has a question a user would ask about it and its answer; a
recall fact also has the question in other words (`paraphrase`). A probe asks recall with one of
them, in turn (`Fact.asked`): the words of a question only, never the answer nor a phrase picked
to match the output. Every assistant step that ends a phase states its next step
("Next: ...").
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Literal

from agent_cli.core import messages as messages_module
from agent_cli.core.messages import Message, TextBlock, ToolResult, ToolUse

__all__ = ["OUTPUTS", "SHAPES", "Fact", "Session", "Step", "make_session", "seeded_ids"]

FactKind = Literal["recall", "decision"]
WORDS = [
    "parser",
    "token",
    "buffer",
    "stream",
    "module",
    "handler",
    "config",
    "value",
    "index",
    "request",
    "response",
    "cache",
    "layer",
    "session",
    "record",
    "window",
    "budget",
    "summary",
    "transcript",
    "message",
    "history",
    "engine",
    "boundary",
    "route",
    "auth",
    "schema",
    "migration",
    "fixture",
    "queue",
    "worker",
    "retry",
    "timeout",
    "header",
    "payload",
]


@dataclass(frozen=True, slots=True)
class Fact:
    """Something said early that must survive. `text` is the answer (verbatim in a request, or in
    what a recall returns); `question` is what a user would ask about it, `paraphrase` the same
    question in other words ("" for decisions, scored verbatim only). `file`: where the answer
    can still be read (an edit's file), for any agent that reads it again."""

    kind: FactKind  # "decision": the user's constraints and decisions, verbatim in the request
    text: str
    question: str
    paraphrase: str = ""
    file: str = ""  # a file of the project that holds the answer now (read again, it shows it)
    file_text: str = ""  # what reading that file returns

    def asked(self, probe: int) -> str:
        """What the `probe`-th probe passes to recall: the question, and the paraphrase at every
        other probe."""
        return self.paraphrase if self.paraphrase and probe % 2 else self.question


@dataclass(slots=True)
class Step:
    messages: list[Message]
    facts: tuple[Fact, ...] = ()
    next_step: str | None = None  # the "Next: ..." this step states, if any
    is_user: bool = False


@dataclass(slots=True)
class Session:
    name: str
    steps: list[Step] = field(default_factory=list)

    @property
    def facts(self) -> list[Fact]:
        return [f for s in self.steps for f in s.facts]

    @property
    def model_steps(self) -> int:
        return sum(1 for s in self.steps if not s.is_user)


# Tool output sizes in tokens, (median, sigma) of a lognormal: command output, then file reads.
OUTPUTS = {
    "typical": ((900.0, 1.1), (2_400.0, 0.9)),
    "heavy": ((2_000.0, 1.4), (4_800.0, 1.1)),
}


class _Writer:
    """Draws sizes and text from one seeded generator."""

    def __init__(self, seed: int, outputs: str = "typical") -> None:
        self.rng = random.Random(seed)
        self.calls = 0
        (self.output_median, self.output_sigma), (self.file_median, self.file_sigma) = OUTPUTS[outputs]

    def output_tokens(self) -> int:
        return self.tokens(self.output_median, self.output_sigma, 20, 48_000)

    def file_tokens(self) -> int:
        return self.tokens(self.file_median, self.file_sigma, 200, 30_000)

    def tokens(self, median: float, sigma: float, low: int, high: int) -> int:
        return int(min(max(self.rng.lognormvariate(0, sigma) * median, low), high))

    def prose(self, tokens: int, topic: str) -> str:
        words = [self.rng.choice(WORDS) for _ in range(int(tokens * 0.75))]
        lines = [" ".join(words[i : i + 14]) for i in range(0, len(words), 14)]
        return f"On {topic}: " + ". ".join(lines) + "."

    def code(self, tokens: int, path: str) -> str:
        lines = []
        for n in range(max(tokens // 12, 1)):
            name = f"{self.rng.choice(WORDS)}_{n}"
            lines.append(
                f"def {name}(value):  # {path} line {n + 1}\n    return value * {self.rng.randint(2, 97)}"
            )
        return "\n".join(lines)

    def answer(self, topic: str) -> str:
        size = self.rng.randint(700, 2_200) if self.rng.random() < 0.2 else self.rng.randint(40, 250)
        return self.prose(size, topic)

    def call(self, name: str, args: dict[str, object]) -> ToolUse:
        self.calls += 1
        return ToolUse(f"toolu_{self.calls:05d}", name, args)


def _reply(w: _Writer, text: str, *calls: tuple[ToolUse, str, bool], next_step: str | None = None) -> Step:
    body = text + (f"\n\nNext: {next_step}" if next_step else "")
    blocks = [TextBlock(body), *(c for c, _, _ in calls)]
    messages = [Message("assistant", tuple(blocks))]
    if calls:
        messages.append(Message("user", tuple(ToolResult(c.id, out, err) for c, out, err in calls)))
    return Step(messages, next_step=next_step)


def _user(text: str, *facts: Fact) -> Step:
    return Step([Message.user(text)], facts, is_user=True)


PORT = 48213
ERROR = "E   KeyError: 'tenant_id' in handlers/auth.py:142 (resolve_tenant)"
CONSTRAINT = "Constraint: never add the requests library; use httpx for every HTTP call."
DECISION = "Decision: we keep SQLite for the job queue because the CI runners have no database service."
CHANGED = "RETRY_TIMEOUT = 37  # was 30; raised after the flaky upload test"
CONFIG_FILE = (  # src/upload/config.py after the edit, as read_file returns it
    '1\t"""Upload settings."""\n2\t\n3\tMAX_PARTS = 64\n4\tPART_BYTES = 8 * 1024 * 1024\n'
    f"5\t{CHANGED}\n6\tRETRIES = 3\n7\tBACKOFF_SECONDS = (1, 2, 4)\n"
)


def _plant(w: _Writer, session: Session) -> None:
    """The first steps: the facts the probes look for later."""
    s = session.steps
    s.append(
        _user(
            "Fix the failing auth tests in this service, then make the upload retries reliable.\n"
            + CONSTRAINT,
            Fact("decision", CONSTRAINT, "Which HTTP library may this service use?"),
        )
    )
    test = w.call("bash", {"command": "pytest -q tests/test_auth.py"})
    output = f"F.F\n{ERROR}\n" + w.prose(300, "the traceback") + "\n[exit code 1]"
    step = _reply(w, "I will run the auth tests first.", (test, output, True))
    step.facts = (
        Fact(
            "recall",
            ERROR,
            "What error did tests/test_auth.py fail with?",
            "Why were the auth tests failing when we started?",
        ),
    )
    s.append(step)
    serve = w.call("bash", {"command": "make dev-server"})
    step = _reply(
        w, "Starting the dev server to reproduce.", (serve, f"Serving on http://127.0.0.1:{PORT}\n", False)
    )
    step.facts = (
        Fact(
            "recall",
            f"127.0.0.1:{PORT}",
            "Which address does make dev-server listen on?",
            "Where can I reach the local development server?",
        ),
    )
    s.append(step)
    s.append(_user(DECISION, Fact("decision", DECISION, "What do we keep the job queue in, and why?")))
    edit = w.call(
        "edit_file",
        {"path": "src/upload/config.py", "old_string": "RETRY_TIMEOUT = 30", "new_string": CHANGED},
    )
    step = _reply(
        w,
        "Raising the retry timeout as discussed.",
        (edit, "Edited src/upload/config.py (1 change)", False),
        next_step="re-run the upload tests in tests/test_upload.py",
    )
    step.facts = (
        Fact(
            "recall",
            CHANGED,
            "What did the edit to src/upload/config.py change?",
            "What did we set the upload timeout to, and from what?",
            file="src/upload/config.py",
            file_text=CONFIG_FILE,
        ),
    )
    s.append(step)


def _work_step(w: _Writer, n: int, files: list[str]) -> Step:
    roll = w.rng.random()
    if roll < 0.40:
        path = w.rng.choice(files)
        call = w.call("read_file", {"path": path})
        return _reply(w, w.answer(path), (call, w.code(w.file_tokens(), path), False))
    if roll < 0.60:
        test = w.rng.choice(["tests/test_auth.py", "tests/test_upload.py", "tests/test_queue.py"])
        call = w.call("bash", {"command": f"pytest -q {test}"})
        failed = w.rng.random() < 0.4
        out = w.prose(w.output_tokens(), "the test run")
        out += "\nE   AssertionError: expected 3 retries, saw 2\n[exit code 1]" if failed else "\n5 passed"
        return _reply(
            w, w.answer(test), (call, out, failed), next_step=f"fix what {test} reports" if failed else None
        )
    if roll < 0.75:
        term = w.rng.choice(WORDS)
        call = w.call("grep", {"pattern": term, "path": "src"})
        hits = "\n".join(
            f"src/{w.rng.choice(WORDS)}.py:{w.rng.randint(1, 400)}: {term}"
            for _ in range(w.rng.randint(2, 40))
        )
        return _reply(w, w.answer(f"where {term} is used"), (call, hits, False))
    if roll < 0.90:
        path = w.rng.choice(files)
        call = w.call("edit_file", {"path": path, "old_string": f"step {n}", "new_string": f"step {n} fixed"})
        return _reply(w, w.answer(path), (call, f"Edited {path} (1 change)", False))
    return _reply(w, w.answer("the plan"), next_step=f"continue with step {n + 1}")


def _follow_up(w: _Writer, n: int) -> Step:
    asks = [
        "Also make sure the queue worker logs its retries.",
        "Keep the public API unchanged.",
        "What is left? Keep going.",
        "Please add a test for the timeout path.",
        "Check the migration again before you continue.",
    ]
    return _user(f"{w.rng.choice(asks)} (follow-up {n})")


SHAPES = {"long": 320, "survey": 60, "chat": 120}


class _SeededIds:
    """Stands in for the `secrets` module where message ids are drawn (`agent_cli.core.messages`):
    a record names the ids of what it replaced, and a recall result the ids of what it found, so
    random ids would make the same replay send different bytes (and counts) on each run."""

    def __init__(self, seed: str) -> None:
        self.rng = random.Random(seed)

    def token_hex(self, n: int) -> str:
        return self.rng.randbytes(n).hex()


@contextmanager
def seeded_ids(seed: str) -> Iterator[None]:
    """Message ids drawn from a generator seeded with `seed` while the block runs."""
    saved = messages_module.secrets
    messages_module.secrets = _SeededIds(seed)  # type: ignore[assignment]
    try:
        yield
    finally:
        messages_module.secrets = saved


def make_session(shape: str, seed: int = 1, outputs: str = "typical") -> Session:
    """A session of `shape` ("long", "survey", "chat") with tool outputs sized by `outputs`
    ("typical", "heavy"); the same arguments give the same session, ids included."""
    with seeded_ids(f"session-{shape}-{seed}-{outputs}"):
        return _make_session(shape, seed, outputs)


def _make_session(shape: str, seed: int, outputs: str) -> Session:
    w = _Writer(seed, outputs)
    session = Session(shape)
    files = [f"src/{a}/{b}.py" for a in ("auth", "upload", "queue", "api") for b in WORDS[:12]]
    _plant(w, session)
    next_user = w.rng.randint(12, 20)
    for n in range(SHAPES[shape]):
        if n == next_user:
            session.steps.append(_follow_up(w, n))
            next_user += w.rng.randint(12, 20)
        if shape == "survey":
            path = files[n % len(files)]
            call = w.call("read_file", {"path": path})
            text = w.prose(w.rng.randint(1_200, 2_200), path)
            session.steps.append(_reply(w, text, (call, w.code(w.file_tokens(), path), False)))
        elif shape == "chat":
            roll = w.rng.random()
            if roll < 0.15:
                call = w.call("glob", {"pattern": "src/**/*.py"})
                session.steps.append(_reply(w, w.answer("the layout"), (call, "\n".join(files[:20]), False)))
            elif roll < 0.3:
                call = w.call("bash", {"command": "git log --stat -n 5"})
                out = w.prose(max(w.output_tokens() // 4, 20), "the history")
                session.steps.append(_reply(w, w.answer("the history"), (call, out, False)))
            else:
                session.steps.append(_user(w.prose(w.rng.randint(30, 200), "a question")))
                session.steps.append(_reply(w, w.answer("the answer")))
        else:
            session.steps.append(_work_step(w, n, files))
    session.steps.append(_reply(w, "All done: the auth tests and the upload retries are fixed."))
    return session
