"""One counter, two threads: the engine's summary call counts its request in the background while the
turn counts the next one. The counter's caches and its queue of reports to learn from must hold."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from agent_cli.core.messages import Message, Usage
from agent_cli.tokens.counter import TokenCounter
from agent_cli.tokens.tokenizer import Tokenizer


class _Characters:
    """An encoder that counts characters (no vocabulary to load), and lets other threads run while
    it encodes, as a long text's encoding does."""

    def encode_ordinary(self, text: str) -> list[int]:
        time.sleep(0)
        return [0] * len(text)


@contextmanager
def _switching_often() -> Iterator[None]:
    """Let the interpreter switch threads after almost every bytecode, so an interleaving that can
    happen does happen within a few thousand counts."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(before)


def _in_threads(work: Callable[[int], None], threads: int = 4) -> list[BaseException]:
    errors: list[BaseException] = []

    def run(n: int) -> None:
        try:
            work(n)
        except BaseException as exc:  # (collected: the test reports them)
            errors.append(exc)

    workers = [threading.Thread(target=run, args=(n,)) for n in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return errors


def _queued(load: Callable[[str], _Characters]) -> TokenCounter:
    """A counter with reports believed before its vocabulary loaded, waiting to be learned from (each
    a different ratio: the order they are learned in changes the ratio learned)."""
    counter = TokenCounter("m", Tokenizer(start_ratio=1.0), load_encoding=load)
    sent: list[Message] = []
    reported = 0
    for i in range(12):
        text = f"{i:02} " + "x" * 600
        sent.append(Message.user(text))
        reported += int(len(text) * (1.1 + 0.2 * (i % 4)))  # each step at its own ratio
        counter.observe("system", (), list(sent), Usage(input_tokens=reported))
    assert len(counter._unlearned) == 12
    return counter


def test_reports_waiting_to_be_learned_are_learned_in_order_before_any_thread_counts_on() -> None:
    # The summary call's thread and the turn's both count while reports wait: each count must use the
    # ratio all of them teach, learned once and in their order, whichever thread comes first.
    alone = _queued(lambda name: _Characters())
    expected = alone.count_text("five six seven " * 100)
    assert alone.ratio != 1.0
    for _ in range(10):
        counter = _queued(lambda name: _Characters())
        counts: list[int] = []

        def work(n: int, counter: TokenCounter = counter, counts: list[int] = counts) -> None:
            counts.append(counter.count_text("five six seven " * 100))

        with _switching_often():
            errors = _in_threads(work)
        assert errors == []
        assert counts == [expected] * 4
        assert counter._unlearned == []
        assert counter.ratio == alone.ratio
