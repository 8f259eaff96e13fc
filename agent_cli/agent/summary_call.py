"""The context engine's summary call: one ordinary request to the session's provider.

It runs with the same retry policy as every request, under a timeout, in a
worker thread so a stalled stream cannot hang the session: past the timeout
(or on Ctrl-C) the call counts as failed, the worker stops at its next event
or backoff, and the engine falls back to its no-LLM digest.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from agent_cli.context.summary_request import SummaryReply
from agent_cli.core.requests import Completion, Request
from agent_cli.providers.base import Provider
from agent_cli.providers.retry import RetryPolicy, stream_with_retry

__all__ = ["ProviderSummarizer"]


class ProviderSummarizer:
    def __init__(
        self,
        provider: Provider,
        *,
        policy: RetryPolicy,
        timeout: float,
        on_request: Callable[[Request], None] | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._provider = provider
        self._policy = policy
        self._timeout = timeout
        self._on_request = on_request
        self._sleep = sleep

    def __call__(self, request: Request) -> SummaryReply:
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
        return SummaryReply(result.message.text, result.usage)
