"""What the REPL and the headless printer show, computed from plain values (pure, no terminal).

The toolbar line, token figures, one-line descriptions of tool calls, a
record's preview, and the rows behind `/context`, `/cost`, `/model` and
`/transcripts`. `render.py` draws them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from agent_cli.agent.modes import LABELS
from agent_cli.config.settings import PermissionMode
from agent_cli.core.messages import Usage
from agent_cli.core.text import visible, visible_exact
from agent_cli.providers.models import MODELS, cost, lookup
from agent_cli.tools.base import CallView

__all__ = [
    "ContextReport",
    "ContextRow",
    "CostRow",
    "context_report",
    "cost_rows",
    "describe_call",
    "format_context_line",
    "format_tokens",
    "known_models",
    "listed_sessions",
    "mode_label",
    "model_choices",
    "model_rows",
    "resume_lines",
    "session_rows",
]


def format_tokens(n: int) -> str:
    """153600 -> '153k', 1047576 -> '1.0M', 900 -> '900'."""
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f}M"
    if n >= 10_000:
        return f"{n // 1000}k"
    if n >= 1_000:
        return f"{n / 1000:.1f}k"
    return str(n)


MODE_MARKS: dict[PermissionMode, str] = {
    "acceptEdits": "⏵⏵",
    "plan": "⏸",
    "auto": "⏵⏵",
    "bypassPermissions": "⏵⏵",
}


def mode_label(mode: PermissionMode, *, sandboxed: bool = True) -> str:
    """The toolbar's first words for an approval mode (agent.modes): none in the default mode. Auto
    mode where no sandbox confines says that it asks (it works as default mode)."""
    if mode not in MODE_MARKS:
        return ""
    label = LABELS[mode] if mode != "auto" or sandboxed else f"{LABELS[mode]}: no sandbox, so it asks"
    return f"{MODE_MARKS[mode]} {label} (shift+tab) · "


def format_context_line(
    model: str,
    tokens: int | None,
    window: int,
    trigger_at: int,
    trigger_ratio: float,
    width: int | None = None,
) -> str:
    """The bottom toolbar: `model · context 41,200 / 200,000 (21%) · auto-compact at 153k (80% of budget)`.

    Shorter forms when `width` columns cannot hold it: the percentage matters most.
    """
    pct = "" if tokens is None else f" ({tokens * 100 // max(window, 1)}%)"
    used = "context …" if tokens is None else f"context {tokens:,} / {window:,}{pct}"
    line = f"{model} · {used} · auto-compact at {format_tokens(trigger_at)} ({trigger_ratio:.0%} of budget)"
    if width is None or len(line) <= width:
        return line
    count = "…" if tokens is None else f"{format_tokens(tokens)}/{format_tokens(window)}{pct}"
    short = f"{model} · {count} · compacts at {format_tokens(trigger_at)}"
    return short if len(short) <= width else count


def describe_call(view: CallView, args: Mapping[str, Any], width: int = 80) -> str:
    """A one-line summary of a tool call's input, as the tool's `view` shows it: `src/app.py`,
    `pytest -q`, `'TODO' in src`.

    The model wrote it: every character that does not show as itself is written out as the approval
    question writes it (`visible_exact`: escapes, NBSP, zero-width and format characters) before the
    line is flattened, so the line after an approved call shows the command that was approved, and a
    form feed or an escape stays visible rather than becoming a space or reaching the terminal."""
    text = " ".join(visible_exact(view.line(args)).split())
    return text if len(text) <= width else text[: max(1, width - 1)] + "…"


@dataclass(frozen=True, slots=True)
class ContextRow:
    name: str
    tokens: int
    percent: float


@dataclass(frozen=True, slots=True)
class ContextReport:
    model: str
    rows: tuple[ContextRow, ...]
    used: int
    window: int
    note: str

    @property
    def used_percent(self) -> float:
        return _pct(self.used, self.window)


def _pct(tokens: int, window: int) -> float:
    return round(100.0 * tokens / window, 1) if window > 0 else 0.0


def context_report(
    model: str,
    parts: Sequence[tuple[str, int]],
    *,
    window: int,
    trigger_at: int,
    trigger_ratio: float,
    reserve: int = 0,
    used: int | None = None,
    auto_compact: bool = True,
) -> ContextReport:
    """Rows for `/context`: each part of the request, the output reserve, and what is free.

    `used` is the request's count when the engine knows it better than the
    sum of its parts (it is anchored on the provider's own usage report).
    `auto_compact` is False once the engine stopped compacting by itself
    after repeated failures.
    """
    total = sum(t for _, t in parts) if used is None else used
    rows = [ContextRow(name, tokens, _pct(tokens, window)) for name, tokens in parts]
    if reserve:
        rows.append(ContextRow("output reserve", reserve, _pct(reserve, window)))
    free = max(window - total - reserve, 0)
    rows.append(ContextRow("free", free, _pct(free, window)))
    if not auto_compact:
        note = "auto-compaction is off after repeated failures"
    elif total >= trigger_at:
        note = f"auto-compaction is due: the next request compacts (trigger {trigger_at:,} tokens)"
    else:
        note = (
            f"auto-compaction fires at {trigger_at:,} tokens ({trigger_ratio:.0%} of the budget), "
            f"{trigger_at - total:,} from here"
        )
    return ContextReport(model, tuple(rows), total, window, note + "; /compact [focus] runs it now")


@dataclass(frozen=True, slots=True)
class CostRow:
    model: str
    usage: Usage
    dollars: float | None  # None: the model's prices are unknown


def cost_rows(usage_log: Iterable[tuple[str, Usage]]) -> list[CostRow]:
    """One row per model, then a total when there is more than one.

    Each call is priced on its own: a long request can cost more per token (Haiku 5.5 above 100k
    input tokens, GPT-6.x above 272k), so a sum of calls must not be priced as one.
    """
    usage: dict[str, Usage] = {}
    dollars: dict[str, float | None] = {}
    for model, one in usage_log:
        usage[model] = usage.get(model, Usage()) + one
        info = lookup(model)
        so_far = dollars.get(model, 0.0)
        dollars[model] = None if info is None or so_far is None else so_far + cost(info, one)
    rows = [CostRow(model, usage[model], dollars[model]) for model in sorted(usage)]
    if len(rows) > 1:
        total = Usage()
        for row in rows:
            total = total + row.usage
        known = [r.dollars for r in rows if r.dollars is not None]
        rows.append(CostRow("total", total, sum(known) if len(known) == len(rows) else None))
    return rows


def task_cost_rows(tasks: Iterable[tuple[str, Iterable[tuple[str, Usage]]]]) -> list[CostRow]:
    """One row per sub-agent (its label, its calls), each call priced on its own as the bill is;
    their calls are in the rows per model too (these say who spent them)."""
    rows = []
    for label, usage_log in tasks:
        priced = cost_rows(usage_log)
        if priced:
            rows.append(CostRow(label, priced[-1].usage, priced[-1].dollars))
    return rows


def resume_lines(session_id: str, width: int) -> list[str]:
    """How to come back to this session, on one line when it fits `width`, else two: the command
    (`agent --resume ID`) is never broken across rows, so it can be copied whole."""
    command = f"agent --resume {session_id}"
    one = f"session {session_id} saved · resume with: {command}"
    return [one] if len(one) < width else [f"session {session_id} saved · resume with:", command]


def known_models(provider: str | None = None) -> list[str]:
    """Model names from the model table, for /model and its completion."""
    return [m.name for m in MODELS.values() if provider is None or m.provider == provider]


def model_choices(provider: str, current: str) -> list[str]:
    """The models /model offers to switch to: the provider's models in the table that still answer,
    and the current one whatever its state."""
    return [
        m.name
        for m in MODELS.values()
        if m.provider == provider and (m.lifecycle != "retired" or m.name == current)
    ]


def model_rows(names: Iterable[str], current: str) -> list[str]:
    """One line per model for /model's list: its name, window, prices per million tokens, and its
    lifecycle when it is not active; the current one marked."""
    rows = []
    for name in names:
        info = MODELS[name]
        mark = "*" if name == current else " "
        price = f"${info.input_price:g} in / ${info.output_price:g} out"
        life = "" if info.lifecycle == "active" else f"  {info.lifecycle}"
        if info.shutdown and info.lifecycle != "active":
            life += f", until {info.shutdown}"
        rows.append(f"{mark} {name:<24} {format_tokens(info.context_window):>5} window  {price}{life}")
    return rows


def listed_sessions(sessions: Iterable[Any], current: str, limit: int = 20) -> list[Any]:
    """The sessions (`SessionInfo`) a list shows: those that hold messages, and the current one."""
    return [s for s in sessions if s.message_count or s.id == current][:limit]


def session_rows(sessions: Iterable[Any], current: str, limit: int = 20, width: int = 100) -> list[str]:
    """One line per listed session (`listed_sessions`), newest first, the current one marked.

    The first prompt is cut (on one line, visible) to what `width` columns leave.
    """
    lines: list[str] = []
    for info in listed_sessions(sessions, current, limit):
        updated: datetime = info.updated
        mark = "*" if info.id == current else " "
        head = (
            f"{mark} {info.id}  {updated.astimezone().strftime('%Y-%m-%d %H:%M')}  "
            f"{info.message_count:>4} msgs  {info.model or '?':<18} "
        )
        prompt = " ".join(visible(info.first_prompt).split())
        room = max(12, width - len(head) - 1)
        lines.append(head + (prompt if len(prompt) <= room else prompt[: room - 1] + "…"))
    return lines
