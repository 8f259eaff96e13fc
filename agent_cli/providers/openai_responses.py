"""The OpenAI Responses API adapter (`/v1/responses`): the SDK call for today's reasoning models.

The wire translation is `responses_wire.py` (pure); the shape of the call is
`sdk_client.SDKProvider`; errors are classified as for Chat Completions
(`openai.classify`, the shared SDK ladder), and a failed response inside a stream by the wire
module. Stream events are read with `to_dict()`, which keeps the API's own
field names (`model_dump()` renames a function call's `async` field).
Chat Completions (`openai.py`) stays for compatible servers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agent_cli.config.settings import ProviderSettings
from agent_cli.core.errors import ProviderError
from agent_cli.core.messages import NativeRecord, Usage
from agent_cli.core.requests import Completion, Request
from agent_cli.providers.native_wire import responses_compaction_wire, responses_record
from agent_cli.providers.openai import DEFAULT_BASE_URL, classify, load_sdk
from agent_cli.providers.registry import OPENAI, Wire
from agent_cli.providers.resolve import ModelChoice
from agent_cli.providers.responses_wire import (
    ReasoningConfig,
    StreamAssembler,
    from_wire,
    reply_usage,
    to_wire,
)
from agent_cli.providers.sdk_client import STALL_SECONDS, SDKProvider
from agent_cli.providers.server_search import web_search_gap

__all__ = ["OpenAIResponsesProvider"]


class OpenAIResponsesProvider(SDKProvider):
    """`Provider` for the OpenAI Responses API (or a server that speaks it at `base_url`)."""

    name = OPENAI.name

    def __init__(
        self,
        model: str,
        *,
        api_key: str,
        base_url: str | None = None,
        timeout: float = 1800.0,
        stall: float = STALL_SECONDS,
        streaming: bool = True,
        reasoning: ReasoningConfig | None = None,
        web_search: bool = False,
        images: bool = True,
    ) -> None:
        base = base_url or DEFAULT_BASE_URL
        super().__init__(
            model, api_key=api_key, base_url=base, timeout=timeout, streaming=streaming, stall=stall,
            images=images,
        )
        self.reasoning = reasoning
        self.web_search = web_search  # the provider's search tool is offered (`server_search`)

    @classmethod
    def build(
        cls,
        settings: ProviderSettings,
        model: ModelChoice,
        *,
        wire: Wire,
        streaming: bool,
        web_search: bool = False,
    ) -> OpenAIResponsesProvider:
        # A model that reasons (the table gives it efforts), or an effort the user set for an unknown one.
        reasons = bool(model.accepts.efforts) or model.effort is not None
        reasoning = ReasoningConfig(model.effort, settings.display != "omitted") if reasons else None
        return cls(
            model.name,
            api_key=settings.api_key or "",
            base_url=settings.base_url,
            timeout=settings.timeout,
            stall=settings.stall_timeout,
            streaming=streaming,
            reasoning=reasoning,
            web_search=web_search and web_search_gap(OPENAI.name, wire, model.name) is None,
            images=model.accepts.images,
        )

    @staticmethod
    def load_sdk() -> None:
        load_sdk()

    def _new_client(self) -> Any:
        import openai

        return openai.OpenAI(**self._client_options(openai.DefaultHttpxClient))

    def _to_wire(self, request: Request) -> dict[str, Any]:
        return to_wire(request, self._model, reasoning=self.reasoning, web_search=self.web_search)

    def _create(self, wire: dict[str, Any], *, stream: bool) -> Any:
        responses = self._sdk().responses
        return responses.create(**wire, stream=True) if stream else responses.create(**wire)

    def _as_dict(self, event: Any) -> Mapping[str, Any]:
        return dict(event.to_dict(warnings=False))  # (see SDKProvider._as_dict)

    def _from_wire(self, body: Mapping[str, Any]) -> Completion:
        return from_wire(body, self._model)

    def _compact(self, request: Request, instructions: str) -> tuple[NativeRecord, Usage]:
        """`/responses/compact` over the request's items; the output's JSON as it came. The compaction
        uses the server's own prompt: `instructions` there is the system prompt, as on `create`."""
        wire = responses_compaction_wire(self._to_wire(request))
        raw = self._sdk().responses.with_raw_response.compact(**wire, timeout=self._whole_reply_timeouts())
        body = raw.http_response.json()
        return responses_record(body), reply_usage(body.get("usage"))

    def _assembler(self) -> StreamAssembler:
        return StreamAssembler(self._model)

    @staticmethod
    def _classify(exc: BaseException) -> ProviderError | None:
        return classify(exc)
