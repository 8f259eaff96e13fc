"""What a cleared result held, in a few identifiers, for its L1 stub; and reading it back.

A stub replaces a tool result L1 clears. It names the call and how to recall it; this module adds
what the output held, so a model asked about it later knows what to recall and a record built from
the stubs still has the facts:

- a failure: its status (`exit code 1`, `timed out after 30s`) and its most telling line;
- a file read (lines numbered like `cat -n`): the top-level names it defines (`def`, `class`,
  `function`, ...) or, for a config file, its sections;
- a search (lines like `path:line:text`): the files it matched;
- images it showed (`read_file` on a picture): their names and sizes.

Pure: text in, text out. `held` reads the result before it is cleared; `stub_failure` reads a
failure back from a stub (the digest's and the fidelity check's latest error).
"""

from __future__ import annotations

import re

from agent_cli.context.signals import Failure, failure
from agent_cli.core.messages import ToolResult

__all__ = ["held", "stub_failure"]

MAX_NAMES = 8
MAX_FILES = 5
ERROR_CHARS = 160
_NUMBERED_RE = re.compile(r"^\s*\d+\t(.*)$")
_NAME_RE = re.compile(
    r"^(?:export\s+)?(?:default\s+)?(?:pub(?:\(\w+\))?\s+)?(?:async\s+)?"
    r"(?:def|class|function|interface|type|struct|enum|trait|impl|fn|func|module|const|let|var)\s+"
    r"([A-Za-z_$][\w$]*)"
)
_SECTION_RE = re.compile(r"^\[\[?([\w.\- \"']+)\]\]?\s*$")  # TOML / INI `[listener]`
_MATCH_RE = re.compile(r"^([^\s:][^:\n]*):\d+[:-]")  # grep's `path:line:text`
# `... failed with N lines (STATUS; error: LINE); call recall(...)`: the last "N lines (" before it.
_HELD_RE = re.compile(r"^.*\s[\d,]+ lines \((?:(?P<status>[^;]+?); )?error: (?P<line>.*)\)$", re.S)


def _one_line(text: str, limit: int) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _listed(items: list[str], limit: int) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f", +{len(items) - limit} more" if len(items) > limit else "")


def held(result: ToolResult) -> str:
    """A few identifiers for what `result` held ("" when nothing stands out)."""
    if result.images:
        shown = [f"{i.name} ({i.width}x{i.height} px)" for i in result.images]
        return f"image{'s' if len(shown) > 1 else ''} {_listed(shown, MAX_FILES)}"
    failed = failure(result, ERROR_CHARS * 2)
    if failed is not None:
        status = f"{failed.status}; " if failed.status else ""
        return f"{status}error: {_one_line(failed.line, ERROR_CHARS)}"
    lines = result.content.split("\n")
    numbered = [m.group(1) for line in lines if (m := _NUMBERED_RE.match(line))]
    if numbered and len(numbered) * 2 >= len([ln for ln in lines if ln.strip()]):
        names = [m.group(1) for text in numbered if (m := _NAME_RE.match(text))]
        if not names:
            names = [m.group(1).strip() for text in numbered if (m := _SECTION_RE.match(text.strip()))]
        unique = list(dict.fromkeys(names))
        return f"defines {_listed(unique, MAX_NAMES)}" if unique else ""
    files = list(dict.fromkeys(m.group(1) for line in lines if (m := _MATCH_RE.match(line))))
    if files:
        return f"matches in {_listed(files, MAX_FILES)}"
    return ""


def stub_failure(stub_text: str) -> Failure | None:
    """The failure a stub records (its status and error line), or None when it records none."""
    body = stub_text.rsplit("; call recall(", 1)[0]
    found = _HELD_RE.match(body)
    if found is None:
        return None
    return Failure(found.group("line"), found.group("status") or "")
