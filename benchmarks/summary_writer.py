"""The summary writer's trade-off: the session's own model against a cheaper one, on the replay.

    python benchmarks/summary_writer.py            # every session kind, window, seed and stand-in
    python benchmarks/summary_writer.py --quick    # the long session, one seed, 200k only

Ours (the product's policy, its defaults) on the replay's sessions (`bench_replay.py`), each run
twice with the same stand-in writing the same records:

- **same**: the session's model writes the summaries (`context.summary_model` empty): its summary
  requests go through its own caches with its turns, as in every other table of the report.
- **own**: another model writes them. It has its own caches (Anthropic's marked, OpenAI's
  automatic, at both paces), which see only the summary requests: it reads none of the session
  model's cached prefix, reads back only what it cached itself (the frame, when the summary
  before was within the TTL), and pays for the rest at cache-write prices, since every request
  marks its last message (the product's wire). The session model's caches no longer see the
  summary requests; its turns are the same requests, byte for byte (checked).

The own-cache bill is priced at the writer's prices (one request at a time, through the product's
`models.cost`, so Haiku 5.5's tier above 100k input tokens and GPT-6.x's above 272k apply), and
at the session model's own prices too: that column is what the lost cache alone costs. The
records are the stand-in's whatever the model, so every probe scores the same in both routes; how
much worse a smaller model's records would be is not measured here (the lossy stand-in against
the faithful one is the report's bound on what weaker records lose).
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import multiprocessing
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_billing import Caches, ToolChoice, Wire  # noqa: E402
from bench_policies import Ours  # noqa: E402
from bench_replay import (  # noqa: E402
    CACHES,
    CLAUDE_RATIO,
    PAUSED,
    PROBES,
    Run,
    _Clocks,
    reference_count,
    replay,
    replay_paced,
)
from bench_sessions import OUTPUTS, SHAPES  # noqa: E402
from bench_setup import SEEDS, WINDOWS, frame, frame_tokens, session, writer  # noqa: E402
from bench_standins import STAND_INS  # noqa: E402

from agent_cli.config.settings import ContextSettings  # noqa: E402
from agent_cli.core.messages import Message, Usage  # noqa: E402
from agent_cli.providers.model_info import ModelInfo  # noqa: E402
from agent_cli.providers.models import cost, lookup  # noqa: E402

__all__ = ["SESSION_MODELS", "WRITERS", "Cell", "cells", "section"]

SESSION_MODELS = {"claude": "claude-sonnet-5-5", "openai": "gpt-6.2-sol"}
WRITERS = {"claude": ("claude-haiku-5-5",), "openai": ("gpt-6-luna", "gpt-6.1-terra")}
Unit = tuple[str, str, int, int, str]  # shape, outputs, seed, window, stand-in


def _info(name: str) -> ModelInfo:
    info = lookup(name)
    assert info is not None, name
    return info


class OwnCaches:
    """Another model's caches, for the summary requests alone; every request kept as its usage."""

    def __init__(self, run: Run, wire: Wire, clocks: _Clocks) -> None:
        self.run, self.wire, self.clocks = run, wire, clocks
        self.caches = Caches()  # its own entries: another model reads none of the session model's
        self.calls: dict[str, list[Usage]] = {c: [] for c in CACHES}

    def bill(
        self,
        messages: list[Message],
        output: int,
        part: str,
        anchor: int | None = None,
        own: list[bool] | None = None,
        tool_choice: ToolChoice = "auto",
    ) -> int:
        # (sent at the run's clock, as the run's own biller sends it: the bridge a request gets
        # depends on which entries are still alive, and the record of them is the session's)
        at = self.clocks.paused if self.run.pace == "paused" else self.clocks.steady
        sent = self.wire.send(messages, tool_choice, anchor, at=at)
        self.run.fingerprint = hashlib.sha1((self.run.fingerprint + sent.fingerprint).encode()).hexdigest()
        for name, bill in self.caches.bill(sent, self.clocks.steady, self.clocks.paused).items():
            ratio = CLAUDE_RATIO if name.startswith("claude") else 1.0  # Claude's tokens, for its tiers

            def scaled(tokens: int, ratio: float = ratio) -> int:
                return round(tokens * ratio)

            self.calls[name].append(
                Usage(
                    input_tokens=scaled(bill.input),
                    output_tokens=scaled(output),
                    cache_read_tokens=scaled(bill.read),
                    cache_write_tokens=scaled(bill.write),
                )
            )
        return sent.tokens

    def dollars(self, cache: str, prices: ModelInfo) -> float:
        return sum(cost(prices, u) for u in self.calls[cache])


@dataclass
class Pair:
    """One session through ours twice: the session's model writing, and another model writing."""

    same: Run
    own: Run
    writer_calls: dict[str, list[Usage]] = field(default_factory=dict)

    @staticmethod
    def session_model(cache: str) -> ModelInfo:
        """The model a cache's bill is priced at: Sonnet 5.5 for Claude's, GPT-6.2 Sol for OpenAI's."""
        return _info(SESSION_MODELS[cache.split("-")[0]])

    def same_dollars(self, cache: str) -> float:
        return self.same.dollars(cache, self.session_model(cache))

    def own_dollars(self, cache: str, writer: str) -> float:
        turns = self.own.dollars(cache, self.session_model(cache))
        return turns + sum(cost(_info(writer), u) for u in self.writer_calls[cache])


def run_pair(unit: Unit, same: Run | None = None) -> Pair:
    """`same`: the run with the session's model writing, if made already (the report's replay makes
    it: ours with `ContextSettings()` and this stand-in); it is checked against the other below."""
    shape, outputs, seed, window, stand_in = unit
    s = session(shape, seed, outputs)

    def ours() -> Ours:
        return Ours(window, frame(), reference_count, writer(stand_in, s), ContextSettings())

    if same is None:
        same = replay_paced(s, ours, frame_tokens(), seed=seed)
    made: list[OwnCaches] = []

    def own_caches(run: Run, wire: Wire, clocks: _Clocks) -> OwnCaches:
        made.append(OwnCaches(run, wire, clocks))
        return made[-1]

    own = replay(s, ours(), frame_tokens(), seed=seed, writer=own_caches)
    # Only the billing differs: the same requests, in the same order, and the same records.
    assert own.fingerprint == same.fingerprint and own.probes == same.probes, unit
    assert own.parts["summaries"].output == 0 and own.summary_calls == same.summary_calls
    calls = made[0].calls
    if same.paused is not None:  # ours read the clock: its paused figures from a run at that pace
        made.clear()
        paused = replay(s, ours(), frame_tokens(), seed=seed, writer=own_caches, pace="paused")
        assert paused.fingerprint == same.paused.fingerprint, unit
        own.with_paused(paused)
        calls.update({c: made[0].calls[c] for c in CACHES if c.endswith(PAUSED)})
    return Pair(same, own, calls)


@dataclass
class Cell:
    """One session kind and window, one stand-in, over the seeds."""

    shape: str
    outputs: str
    window: int
    stand_in: str
    pairs: list[Pair]

    def mean(self, value: Sequence[float]) -> float:
        return sum(value) / len(value)

    def same(self, cache: str) -> float:
        return self.mean([p.same_dollars(cache) for p in self.pairs if p.same.finished])

    def own(self, cache: str, writer: str) -> float:
        return self.mean([p.own_dollars(cache, writer) for p in self.pairs if p.same.finished])

    def calls(self) -> float:
        return self.mean([p.same.summary_calls for p in self.pairs])

    def summaries(self) -> float:
        """What the summary calls cost of the Sonnet bill (steady pace) when Sonnet writes them."""
        sonnet = _info(SESSION_MODELS["claude"])
        return self.mean([p.same.parts["summaries"].dollars(sonnet, CLAUDE_RATIO) for p in self.pairs])

    def share(self, probe: str) -> float | None:
        got = [s for p in self.pairs if (s := p.same.share(probe)) is not None]
        return self.mean(got) if got else None


def units(
    shapes: Sequence[str], outputs: Sequence[str], seeds: Sequence[int], windows: Sequence[int]
) -> list[Unit]:
    return [
        (sh, o, se, w, st)
        for sh in shapes
        for o in outputs
        for w in windows
        for st in STAND_INS
        for se in seeds
    ]


def cells(
    shapes: Sequence[str],
    outputs: Sequence[str],
    seeds: Sequence[int],
    windows: Sequence[int],
    jobs: int = 1,
    made: Mapping[Unit, Run] | None = None,
) -> list[Cell]:
    """`made`: runs of ours with the session's model writing that are made already, by unit (the
    report's replay: the same runs by construction, `run_pair` checks each against its pair)."""
    work = units(shapes, outputs, seeds, windows)
    given = [(u, _as_made_here(made[u]) if made and u in made else None) for u in work]
    if jobs <= 1:
        pairs = [run_pair(u, same) for u, same in given]
    else:
        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            pairs = pool.starmap(run_pair, given, chunksize=2)
    grouped: dict[tuple[str, str, int, str], list[Pair]] = {}
    for (shape, kind, _, window, stand_in), pair in zip(work, pairs, strict=True):
        grouped.setdefault((shape, kind, window, stand_in), []).append(pair)
    return [Cell(*key, value) for key, value in grouped.items()]


def _as_made_here(run: Run) -> Run:
    """A copy of another script's run as `replay` returns it here (without its labels)."""
    out = copy.deepcopy(run)
    out.outputs = out.summarizer = ""
    return out


def _change(new: float, old: float) -> str:
    return f"{new / old - 1:+.1%}" if old else "n/a"


def _row(c: Cell) -> str:
    """One cell: each side's bill with its own model writing, then with the other writers."""
    cols = [f"{c.shape} | {c.outputs} | {c.window // 1000}k | {c.calls():.1f}"]
    for side in ("claude", "openai"):
        same = c.same(side)
        cols += [f"{same:.2f}"] + ([f"{c.summaries():.2f}"] if side == "claude" else [])
        cols += [_change(c.own(side, SESSION_MODELS[side]), same)]
        cols += [f"{c.own(side, w):.2f} ({_change(c.own(side, w), same)})" for w in WRITERS[side]]
    return "| " + " | ".join(cols) + " |"


def section(found: Sequence[Cell], default: str | None = None) -> list[str]:
    """The report's section on the summary writer (bench_report.py writes it into docs/benchmarks.md)."""
    default = ContextSettings().summary_model if default is None else default
    faithful = [c for c in found if c.stand_in == "faithful"]
    lossy = [c for c in found if c.stand_in == "lossy"]
    lines = [
        "## The summary writer (`context.summary_model`)",
        "",
        "Ours with the session's model writing the summaries against a cheaper model of the same",
        "provider (`python benchmarks/summary_writer.py`). The cheaper model reads none of the session",
        "model's cached prefix: its summary requests go through caches of its own, which hold only what it",
        "cached itself (the frame, within the TTL), so it pays cache-write prices for the rest; the session",
        "model's turns are the same requests, and its cache as warm. \"Own cache\" is the session's model",
        "writing through such a cache of its own: what the lost cache alone costs. Mean of the seeds, steady",
        "pace, faithful stand-in; each writer's request priced at its own rates (Haiku 5.5's tier above 100k",
        "input tokens included).",
        "",
        "| session | outputs | window | summary calls | Sonnet 5.5 writes $ | of which summaries "
        "| own cache | Haiku 5.5 writes $ | GPT-6.2 Sol writes $ | own cache | GPT-6 Luna writes $ "
        "| GPT-6.1 Terra writes $ |",
        "|" + "---|" * 12,
        *[_row(c) for c in faithful],
        "",
    ]
    for cache in CACHES:
        side = "claude" if cache.startswith("claude") else "openai"
        for name in WRITERS[side]:
            changes = [c.own(cache, name) / c.same(cache) - 1 for c in found]
            cheaper = sum(1 for x in changes if x < 0)
            pace = "paused" if cache.endswith("paused") else "steady"
            lines.append(
                f"- {name} beside {SESSION_MODELS[side]}, {pace} pace, both stand-ins: cheaper in {cheaper} "
                f"of {len(changes)} cells, the bill {min(changes):+.1%} to {max(changes):+.1%} "
                f"(mean {sum(changes) / len(changes):+.1%})"
            )
    lines += [
        "",
        "The records are the stand-in's whichever model writes, so every probe scores the same in every",
        "column. A smaller model may write worse records; the replay cannot tell how much. Its bound is",
        "the lossy stand-in against the faithful one (ours, mean over the cells):",
        "",
        "| probe | faithful | lossy |",
        "|---|---|---|",
    ]
    for probe in PROBES:
        f = [s for c in faithful if (s := c.share(probe)) is not None]
        lo = [s for c in lossy if (s := c.share(probe)) is not None]
        lines.append(f"| {probe} | {sum(f) / len(f):.0%} | {sum(lo) / len(lo):.0%} |")
    lines += ["", *_default_text(found, default), ""]
    return lines


def _span(found: Sequence[Cell], side: str, writer: str, small: bool) -> str:
    """The bill's change with `writer`, lowest to highest, on the 32k cells (`small`) or the others."""
    changes = [c.own(side, writer) / c.same(side) - 1 for c in found if (c.window <= 32_000) == small]
    return f"{min(changes):+.1%} to {max(changes):+.1%}" if changes else "n/a"


def _default_text(found: Sequence[Cell], default: str) -> list[str]:
    """Why the default is what it is, in the figures above (written again whenever they are)."""
    terra = [c.own("openai", "gpt-6.1-terra") < c.same("openai") for c in found]
    shown = (
        f'`summary_model = "{default}"`'
        if default
        else '`summary_model = ""`: the session\'s own model writes'
    )
    return [
        f"**Default: {shown}.** At the windows the providers' own endpoints give",
        f"(200k and 1M, alike under the {ContextSettings().working_budget // 1000}k working budget) "
        "Haiku 5.5 changes the bill beside Sonnet 5.5 by",
        f"{_span(found, 'claude', 'claude-haiku-5-5', False)} and GPT-6 Luna beside GPT-6.2 Sol by "
        f"{_span(found, 'openai', 'gpt-6-luna', False)}; the",
        f"larger changes ({_span(found, 'claude', 'claude-haiku-5-5', True)}, "
        f"{_span(found, 'openai', 'gpt-6-luna', True)}) are at 32k, a window met mostly at",
        "a local server or a gateway (`base_url`), which a default naming Haiku or Luna could not reach.",
        "A writer must be far cheaper to pay for the cache it cannot read: GPT-6.1 Terra, at half Sol's",
        f"prices, is cheaper in {sum(terra)} of {len(terra)} cells. A default naming another model would",
        "also fail where the key may not use it (an OpenAI project can allow-list its models), and a smaller",
        "model's records are not measured here, while a record is the session's memory. To take the saving,",
        'set `summary_model = "claude-haiku-5-5"` (or `"gpt-6-luna"`); /cost then shows the writer on its',
        "own line.",
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="the long session, one seed, 200k only")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    shapes = ["long"] if args.quick else list(SHAPES)
    seeds = SEEDS[:1] if args.quick else SEEDS
    windows = [200_000] if args.quick else list(WINDOWS)
    print("\n".join(section(cells(shapes, list(OUTPUTS), seeds, windows, args.jobs))))


if __name__ == "__main__":
    main()
