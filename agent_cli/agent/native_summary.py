"""The provider's own compaction as the context engine's summary call (`context.summarizer = "native"`).

The engine asks for a record the way it always does (`context.summary_request.span_request`: the span
as it is, then the instruction as the last text block of the last user message); this module turns
that request into the provider's compaction request (agent/../providers/native_wire.py): the span's
messages, without the instruction, which goes as the compaction's `instructions` where the API takes
them (Anthropic; OpenAI's compaction uses its own prompt). The reply carries the provider's record
(`SummaryReply.native`) beside its readable text, and L2/L3 build the record around it as around a
summary of ours (context/condense.py). Keep-tail: the span is the older part only, so the record
stands for exactly those messages and the tail follows it unchanged.

A request the provider's record cannot answer (the text chunks of a span too long for one request)
goes to the ordinary call (`ordinary`), and so does everything when the model has no compaction of
its own (`native_summarizer` says why, once).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Sequence
from typing import Protocol, runtime_checkable

from agent_cli.agent.summary_call import ProviderSummarizer
from agent_cli.context.summary_request import COMPACTION_TAG, Summarize, SummaryReply
from agent_cli.context.thresholds import Counter
from agent_cli.core.messages import Message, TextBlock
from agent_cli.core.requests import Request, StreamEvent

__all__ = ["Compacts", "NativeCompactions", "NativeSummarizer", "choose_summarizer", "split_instruction"]


@runtime_checkable
class Compacts(Protocol):
    """A provider whose API compacts a conversation itself (`SDKProvider.compact`)."""

    @property
    def name(self) -> str: ...

    @property
    def model(self) -> str: ...

    def compact(self, request: Request, instructions: str) -> Iterator[StreamEvent]: ...


def split_instruction(messages: Sequence[Message]) -> tuple[list[Message], str]:
    """The span and the instruction of a summary request: the instruction is the last text block of
    the last user message (`span_request`); the message it was added to is given back as it was."""
    out = list(messages)
    if not out or out[-1].role != "user" or not isinstance(out[-1].content[-1], TextBlock):
        return out, ""
    last = out.pop()
    instruction = last.content[-1]
    assert isinstance(instruction, TextBlock)
    if len(last.content) > 1:
        out.append(Message(last.role, last.content[:-1], last.id.removesuffix("+i")))
    # The tag marks our own request's instruction; the compaction's instructions are the words.
    return out, instruction.text.removeprefix(COMPACTION_TAG).lstrip("\n")


class NativeCompactions:
    """A `Provider` whose every request is a compaction request of `provider`'s API."""

    def __init__(self, provider: Compacts) -> None:
        self._provider = provider

    @property
    def name(self) -> str:
        return self._provider.name

    @property
    def model(self) -> str:
        return self._provider.model

    def stream(self, request: Request) -> Iterator[StreamEvent]:
        messages, instructions = split_instruction(request.messages)
        return self._provider.compact(dataclasses.replace(request, messages=tuple(messages)), instructions)


class NativeSummarizer:
    """The summary call: the provider's compaction (`native`, a ProviderSummarizer over
    `NativeCompactions`, so it has the same retries and timeout), or `ordinary` for text chunks."""

    def __init__(self, native: ProviderSummarizer, ordinary: ProviderSummarizer) -> None:
        self._native = native
        self._ordinary = ordinary

    @property
    def model(self) -> str:
        return self._ordinary.model

    @property
    def ordinary(self) -> Summarize:
        return self._ordinary

    def sized(self, budget: int, counter: Counter) -> tuple[int, Counter]:
        return self._ordinary.sized(budget, counter)

    def __call__(self, request: Request) -> SummaryReply:
        return self._native(request)


def choose_summarizer(
    ordinary: ProviderSummarizer,
    provider: object,
    gap: str | None,
    make: Callable[[NativeCompactions], ProviderSummarizer],
) -> tuple[ProviderSummarizer | NativeSummarizer, str | None]:
    """The summary call for `context.summarizer = "native"`, and the one line to say when the model
    cannot compact natively (`gap`: why, from `providers.native_support`): then `ordinary` serves."""
    if gap is None and isinstance(provider, Compacts):
        return NativeSummarizer(make(NativeCompactions(provider)), ordinary), None
    why = gap or "this provider has no compaction of its own"
    return ordinary, f'context.summarizer = "native": {why}; the model\'s own summaries are used instead'
