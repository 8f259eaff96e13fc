"""Recorded Claude Code sessions as replayable sessions, their probes, and what Claude Code was billed.

    load_session(path) -> Session          one recorded conversation in the replay's session shape
    load_with_ids(path)                    the same, with each step's `message.id`
    unit_factor(path, session, ids, count) recorded tokens per replay token on that file
    working_day(sessions) -> Session       several tasks one after another in one conversation
    recorded_bill(path) -> RecordedBill    what the API billed Claude Code for that file
    real_paths() -> (main files, sub-agent files, note)

A session keeps what the recording holds of the conversation (../shared/sessions/real/FORMAT.md): the
user's prompts, each assistant response (its text and tool calls, one step per distinct
`message.id`) and the tool results as recorded, each after the call it answers. What it does not
keep: the system prompt and tools (the replay's frame takes their place), thinking blocks (their
signatures are redacted in these files, so they could not be sent back; 1-43k characters a session),
Claude Code's own compaction (its boundary and summary: every policy compacts in its own way, so the
replay gets the whole uncompacted conversation), sub-agent (side-chain) lines, and display-only or
meta lines.

Probes (`Fact`s, kind "recall") come from the session's own early tool output: the first file a
Read opened, the first count a command printed, the first error line a command or a failed tool
gave; each asked in words of the question, naming the call a user would remember ("How many files
did the `Force full recompile of project` command report early on?"), never the answer.
`early_facts` only takes what the first `EARLY` tool results show, and the fact's text is a
substring of one of them (or of the call that named the file).

Claude Code's bill: per distinct `message.id` of the file's requests, input + 0.1 x cache reads +
1.25 x cache writes (`equivalents`: token-equivalents at the input price, as issue 36 counts them);
`priced` counts the 1-hour writes at their own 2x.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from itertools import pairwise
from pathlib import Path
from typing import Any

from bench_sessions import Fact, Session, Step, seeded_ids

from agent_cli.core.messages import Block, Message, TextBlock, ToolResult, ToolUse

__all__ = [
    "COPIED",
    "EARLY",
    "SHARED",
    "RecordedBill",
    "early_facts",
    "load_session",
    "load_with_ids",
    "real_paths",
    "recorded_bill",
    "unit_factor",
    "working_day",
]

ROOT = Path(__file__).resolve().parent.parent
COPIED = ROOT / "benchmarks" / "data" / "real_sessions"  # the MIT sub-agent files, in the repository
SHARED = next(  # ../shared beside the checkout, or beside the worktrees' folder
    (p / "sessions" / "real" for p in (ROOT.parent / "shared", ROOT.parent.parent / "shared") if p.is_dir()),
    ROOT.parent / "shared" / "sessions" / "real",
)
EARLY = 40  # probes are drawn from the first 40 tool results
READ_WEIGHT, WRITE_WEIGHT, WRITE_1H_WEIGHT = 0.1, 1.25, 2.0


def real_paths(shared: Path | None = None) -> tuple[list[Path], list[Path], str]:
    """The long main threads (spotter, ../shared) and the sub-agent files; a one-line note when
    ../shared is absent (then only the copies here are run)."""
    where = SHARED if shared is None else shared
    if where.is_dir():
        files = sorted(where.glob("spotter-*.jsonl"))
        main = [p for p in files if ".subagent-" not in p.name]
        subs = [p for p in files if ".subagent-" in p.name and "acompact" not in p.name]
        return main, subs, ""
    copies = sorted(COPIED.glob("*.jsonl"))
    return [], copies, f"{where} is absent: only the {len(copies)} sub-agent files copied here are replayed."


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _sent(line: dict[str, Any], subagent: bool) -> bool:
    """Whether a user/assistant line is part of the conversation the replay keeps."""
    if line.get("type") not in ("user", "assistant"):
        return False
    if line.get("isSidechain") and not subagent:
        return False
    return not (line.get("isVisibleInTranscriptOnly") or line.get("isCompactSummary") or line.get("isMeta"))


def _result_text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(str(c.get("text", "")) if isinstance(c, dict) else str(c) for c in content)
    return str(content or "")


def _assistant_blocks(content: Any) -> list[Block]:
    out: list[Block] = []
    for item in content if isinstance(content, list) else [{"type": "text", "text": content}]:
        if item.get("type") == "text" and item.get("text"):
            out.append(TextBlock(str(item["text"])))
        elif item.get("type") == "tool_use":
            args = item.get("input")
            out.append(
                ToolUse(str(item["id"]), str(item.get("name", "")), args if isinstance(args, dict) else {})
            )
    return out


def load_session(path: Path, name: str | None = None) -> Session:
    """One recorded conversation as the replay's steps (see the module)."""
    return load_with_ids(path, name)[0]


def load_with_ids(path: Path, name: str | None = None) -> tuple[Session, list[str]]:
    """The session, and beside each step the `message.id` of its reply ("" for a user step). Our
    messages' own ids are drawn from a generator seeded by the file's name (the records name them:
    without it, two runs sent different bytes)."""
    with seeded_ids(f"recorded-{path.name}"):
        return _load_with_ids(path, name)


def _load_with_ids(path: Path, name: str | None) -> tuple[Session, list[str]]:
    subagent = ".subagent-" in path.name
    steps: list[Step] = []
    replies: dict[str, int] = {}  # message id -> its step
    calls: dict[str, int] = {}  # tool_use id -> its step
    blocks: dict[int, list[Block]] = {}
    results: dict[int, list[Block]] = {}
    for line in _lines(path):
        if not _sent(line, subagent):
            continue
        message = line.get("message") or {}
        content = message.get("content")
        if line["type"] == "assistant":
            mid = str(message.get("id"))
            if mid not in replies:
                replies[mid] = len(steps)
                steps.append(Step([]))
                blocks[replies[mid]], results[replies[mid]] = [], []
            n = replies[mid]
            new = _assistant_blocks(content)
            blocks[n] += new
            calls.update({b.id: n for b in new if isinstance(b, ToolUse)})
            continue
        items = [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])
        texts = [str(i.get("text", "")) for i in items if i.get("type") == "text" and i.get("text")]
        for item in items:
            if item.get("type") == "tool_result" and str(item.get("tool_use_id")) in calls:
                n = calls[str(item["tool_use_id"])]
                text = _result_text(item.get("content"))
                results[n].append(ToolResult(str(item["tool_use_id"]), text, bool(item.get("is_error"))))
        if texts and not any(i.get("type") == "tool_result" for i in items):
            steps.append(Step([Message.user("\n".join(texts))], is_user=True))
    out: list[Step] = []
    ids: list[str] = []
    mids = {n: mid for mid, n in replies.items()}
    for n, step in enumerate(steps):
        if step.is_user:
            out.append(step)
            ids.append("")
            continue
        order = {b.id: i for i, b in enumerate(blocks[n]) if isinstance(b, ToolUse)}
        answered = {r.tool_use_id for r in results[n] if isinstance(r, ToolResult)}
        reply = [b for b in blocks[n] if not isinstance(b, ToolUse) or b.id in answered]
        if not reply:
            continue  # a response of thinking only: nothing the next request carries
        got = sorted(
            results[n], key=lambda r: order.get(r.tool_use_id, 0) if isinstance(r, ToolResult) else 0
        )
        step.messages = [Message("assistant", tuple(reply))] + ([Message("user", tuple(got))] if got else [])
        out.append(step)
        ids.append(mids[n])
    session = Session(name or path.stem, out)
    facts = early_facts(session)
    for step in session.steps:
        if not step.is_user:
            step.facts = tuple(f for f in facts if _first_step(session, f) is step)
    return session, ids


def _tool_pairs(session: Session) -> list[tuple[Step, ToolUse, ToolResult]]:
    out = []
    for step in session.steps:
        if step.is_user or len(step.messages) < 2:
            continue
        uses = {b.id: b for b in step.messages[0].content if isinstance(b, ToolUse)}
        for r in step.messages[1].content:
            if isinstance(r, ToolResult) and r.tool_use_id in uses:
                out.append((step, uses[r.tool_use_id], r))
    return out


_COUNT = re.compile(
    r"(?<![\w.])(\d+) (tests?|passed|failed|failures?|errors?|warnings?|doctests?|files? changed)\b"
    r"|Compiling (\d+) (files?)\b"
)
_ERROR = re.compile(
    r"((^|\s)(error|ERROR|Error)(:|\])|\*\* \(\w+|FAILED|Traceback|\w+Error\b|\w+Exception\b)"
)
_COMMANDS = ("Bash", "bash")  # counts and error lines come from what a command printed
_UNITS = {
    "test": "tests",
    "failure": "failures",
    "error": "errors",
    "file": "files",
    "line": "lines",
    "warning": "warnings",
    "doctest": "doctests",
}


def _named(use: ToolUse) -> str:
    """How a user would name a call they remember: a command's own description or its first words,
    another tool's name and file."""
    if use.name in _COMMANDS:
        said = use.input.get("description") or str(use.input.get("command", ""))[:60]
        return f"the `{said}` command"
    path = use.input.get("file_path") or use.input.get("path") or ""
    return f"the {use.name} call" + (f" on {Path(str(path)).name}" if path else "")


FIRST_READ = (
    "Which file was read first in this session?",
    "What was the first file you opened when we started?",
)


def early_facts(session: Session) -> list[Fact]:
    """Up to three probes from the first `EARLY` tool results: a file read, a count a command printed,
    the first error line (a command's, or a failed tool's)."""
    pairs = _tool_pairs(session)[:EARLY]
    facts: list[Fact] = []
    for _, use, result in pairs:
        path = use.input.get("file_path") or use.input.get("path")
        if use.name in ("Read", "read_file") and isinstance(path, str) and not result.is_error:
            facts.append(Fact("recall", path, *FIRST_READ))
            break
    for _, use, result in pairs:
        hit = _COUNT.search(result.content) if use.name in _COMMANDS else None
        if hit:
            noun = _UNITS.get(hit.group(2) or hit.group(4), hit.group(2) or hit.group(4))
            facts.append(
                Fact(
                    "recall",
                    hit.group(0),
                    f"How many {noun} did {_named(use)} report early on?",
                    f"When we began, what count of {noun} came out of {_named(use)}?",
                )
            )
            break
    for _, use, result in pairs:
        if use.name not in _COMMANDS and not result.is_error:
            continue
        lines = [ln.strip() for ln in result.content.split("\n") if _ERROR.search(ln) and len(ln.strip()) > 8]
        if not lines and result.is_error:  # its first line, past Claude Code's "Exit code N"
            lines = [ln.strip() for ln in result.content.split("\n") if ln.strip()]
            lines = [ln for ln in lines if not ln.startswith("Exit code")]
        if lines:
            text = lines[0][:160]
            if text:
                facts.append(
                    Fact(
                        "recall",
                        text,
                        f"What error did {_named(use)} give early on?",
                        f"Which failure came out of {_named(use)} when we began?",
                    )
                )
                break
    return [f for f in facts if f.text not in f.question and f.text not in f.paraphrase]


def _first_step(session: Session, fact: Fact) -> Step | None:
    """The step whose call or result first holds the fact's text (the probe counts from there)."""
    for step, use, result in _tool_pairs(session):
        if fact.text in result.content or fact.text in json.dumps(use.input, ensure_ascii=False):
            return step
    return None


def working_day(sessions: Sequence[Session], name: str = "day") -> Session:
    """Several recorded tasks one after another in one conversation (each opens with its own prompt).
    The first file read is the first task's: the later tasks' "read first in this session" facts are
    false in the day, and left out (for every policy alike)."""
    steps = list(sessions[0].steps) if sessions else []
    for later in sessions[1:]:
        for step in later.steps:
            kept = tuple(f for f in step.facts if (f.question, f.paraphrase) != FIRST_READ)
            steps.append(step if kept == step.facts else replace(step, facts=kept))
    return Session(name, steps)


@dataclass(frozen=True)
class RecordedBill:
    """What the API reported for one file's requests (distinct `message.id`s)."""

    requests: int
    input: int
    read: int
    write: int
    write_1h: int
    output: int  # the last line's `output_tokens` of each id (a placeholder in some sub-agent files)

    @property
    def sent(self) -> int:
        return self.input + self.read + self.write

    @property
    def equivalents(self) -> float:
        """Input-token equivalents as the issue counts them: input + 0.1 x reads + 1.25 x writes."""
        return self.input + READ_WEIGHT * self.read + WRITE_WEIGHT * self.write

    @property
    def priced(self) -> float:
        """The same with 1-hour writes at their own 2x (what Anthropic charges for them)."""
        return self.equivalents + (WRITE_1H_WEIGHT - WRITE_WEIGHT) * self.write_1h


def recorded_bill(path: Path) -> RecordedBill:
    """Sum of the recorded usage over distinct `message.id`s of the file's own thread (a main file's
    side-chain lines excluded: each sub-agent is its own file)."""
    subagent = ".subagent-" in path.name
    seen: dict[str, dict[str, Any]] = {}
    last: dict[str, int] = {}
    for line in _lines(path):
        if line.get("type") != "assistant" or (line.get("isSidechain") and not subagent):
            continue
        message = line.get("message") or {}
        mid = str(message.get("id"))
        usage = message.get("usage") or {}
        seen.setdefault(mid, usage)
        last[mid] = int(usage.get("output_tokens", 0))
    total = {"input": 0, "read": 0, "write": 0, "write_1h": 0}
    for usage in seen.values():
        total["input"] += int(usage.get("input_tokens", 0))
        total["read"] += int(usage.get("cache_read_input_tokens", 0))
        total["write"] += int(usage.get("cache_creation_input_tokens", 0))
        total["write_1h"] += int((usage.get("cache_creation") or {}).get("ephemeral_1h_input_tokens", 0))
    return RecordedBill(
        len(seen), total["input"], total["read"], total["write"], total["write_1h"], sum(last.values())
    )


def unit_factor(path: Path, session: Session, ids: Sequence[str], count: Callable[[Message], int]) -> float:
    """Recorded tokens per replay token on this file: how much the recorded prompt grew from one
    request to the next, over the replay's count of the messages added in between, summed over the
    pairs of consecutive requests before Claude Code's compaction that the same model answered (a
    change of model is a change of frame, not of conversation; the frames differ, their growth is
    the same conversation)."""
    prompts: list[tuple[str, str, int]] = []
    seen: set[str] = set()
    subagent = ".subagent-" in path.name
    for line in _lines(path):
        if line.get("type") == "system" and line.get("subtype") == "compact_boundary":
            break
        if line.get("type") != "assistant" or (line.get("isSidechain") and not subagent):
            continue
        message = line.get("message") or {}
        mid = str(message.get("id"))
        if mid not in seen:
            seen.add(mid)
            usage = message.get("usage") or {}
            prompt = sum(
                int(usage.get(k, 0))
                for k in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
            )
            prompts.append((mid, str(message.get("model", "")), prompt))
    where = {mid: n for n, mid in enumerate(ids) if mid}
    kept = [(where[m], model, p) for m, model, p in prompts if m in where]
    recorded = replayed = 0
    for (a, model_a, pa), (b, model_b, pb) in pairwise(kept):
        if model_a == model_b and pb > pa:
            recorded += pb - pa
            replayed += sum(count(m) for step in session.steps[a:b] for m in step.messages)
    return recorded / replayed if replayed else 1.0
