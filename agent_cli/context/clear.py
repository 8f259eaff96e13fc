"""L1: replace old tool results with one-line stubs, in batches; and what a stub says.

Pure. The newest results are protected by a token budget; everything older becomes a stub naming the
tool, its input, what the output held and how to get it back. The tool_use / tool_result ids stay,
so every pair stays valid. Images are cleared the same way: a result's images go with its text (its
stub names them), and an image the user attached (`@shot.png`, an `ImageBlock` in a user message)
becomes a one-line stub naming the file, which `recall` brings back as the image itself. An image
weighs what the provider charges for it (tokens/images.py), not its base64. Any edit to the history
invalidates the provider's prompt cache from that point on, so L1 acts only when a batch frees at
least `min_batch_tokens` (gemini-cli: 30k; opencode: 20k) and otherwise leaves the history, and the
cache, alone.

*What a stub says the result held*, in a few identifiers, so a model asked about it later knows
what to recall and a record built from the stubs still has the facts:

- a failure: its status (`exit code 1`, `timed out after 30s`) and its most telling line;
- a file read (lines numbered like `cat -n`): the top-level names it defines (`def`, `class`,
  `function`, ...) or, for a config file, its sections;
- a search (lines like `path:line:text`): the files it matched;
- images it showed (`read_file` on a picture): their names and sizes.

`held` reads the result before it is cleared; `stub_failure` reads a failure back from a stub (the
digest's and the fidelity check's latest error).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from agent_cli.context.signals import Failure, failure
from agent_cli.core.images import ImageBlock
from agent_cli.core.messages import CLEARED_PREFIX, Block, Message, TextBlock, ToolResult, ToolUse
from agent_cli.tokens.images import image_tokens

__all__ = [
    "STUB_PREFIX",
    "ClearPlan",
    "apply_clear",
    "clearable",
    "held",
    "image_names",
    "image_stub",
    "is_stub",
    "plan_clear",
    "recall_phrase",
    "stub_failure",
    "stub_for",
]

STUB_PREFIX = CLEARED_PREFIX
# A result this small is not worth a stub (the stub costs about this much).
MIN_CLEARABLE_TOKENS = 60
_PHRASE_KEYS = ("path", "file_path", "pattern", "command", "query", "url")
# The key `clearable` gives an image the user attached (it has no call id): its place in its message.
IMAGE_KEY = "image#"
_CHARS_PER_TOKEN = 4  # an image's weight beside text, in characters


# -- a stub: the one line that replaces a result or an image ---------------------------------------

# An image a stub names: `image NAME (WxH px)`, `images A (WxH px), B (WxH px)`.
_STUBBED_IMAGE = re.compile(r"(?:\bimages?|,) ([^\s,()]+) \(\d+x\d+ px\)")


def image_names(messages: Sequence[Message]) -> list[str]:
    """The names of the images `messages` showed, in order, once each: those still there and those
    a stub stands for (a record names them, so the model knows what recall can show again)."""
    names: list[str] = []
    for message in messages:
        names.extend(i.name for i in message.images)
        for block in message.content:
            text = block.content if isinstance(block, ToolResult) else getattr(block, "text", "")
            if isinstance(text, str) and text.startswith(STUB_PREFIX):
                names.extend(_STUBBED_IMAGE.findall(text))
    return list(dict.fromkeys(names))


def image_stub(image: ImageBlock) -> str:
    """The one line that replaces an image the user attached."""
    phrase = json.dumps(image.name, ensure_ascii=False)
    size = f"{image.width}x{image.height} px"
    how = f"call recall({phrase}) to see it again"
    return f"{STUB_PREFIX}image {image.name} ({size}) the user attached; {how}]"


def is_stub(result: ToolResult) -> bool:
    return result.content.startswith(STUB_PREFIX)


def recall_phrase(use: ToolUse | None, tool_use_id: str) -> str:
    """A phrase that recall finds this call's result by: its path or command, else its id."""
    if use is not None:
        for key in _PHRASE_KEYS:
            value = use.input.get(key)
            # Only phrases that appear literally in the logged JSON input.
            if isinstance(value, str) and 0 < len(value) <= 120 and json.dumps(value)[1:-1] == value:
                return value
    return tool_use_id


def stub_for(use: ToolUse | None, result: ToolResult) -> str:
    """The one line that replaces a cleared result."""
    if use is not None:
        args = json.dumps(dict(use.input), ensure_ascii=False, sort_keys=True)
        if len(args) > 160:
            args = args[:157] + "..."
        call = f"{use.name} {args}"
    else:
        call = f"tool call {result.tool_use_id}"
    lines = result.content.count("\n") + (1 if result.content and not result.content.endswith("\n") else 0)
    what = "failed with" if result.is_error else "returned"
    content = held(result)
    about = f" ({content})" if content else ""
    # The call id, not the path: recall(id) returns this very output, while a path
    # would find the newest of several reads of the same file first.
    phrase = json.dumps(result.tool_use_id, ensure_ascii=False)
    how = f"call recall({phrase}) or re-run it to see it again"
    return f"{STUB_PREFIX}{call} {what} {lines:,} lines{about}; {how}]"


# -- what a stub says the result held --------------------------------------------------------------

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


# -- the batch L1 clears ---------------------------------------------------------------------------


def _image_chars(image: ImageBlock) -> int:
    return image_tokens(image.width, image.height) * _CHARS_PER_TOKEN


def _parts(message: Message) -> tuple[list[tuple[str, int, bool]], int]:
    """What of `message` L1 may clear, newest last: (key, weight in characters, already a stub), and
    the weight of the whole message those shares are of. A tool result's key is its call id; an
    image the user attached is keyed by its place. Without images the weights are the results'
    characters alone, as they always were."""
    parts: list[tuple[str, int, bool]] = []
    for j, block in enumerate(message.content):
        if isinstance(block, ToolResult):
            weight = len(block.content) + sum(_image_chars(i) for i in block.images)
            parts.append((block.tool_use_id, weight, is_stub(block)))
        elif isinstance(block, ImageBlock) and message.role == "user":
            parts.append((f"{IMAGE_KEY}{j}", _image_chars(block), False))
    total = sum(w for _, w, _ in parts)
    if any(isinstance(b, ImageBlock) for b in message.content):
        total += sum(len(b.text) for b in message.content if isinstance(b, TextBlock))
    return parts, total or 1


@dataclass(frozen=True, slots=True)
class ClearPlan:
    messages: list[Message]  # the history with the batch cleared
    originals: list[Message]  # the changed messages as they were, each after its call (written to disk first)
    cleared: int  # results replaced by stubs
    freed: int  # estimated tokens freed


def clearable(
    messages: Sequence[Message],
    counts: Sequence[int],
    *,
    protect_tokens: int,
    stub_tokens: int = 50,
    start: int = 0,
) -> tuple[dict[int, set[str]], int]:
    """The results older than the newest `protect_tokens` (by message index), and what stubbing them frees.

    `counts[i]` is message i's token count; a result's share of its message is
    estimated by characters, so no text is counted again here. Messages before `start` are left
    as they are (a span whose record is being prepared: decide._prepare).
    """
    newer = 0  # tokens of results newer than the one being looked at
    to_clear: dict[int, set[str]] = {}
    freed = 0
    newest_round = True  # the results (or images) the model has just been given are never cleared
    for i in range(len(messages) - 1, -1, -1):
        parts, total_chars = _parts(messages[i])
        if not parts:
            continue
        for key, weight, stubbed in reversed(parts):
            size = counts[i] * weight // total_chars
            newer += size
            protected = newest_round or newer <= protect_tokens or i < start
            if protected or stubbed or size < MIN_CLEARABLE_TOKENS:
                continue
            to_clear.setdefault(i, set()).add(key)
            freed += max(size - stub_tokens, 0)
        newest_round = False
    return to_clear, freed


def next_change(messages: Sequence[Message], counts: Sequence[int]) -> int | None:
    """The oldest message a later clear could change: the first holding a result that is not a stub
    and is big enough to clear, None when there is none. Everything before it stays byte for byte
    until a summary, so a provider that caches at marked points can mark the message before it and
    read that prefix back after the next clear. The newest round counts: this request protects it,
    but by the next it is the previous round, the result a clear stubs first once the history is
    past the line (each turn's file read then stubs the one before it)."""
    for i in range(len(messages)):
        parts, total_chars = _parts(messages[i])
        for _, weight, stubbed in parts:
            if not stubbed and counts[i] * weight // total_chars >= MIN_CLEARABLE_TOKENS:
                return i
    return None


def apply_clear(messages: Sequence[Message], to_clear: dict[int, set[str]], freed: int) -> ClearPlan:
    """The history with the chosen results replaced by stubs."""
    uses = {use.id: use for m in messages for use in m.tool_uses}
    out = list(messages)
    originals: list[Message] = []
    cleared = 0
    for i, ids in sorted(to_clear.items()):
        if i > 0 and messages[i - 1].tool_uses:  # the call, so the saved span names what each result was
            originals.append(messages[i - 1])
        original = messages[i]
        blocks: list[Block] = []
        for j, block in enumerate(original.content):
            if isinstance(block, ToolResult) and block.tool_use_id in ids:
                stub = stub_for(uses.get(block.tool_use_id), block)
                blocks.append(ToolResult(block.tool_use_id, stub, block.is_error))  # (its images go too)
                cleared += 1
            elif isinstance(block, ImageBlock) and f"{IMAGE_KEY}{j}" in ids:
                blocks.append(TextBlock(image_stub(block)))
                cleared += 1
            else:
                blocks.append(block)
        out[i] = original.replace(blocks)
        originals.append(original)
    return ClearPlan(out, originals, cleared, freed)


def plan_clear(
    messages: Sequence[Message], counts: Sequence[int], *, protect_tokens: int, min_batch_tokens: int
) -> ClearPlan | None:
    """Stub every result older than the newest `protect_tokens` of results, if that frees enough."""
    to_clear, freed = clearable(messages, counts, protect_tokens=protect_tokens)
    if not to_clear or freed < min_batch_tokens:
        return None
    return apply_clear(messages, to_clear, freed)
