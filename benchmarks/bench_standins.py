"""Two deterministic stand-ins for the model that writes a summary, used for every policy alike.

    lossy_record(entries, count, cap)              the newest entries' first lines, in order
    faithful_record(entries, facts, count, cap)    what every policy's own summary prompt asks for

Both read only the summary input as the policy built it (`entries`: (role, text) pairs, already
cut the way the policy cuts them: Kotlin's 100-character result previews, the JavaScript seed's
1,000/300/800 characters, the Java seed's first 80,000 characters, ours as its request carries
them), and write at most `cap` tokens (the policy's own output limit). Neither can keep what its
input no longer holds.

The lossy one is a model that keeps what is recent and drops early detail: the newest entries' first
160 characters, up to about 1,200 tokens. The faithful one keeps what the seeds' prompts, the
paper's and ours all ask a model to keep: the latest request, the latest error (its line, verbatim),
the next step stated (the latest in its input: stated in a message, or carried by an earlier record
the input begins with, which every policy's prompt asks the model to fold in), every specific value
the input holds among the session's planted facts (a model told "keep values, paths and error text
exactly" keeps them), and the files touched. It knows the facts only to decide what is specific; it
keeps one only when its input holds it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from bench_sessions import Fact

__all__ = ["LINE_CHARS", "RECORD_TOKENS", "STAND_INS", "Entry", "faithful_record", "lossy_record"]

RECORD_TOKENS = 1_200
LINE_CHARS = 160
REQUEST_CHARS = 1_000
Entry = tuple[str, str]  # (role: "user" | "assistant" | "tool" | "summary", text)
Count = Callable[[str], int]

_ERROR = re.compile(r"\b\w*(?:Error|Exception)\b:.*")
# A step as stated ("Next: ..."), or as an earlier record in the input carries it, after its bullet and
# label ("- Next: ...", "- The next step ...: - Next: ..."): a model folding that record keeps it.
_NEXT = re.compile(r"^(?:- )?(?:[^\n:]*: )?(?:- )?Next: (.+)$", re.MULTILINE)
_PATH = re.compile(r"\b(?:src|tests|handlers)/[\w./-]+\.py\b")
_LATEST = "- Latest request: "


def lossy_record(entries: Sequence[Entry], count: Count, cap: int = RECORD_TOKENS) -> str:
    """The newest entries' first lines, up to `cap` (at most RECORD_TOKENS) tokens, in order."""
    size = min(cap, RECORD_TOKENS)
    lines: list[str] = []
    used = count("## Work state\n")
    for role, text in reversed(entries):
        line = f"- {role}: {' '.join(text.split())[:LINE_CHARS]}"
        cost = count(line) + 1
        if used + cost > size:
            break
        lines.append(line)
        used += cost
    return "## Work state\n" + "\n".join(reversed(lines))


def _latest_request(entries: Sequence[Entry]) -> str:
    for role, text in reversed(entries):
        if role == "user" and text.strip():
            return " ".join(text.split())[:REQUEST_CHARS]
        if role == "summary" and _LATEST in text:  # an earlier record carries it
            return text[text.rindex(_LATEST) + len(_LATEST) :].split("\n", 1)[0]
    return ""


def _latest_error(text: str) -> str:
    """The newest error line's message, from its error name on (an earlier record's "Latest error"
    line gives the same message, not a nested one)."""
    found = [m.group(0).strip() for line in text.splitlines() if (m := _ERROR.search(line))]
    return found[-1] if found else ""


def faithful_record(entries: Sequence[Entry], facts: Sequence[Fact], count: Count, cap: int) -> str:
    """The record a careful model writes from `entries`, within `cap` tokens (what matters most first)."""
    text = "\n".join(t for _, t in entries)
    lines = ["## State"]
    request = _latest_request(entries)
    if request:
        lines.append(_LATEST + request)
    error = _latest_error(text)
    if error:
        lines.append(f"- Latest error: {error}")
    steps = _NEXT.findall(text)
    if steps:
        lines.append(f"- Next: {steps[-1].strip()}")
    kept = [f.text for f in facts if f.text in text]
    if kept:
        lines += ["## Facts and decisions", *(f"- {k}" for k in kept)]
    paths = list(dict.fromkeys(_PATH.findall(text)))
    if paths:
        lines += ["## Files", *(f"- {p}" for p in paths)]
    out: list[str] = []
    used = 0
    for line in lines:
        cost = count(line) + 1
        if used + cost > cap:
            break
        out.append(line)
        used += cost
    return "\n".join(out)


STAND_INS = ("lossy", "faithful")
