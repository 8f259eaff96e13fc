"""Bad input of every kind, each ending in a finished task or one clear line.

Config files and flags, prompts and stdin with odd bytes, paths and file names, permissions, huge
and endless output, junk tool calls from the model, empty and oversized replies. A case names how
it must end (`usage`: exit 2 and one line; `line`: exit 1 and one line; `finished`: exit 0) and,
for a tool call, what its result must say: the model gets a readable error, the run goes on.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from agent_cli.testing.fakeserver import FakeModelServer, Reply, ScriptItem, ToolCallSpec
from tests.e2e import tool_results, without_read_rights
from tests.reliability.harness import (
    FINISHED,
    LINE,
    QUICK_CONFIG,
    USAGE,
    Case,
    Outcome,
    agent,
    env_for,
    judge,
    project_in,
)

DONE = "INPUT-CASE-DONE"
BIG = 2_000_000


@dataclass(frozen=True)
class Bad:
    name: str
    args: Sequence[str | bytes]
    expect: str
    config: str | None = None  # None: the quick config; "" none at all
    files: dict[str, str | bytes] = field(default_factory=dict)
    call: ToolCallSpec | None = None  # the model's first reply makes this call
    result_has: str = ""  # ... and its result must contain this (case-insensitive)
    replies: Sequence[ScriptItem] = ()  # instead of `call`: the whole script
    stdin: bytes = b""
    setup: Callable[[Path], None] | None = None  # after the files are written
    unprivileged: bool = False  # run without root's file-mode bypass
    env: dict[str, str] = field(default_factory=dict)
    no_key: bool = False


def _chmod(path: str, mode: int) -> Callable[[Path], None]:
    return lambda project: os.chmod(project / path, mode)


def _link(name: str, target: str) -> Callable[[Path], None]:
    return lambda project: os.symlink(target, project / name)


def _call(tool: str, args: dict[str, object] | None = None, raw: str | None = None) -> ToolCallSpec:
    return ToolCallSpec(tool, args or {}, raw_arguments=raw)


P = ["-p", "do the task", "--yes"]
CONFIG_CASES = [
    Bad("config: TOML syntax error", P, USAGE, config="[provider\nname = 'anthropic'\n"),
    Bad("config: unknown section", P, USAGE, config="[providr]\nname = 'anthropic'\n"),
    Bad("config: unknown key", P, USAGE, config="[provider]\nretries = 3\n"),
    Bad("config: unknown provider", P, USAGE, config="[provider]\nname = 'gemini'\n"),
    Bad("config: negative retries", P, USAGE, config="[provider]\nmax_retries = -1\n"),
    Bad("config: retries as text", P, USAGE, config="[provider]\nmax_retries = 'six'\n"),
    Bad("config: zero timeout", P, USAGE, config="[provider]\ntimeout = 0\n"),
    Bad("config: base_url not http", P, USAGE, config="[provider]\nbase_url = 'ftp://example.com'\n"),
    Bad("config: window of 100", P, USAGE, config="[context]\ncontext_window = 100\n"),
    Bad("config: unknown effort", P, USAGE, config="[provider]\neffort = 'extreme'\n"),
    Bad("config: unknown wire", P, USAGE, config="[provider]\nwire = 'grpc'\n"),
    Bad("config: ratio over 1", P, USAGE, config="[context]\ntrigger_ratio = 1.5\n"),
    Bad("config: allow is not a list", P, USAGE, config="[approvals]\nallow = 'git status'\n"),
    Bad("config: a section that is a value", P, USAGE, config="provider = 3\n"),
    Bad(
        "config: not UTF-8",
        P,
        USAGE,
        setup=lambda p: (p / ".agent/config.toml").write_bytes(b"[provider]\nmodel = 'caf\xe9'\n"),
    ),
    Bad("config: --config missing", [*P, "--config", "nope.toml"], USAGE, config=""),
    Bad("config: --config is a directory", [*P, "--config", "."], USAGE, config=""),
    Bad("config: empty file", P, FINISHED, config=" \n"),
    Bad("config: no API key", P, USAGE, config="", no_key=True),
]
FLAG_CASES = [
    Bad("flag: --output-format xml", [*P, "--output-format", "xml"], USAGE),
    Bad("flag: --context-window 100", [*P, "--context-window", "100"], USAGE),
    Bad("flag: --context-window abc", [*P, "--context-window", "abc"], USAGE),
    Bad("flag: --context-window -5", [*P, "--context-window", "-5"], USAGE),
    Bad("flag: --resume ''", [*P, "--resume", ""], USAGE),
    Bad("flag: --resume unknown id", [*P, "--resume", "20990101-000000-abcdef"], USAGE),
    Bad("flag: --resume ../etc", [*P, "--resume", "../etc"], USAGE),
    Bad("flag: --continue with no session", [*P, "--continue"], USAGE),
    Bad("flag: --continue and --resume", [*P, "--continue", "--resume", "x"], USAGE),
    Bad("flag: unknown flag", [*P, "--frobnicate"], USAGE),
    Bad("flag: -p ''", ["-p", ""], USAGE),
    Bad("flag: -p of spaces", ["-p", "   \t "], USAGE),
    Bad("flag: --provider nope", [*P, "--provider", "nope"], USAGE),
    Bad("flag: --wire grpc", [*P, "--wire", "grpc"], USAGE),
    Bad("flag: --effort extreme", [*P, "--effort", "extreme"], USAGE),
    Bad("flag: -p without a value", ["-p"], USAGE),
    Bad("flag: --goal with an unclosed quote", [*P, "--goal", "fix it --check 'pytest"], USAGE),
    Bad("flag: --goal --budget -1", ["-p", "--goal", "fix it --budget -1", "--yes"], USAGE),
    Bad("flag: --goal without its text", ["-p", "--goal", "--check true", "--yes"], USAGE),
    Bad(  # the check's output tries to write the clipboard and clear the screen: the run still ends met
        "flag: --goal whose check prints escapes",
        ["-p", "--goal", "tidy up --check 'printf \"\\033]52;c;aGk=\\007\\033[2J\"'", "--yes"],
        FINISHED,
    ),
    Bad("flag: an unknown subcommand word", ["transcripts", "frobnicate"], USAGE),
    Bad("flag: transcripts show unknown id", ["transcripts", "show", "nope"], USAGE),
]
PROMPT_CASES = [
    Bad("prompt: bytes not UTF-8 in -p", ["-p", b"fix \xff\xfe please"], FINISHED),
    Bad("prompt: bytes not UTF-8 on stdin", [], FINISHED, stdin=b"fix \xff\xfe please\n"),
    Bad("prompt: empty stdin", [], USAGE, stdin=b""),
    Bad("prompt: a NUL byte on stdin", [], FINISHED, stdin=b"fix\x00 this\n"),
    Bad("prompt: terminal escapes", ["-p", "\x1b[2J\x1b]0;title\x07 hello"], FINISHED),
    Bad("prompt: RTL, emoji and CJK", ["-p", "שלום 👋🏽 修复这个 テスト"], FINISHED),
    Bad(
        "prompt: 2 MB on stdin, over the window",
        ["--context-window", "100000"],
        LINE,
        stdin=b"word " * 400_000,
    ),
    Bad("prompt: 100 KB on the command line", ["-p", "fix this " * 12_000], FINISHED),
]
ODD = b"n\xffme.txt"
PATH_CASES = [
    Bad(
        "path: read a missing file",
        P,
        FINISHED,
        call=_call("read_file", {"path": "nope.txt"}),
        result_has="not found",
    ),
    Bad(
        "path: read a directory",
        P,
        FINISHED,
        files={"d/x": "x"},
        call=_call("read_file", {"path": "d"}),
        result_has="directory",
    ),
    Bad(
        "path: read a binary file",
        P,
        FINISHED,
        files={"img.png": b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 40},
        call=_call("read_file", {"path": "img.png"}),
        result_has="binary",
    ),
    Bad(
        "path: read ../../etc/passwd",
        P,
        FINISHED,
        call=_call("read_file", {"path": "../../etc/passwd"}),
        result_has="outside",
    ),
    Bad(
        "path: read /etc/passwd",
        P,
        FINISHED,
        call=_call("read_file", {"path": "/etc/passwd"}),
        result_has="outside",
    ),
    Bad(
        "path: read through a symlink out",
        P,
        FINISHED,
        setup=_link("out", "/etc"),
        call=_call("read_file", {"path": "out/passwd"}),
        result_has="outside",
    ),
    Bad(
        "path: write into a new deep folder",
        P,
        FINISHED,
        call=_call("write_file", {"path": "a/b/c/d.txt", "content": "x"}),
        result_has="created",
    ),
    Bad(
        "path: write to an empty path",
        P,
        FINISHED,
        call=_call("write_file", {"path": "", "content": "x"}),
        result_has="path",
    ),
    Bad(
        "path: edit with text not in the file",
        P,
        FINISHED,
        files={"f.txt": "abc\n"},
        call=_call("edit_file", {"path": "f.txt", "old_string": "zzz", "new_string": "y"}),
        result_has="not found",
    ),
    Bad(
        "path: glob with a name not UTF-8",
        P,
        FINISHED,
        files={os.fsdecode(ODD): "x"},
        call=_call("glob", {"pattern": "*"}),
        result_has="\ufffd",
    ),
    Bad(
        "path: grep an invalid regex",
        P,
        FINISHED,
        call=_call("grep", {"pattern": "(["}),
        result_has="bad regex",
    ),
    Bad(
        "path: a file name with a newline",
        P,
        FINISHED,
        files={"a\nb.txt": "x"},
        call=_call("glob", {"pattern": "*"}),
    ),
    Bad(
        "path: read a 50 MB file",
        P,
        FINISHED,
        call=_call("read_file", {"path": "big.log"}),
        setup=lambda p: (p / "big.log").write_bytes(b"a log line that repeats\n" * 2_200_000),
    ),
    Bad(
        "path: read a FIFO",
        P,
        FINISHED,
        setup=lambda p: os.mkfifo(p / "fifo"),
        call=_call("read_file", {"path": "fifo"}),
    ),
    Bad(
        "path: read /dev/zero by link",
        P,
        FINISHED,
        setup=_link("zero", "/dev/zero"),
        call=_call("read_file", {"path": "zero"}),
        result_has="outside",
    ),
]
PERMISSION_CASES = [
    Bad(
        "permission: read a file without read rights",
        P,
        FINISHED,
        files={"secret.txt": "x"},
        setup=_chmod("secret.txt", 0),
        unprivileged=True,
        call=_call("read_file", {"path": "secret.txt"}),
        result_has="permission",
    ),
    Bad(
        "permission: write into a read-only folder",
        P,
        FINISHED,
        files={"ro/x": "x"},
        setup=_chmod("ro", 0o555),
        unprivileged=True,
        call=_call("write_file", {"path": "ro/new.txt", "content": "x"}),
        result_has="permission",
    ),
    Bad("permission: .transcripts is a file", P, LINE, setup=lambda p: (p / ".transcripts").write_text("x")),
    Bad(
        "permission: project folder read-only", P, LINE, setup=lambda p: os.chmod(p, 0o555), unprivileged=True
    ),
    Bad(
        "permission: transcripts list unreadable",
        ["transcripts", "list"],
        LINE,
        setup=lambda p: (p / ".transcripts").mkdir(mode=0),
        unprivileged=True,
    ),
]
OUTPUT_CASES = [
    Bad(
        "output: 50 MB from a command",
        P,
        FINISHED,
        call=_call("bash", {"command": "yes | head -c 50000000"}),
        result_has="[exit code 0]",
    ),
    Bad(
        "output: an endless command",
        P,
        FINISHED,
        call=_call("bash", {"command": "yes", "timeout": 2}),
        result_has="timed out",
    ),
    Bad(
        "output: binary garbage", P, FINISHED, call=_call("bash", {"command": "head -c 200000 /dev/urandom"})
    ),
    Bad(
        "output: one 5 MB line",
        P,
        FINISHED,
        call=_call("bash", {"command": "head -c 5000000 /dev/zero | tr '\\0' x"}),
        result_has="[exit code 0]",
    ),
    Bad(
        "output: a command that waits for stdin",
        P,
        FINISHED,
        call=_call("bash", {"command": "read x; echo got $x"}),
    ),
    Bad(
        "output: a command in the background",
        P,
        FINISHED,
        call=_call("bash", {"command": "(sleep 3600 &) ; echo started"}),
        result_has="started",
    ),
]
JUNK_CASES = [
    Bad(
        "junk: an unknown tool",
        P,
        FINISHED,
        call=_call("launch_rockets", {"n": 1}),
        result_has="unknown tool",
    ),
    Bad(
        "junk: arguments not JSON",
        P,
        FINISHED,
        call=_call("read_file", raw='{"path": "a.txt'),
        result_has="not a JSON object",
    ),
    Bad(
        "junk: arguments a JSON list",
        P,
        FINISHED,
        call=_call("read_file", raw="[1, 2]"),
        result_has="not a JSON object",
    ),
    Bad("junk: a required argument missing", P, FINISHED, call=_call("read_file", {}), result_has="path"),
    Bad(
        "junk: an argument of the wrong type",
        P,
        FINISHED,
        call=_call("read_file", {"path": 5}),
        result_has="path",
    ),
    Bad("junk: an unknown argument", P, FINISHED, call=_call("bash", {"command": "echo hi", "sudo": True})),
    Bad(
        "junk: a 2 MB write_file",
        P,
        FINISHED,
        call=_call("write_file", {"path": "big.txt", "content": "x" * BIG}),
    ),
    Bad("junk: a negative timeout", P, FINISHED, call=_call("bash", {"command": "echo hi", "timeout": -5})),
    Bad(
        "junk: 40 calls in one reply",
        P,
        FINISHED,
        replies=[
            Reply("Many.", tool_calls=[_call("glob", {"pattern": f"*{n}"}) for n in range(40)]),
            Reply(DONE),
        ],
    ),
    Bad(
        "junk: offset past the end",
        P,
        FINISHED,
        files={"f.txt": "a\n"},
        call=_call("read_file", {"path": "f.txt", "offset": 999}),
    ),
]
REPLY_CASES = [
    Bad("reply: empty", P, FINISHED, replies=[Reply("")]),
    Bad("reply: only whitespace", P, FINISHED, replies=[Reply(" \n\t ")]),
    Bad(
        "reply: cut at max_tokens",
        P,
        FINISHED,
        replies=[Reply("A long answer that was cut", stop="max_tokens")],
    ),
    Bad("reply: 1 MB of text", P, FINISHED, replies=[Reply("word " * 200_000 + DONE)]),
    Bad("reply: a refusal", P, FINISHED, replies=[Reply("I cannot help with that.", stop="refusal")]),
    Bad(
        "reply: the model's window exceeded",
        P,
        LINE,
        replies=[Reply("partial", stop="model_context_window_exceeded"), Reply(DONE)],
    ),
]
ALL = (
    CONFIG_CASES
    + FLAG_CASES
    + PROMPT_CASES
    + PATH_CASES
    + PERMISSION_CASES
    + OUTPUT_CASES
    + JUNK_CASES
    + REPLY_CASES
)


def _run(where: Path, bad: Bad) -> Outcome:
    config = QUICK_CONFIG if bad.config is None else bad.config
    project = project_in(where, config, bad.files)
    prefix: list[str] = []
    if bad.unprivileged:
        found = without_read_rights()
        if found is None:
            return Outcome(True, "skipped: no way to drop root's file-mode bypass here")
        prefix = found
    if bad.setup is not None:
        bad.setup(project)
    with FakeModelServer() as server:
        if bad.replies:
            server.queue(*bad.replies)
        elif bad.call is not None:
            server.queue(Reply("Calling.", tool_calls=[bad.call]), Reply(DONE))
        server.default = Reply(DONE)
        env = env_for(where, server)
        if bad.no_key:
            env.pop("ANTHROPIC_API_KEY", None)
        env.update(bad.env)
        try:
            proc = agent(bad.args, project, env, stdin=bad.stdin, timeout=180, prefix=prefix)
        finally:
            if bad.setup is not None:  # let the clean-up (and the key sweep) in again
                for path in [project, *project.rglob("*")]:
                    if not path.is_symlink():
                        os.chmod(path, 0o700)
        results = [text for text, _ in tool_results(server.requests).values()]
    check = ""
    if bad.result_has and proc.returncode == 0:
        if not results:
            check = "no tool result reached the model"
        elif bad.result_has.lower() not in results[0].lower():
            check = f"tool result lacks {bad.result_has!r}: {results[0][:80]!r}"
    if bad.call is not None and "root:x:0:0" in "".join(results):
        check = "a file outside the project reached the model"
    return judge(proc, {bad.expect}, check=check)


def cases(sample_every: int = 6) -> list[Case]:
    return [
        Case("inputs", b.name, partial(_run, bad=b), sample=n % sample_every == 0) for n, b in enumerate(ALL)
    ]
