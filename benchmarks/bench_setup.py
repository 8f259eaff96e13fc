"""What every replay script shares: its windows and seeds, the frame, the sessions, the stand-ins, the prices.

    frame(), frame_tokens()   the product's system prompt (a fixed day, project path, environment) and tools
    session(shape, seed, o)   one replayable session, made once per process
    writer(stand_in, s)       the stand-in that writes every policy's records on session `s`
    prices()                  cache name -> the model it bills at (Sonnet 5.5, GPT-6.2 Sol)

`bench_report.py` (the whole report) and `summary_writer.py` (the summary writer's trade-off) run
the same replays from these.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from bench_billing import Wire
from bench_policies import Writer
from bench_replay import reference_count
from bench_sessions import Session, make_session
from bench_standins import faithful_record, lossy_record
from bench_tables import Prices

from agent_cli.context.protocol import Frame
from agent_cli.prompt.system import build_system_prompt
from agent_cli.providers.models import lookup
from agent_cli.tools.registry import default_tools

__all__ = ["PRICED", "SEEDS", "WINDOWS", "frame", "frame_tokens", "prices", "session", "writer"]

WINDOWS = (32_000, 200_000, 1_000_000)
SEEDS = (1, 2, 3, 4, 5)
PRICED = ("claude-sonnet-5-5", "gpt-6.2-sol")


def prices() -> Prices:
    claude, openai = lookup(PRICED[0]), lookup(PRICED[1])
    assert claude is not None and openai is not None
    return {"claude": claude, "claude-paused": claude, "openai": openai, "openai-paused": openai}


# The system prompt's environment line, fixed: the machine's own (its kernel release, its Python)
# would make the frame, and so every request and count, differ from one machine to the next.
ENVIRONMENT = "Environment: project root /project; Linux 6.8.0; Python 3.11.9; today is 2026-11-30."


@cache
def frame() -> Frame:
    """The product's system prompt and tools, the same bytes on every machine."""
    from datetime import date

    system = build_system_prompt(Path("/project"), instructions=None, today=date(2026, 11, 30))
    lines = [ENVIRONMENT if line.startswith("Environment: ") else line for line in system.split("\n")]
    return Frame("\n".join(lines), default_tools().specs())


@cache
def frame_tokens() -> int:
    """The frame's count as the Anthropic wire sends it (the system block, each tool)."""
    return Wire(frame(), reference_count).send([]).tokens


@cache
def session(shape: str, seed: int, outputs: str) -> Session:
    return make_session(shape, seed=seed, outputs=outputs)


def writer(stand_in: str, s: Session) -> Writer:
    if stand_in == "lossy":
        return lambda entries, cap: lossy_record(entries, reference_count, cap)
    facts = s.facts
    return lambda entries, cap: faithful_record(entries, facts, reference_count, cap)
