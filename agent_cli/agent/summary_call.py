"""The context engine's summary call: one ordinary request to the model that writes summaries.

That model is the session's own unless `context.summary_model` names another of the same provider
(`Writer`). A request for another model is made valid for it before it goes: its own output limit,
and no thinking (a thinking block or reasoning item is bound to the model that produced it; the
API drops what another model cannot read, so sending it only costs bytes). The engine sizes the
request for that model's window and tokens through `sized` (`context.summary_request`).

It runs with the same retry policy as every request, under a timeout, in a
worker thread so a stalled stream cannot hang the session: past the timeout
(or on Ctrl-C) the call counts as failed, the worker stops at its next event
or backoff, and the engine falls back to its no-LLM digest.

A summary request keeps the main requests' tools and `tool_choice` (so it reads the cached
conversation) and only asks the model to call none. A reply that calls a tool anyway is not a
record (its text is the preamble to a call: "let me look at..."): the request is sent once more
with tool calls switched off (`tool_choice` none, which the API enforces, at the price of
writing the messages again), and a reply that still calls one fails the call, so the digest
stands in. Both replies' usage is counted.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from agent_cli.context.summary_request import SummaryFailed, SummaryReply
from agent_cli.context.thresholds import Counter
from agent_cli.core.requests import Completion, Request
from agent_cli.core.thinking import strip_thinking
from agent_cli.providers.base import Provider
from agent_cli.providers.retry import RetryPolicy, stream_with_retry

__all__ = ["ProviderSummarizer", "Writer"]


@dataclass(frozen=True, slots=True)
class Writer:
    """What a summary request must keep to when another model than the session's writes it."""

    budget: int  # the most one request may hold, in the writer's tokens: its window less its reply
    max_output: int  # the writer's own output limit
    counter: Counter | None = None  # how the writer counts, when its tokenizer is not the session's


class ProviderSummarizer:
    def __init__(
        self,
        provider: Provider,
        *,
        policy: RetryPolicy,
        timeout: float,
        on_request: Callable[[Request], None] | None = None,
        sleep: Callable[[float], None] = time.sleep,
        writer: Writer | None = None,
    ) -> None:
        self._provider = provider
        self._policy = policy
        self._timeout = timeout
        self._on_request = on_request
        self._sleep = sleep
        self._writer = writer

    @property
    def model(self) -> str:
        """The model that writes the summaries."""
        return self._provider.model

    def sized(self, budget: int, counter: Counter) -> tuple[int, Counter]:
        """The session's budget and counter, or the writer's where its window is smaller or it counts
        text its own way (see `context.summary_request.SizedSummarize`)."""
        if self._writer is None:
            return budget, counter
        return min(budget, self._writer.budget), self._writer.counter or counter

    def _for_writer(self, request: Request) -> Request:
        writer = self._writer
        if writer is None:
            return request
        return dataclasses.replace(
            request,
            messages=tuple(strip_thinking(request.messages, 0)),
            max_tokens=min(request.max_tokens, writer.max_output),
        )

    def __call__(self, request: Request) -> SummaryReply:
        request = self._for_writer(request)
        completion = self._complete(request)
        if not completion.message.tool_uses:
            return SummaryReply(completion.message.text, completion.usage, completion.message.native)
        if request.options.tool_choice == "none":
            raise SummaryFailed("the model called a tool instead of writing the record")
        # Asked, not forced, to call none: ask again with tool calls switched off.
        options = dataclasses.replace(request.options, tool_choice="none")
        again = self._complete(dataclasses.replace(request, options=options))
        usage = completion.usage + again.usage
        if again.message.tool_uses:
            raise SummaryFailed("the model called a tool instead of writing the record, twice")
        return SummaryReply(again.message.text, usage, again.message.native)

    def _complete(self, request: Request) -> Completion:
        """One request's completion, under the retry policy and the timeout."""
        if self._on_request is not None:
            self._on_request(request)
        box: list[Completion | BaseException] = []
        provider = self._provider
        stop = threading.Event()  # set on timeout or Ctrl-C: the worker must not go on spending tokens

        def nap(seconds: float) -> None:
            if self._sleep is time.sleep:  # a backoff wait that ends as soon as the call is given up
                stop.wait(seconds)
            else:
                self._sleep(seconds)

        def work() -> None:
            stream = stream_with_retry(provider, request, policy=self._policy, sleep=nap)
            try:
                for item in stream:
                    if stop.is_set():
                        return
                    if isinstance(item, Completion):
                        box.append(item)
                        return
            except BaseException as exc:  # handed to the caller's thread below
                box.append(exc)
            finally:
                stream.close()  # closes the SDK's HTTP stream too

        worker = threading.Thread(target=work, name="summarize", daemon=True)
        worker.start()
        try:
            worker.join(self._timeout)
        finally:
            if worker.is_alive():
                stop.set()
        if worker.is_alive() or not box:
            raise TimeoutError(f"the summary request took longer than {self._timeout:.0f}s")
        result = box[0]
        if isinstance(result, BaseException):
            raise result
        return result
