"""What each layer costs in the prompt cache: the Claude bill at the steady pace, split by cause.

    ledger = Ledger()
    ledger.cause = edits(before, after)       # what the policy did to the history before this request
    ledger.turn(keys, sizes, hit, ..., bill)  # one main request: its reads and writes, by cause
    ledger.whole("summary calls", bill, out)  # a summary call or a recall round trip, whole

A request reads its cached prefix and writes the rest. What it writes is one of:

- *new*: content the session added since the last request (the reply, its tool results, the user's
  next message) and the frame of the first request: what every policy writes once;
- *rewritten* by a layer: content sent before whose cached prefix the layer's edit invalidated, and
  the layer's own new text (a stub, a placeholder, a record). The cause is what the policy did to the
  history before this request, seen from the outside the same way for every policy (`edits`): a
  record it added is *summary*; fewer messages and no record, *drop*; a message changed in place
  (L1's stubs, masking's placeholders, the micro-compaction of java-s06, ours' L0 of old tool
  inputs), *clear*;
- *unmarked*: rewritten with no edit before it, where the marks a request placed did not cover what
  the next one sent (Anthropic reads back only a marked prefix; at the steady pace nothing expires).

The bill itself is `agent_cli.billing`'s (`bench_billing.py`): a unit after the request's last
breakpoint is sent uncached, billed as input on the line its unit belongs to.

Summary calls and recall round trips are their own lines, read, write and output together; the turns'
output is a line too. The lines add up to the run's Claude bill at the steady pace.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from agent_cli.billing import Bill
from agent_cli.core.messages import Message
from agent_cli.providers.model_info import ModelInfo
from agent_cli.tokens.ratio import NEW_TOKENIZER_FACTOR

__all__ = ["CAUSES", "LINES", "Ledger", "edits", "first"]

CAUSES = ("clear", "summary", "drop")
LINES = ("reads", "new", *CAUSES, "unmarked", "output", "summary calls", "recall")


def edits(before: Sequence[Message], after: Sequence[Message]) -> str | None:
    """What a policy did to the history between `before` (what it was given) and `after` (what it
    sends): 'summary', 'drop', 'clear', or None when it sent the history as given."""
    if len(before) == len(after) and all(a is b for a, b in zip(before, after, strict=True)):
        return None
    given = {id(m) for m in before}
    made = [m for m in after if id(m) not in given]
    if any(m.summary is not None for m in made):
        return "summary"
    if len(after) < len(before):
        return "drop"
    return "clear"


def first(a: str | None, b: str | None) -> str | None:
    """Of two edits before one request, the one that changed the earlier message (a record replaces
    the oldest span, a drop the oldest messages, a clear what it stubs)."""
    for cause in ("summary", "drop", "clear"):
        if cause in (a, b):
            return cause
    return None


@dataclass
class Ledger:
    """Reference tokens by line (see the module); `cause` is set before each main request."""

    tokens: dict[str, dict[str, int]] = field(
        default_factory=lambda: {line: {"read": 0, "write": 0, "input": 0, "output": 0} for line in LINES}
    )
    cause: str | None = None
    frame_reads: int = 0  # of "reads": the frame, read back by every main request after the first
    _sent: set[str] = field(default_factory=set)  # every content block a main request sent

    def turn(
        self,
        keys: Sequence[str],
        sizes: Sequence[int],
        hit: int,
        output: int,
        own: Sequence[bool],
        bill: Bill,
    ) -> None:
        """One main request: its message units' `keys` and `sizes` (the frame first, then each unit),
        `hit` of them read from the cache (`bill.read` tokens), `own[i]` whether unit i is content of
        the session's own (added by the session, not made by the policy); `bill.input` tokens at its
        end went uncached."""
        self.tokens["reads"]["read"] += bill.read
        self.frame_reads += sizes[0] if hit else 0
        self.tokens["output"]["output"] += output
        lines: list[tuple[str, int]] = []
        short = bill.read - sum(sizes[:hit])  # a read that ended inside the frame
        for n in range(hit, len(sizes)):
            if n == 0:
                line = "new"  # the frame, written by the first request
            else:
                key, mine = keys[n - 1], own[n - 1]
                if key not in self._sent and mine:
                    line = "new"
                elif self.cause is not None:
                    line = self.cause
                else:
                    line = "unmarked"
            lines.append((line, sizes[n] - (short if n == hit else 0)))
        uncached = bill.input
        for line, size in reversed(lines):
            sent = min(size, uncached)
            uncached -= sent
            self.tokens[line]["input"] += sent
            self.tokens[line]["write"] += size - sent
        self._sent.update(keys)
        self.cause = None

    def whole(self, line: str, bill: Bill, output: int) -> None:
        got = self.tokens[line]
        got["read"] += bill.read
        got["write"] += bill.write
        got["input"] += bill.input
        got["output"] += output

    def output(self, line: str, output: int) -> None:
        self.tokens[line]["output"] += output

    def dollars(self, line: str, prices: ModelInfo) -> float:
        """One line at Claude's prices (Claude's count: the reference count times the tokenizer ratio)."""
        got = self.tokens[line]
        billed = (
            got["read"] * prices.cache_read_price
            + got["write"] * prices.cache_write_price
            + got["input"] * prices.input_price
            + got["output"] * prices.output_price
        )
        return NEW_TOKENIZER_FACTOR * billed / 1e6

    def floor(self, prices: ModelInfo) -> float:
        """What the run would cost had the policy kept nothing but the frame: the new writes, the
        output, and the frame read back by every main request after the first."""
        frame = NEW_TOKENIZER_FACTOR * self.frame_reads * prices.cache_read_price / 1e6
        return self.dollars("new", prices) + self.dollars("output", prices) + frame
