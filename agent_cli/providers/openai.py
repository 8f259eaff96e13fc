"""The OpenAI Chat Completions adapter: the SDK call, and its errors as the error tree.

It imports `openai` lazily, inside functions (so does `openai_responses.py`, its sibling for the
Responses API; no other module does). With a `base_url` it drives any compatible server (vLLM,
llama.cpp, Ollama). The wire translation is `chat_wire.py` (pure); which of its two wires it
speaks (`chat` on OpenAI's endpoint, `chat-compatible` elsewhere) the registry decides and the
factory passes in; the shape of the call is `sdk_client.SDKProvider`; SDK exceptions climb the
ladder shared with the Anthropic adapter (`sdk_errors.py`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agent_cli.config.settings import ProviderSettings
from agent_cli.core.errors import ProviderError
from agent_cli.core.requests import Completion, Request
from agent_cli.providers.chat_wire import ChatWire, ChunkAssembler, chat_wire, from_wire, to_wire
from agent_cli.providers.errors import body_message
from agent_cli.providers.registry import OPENAI, Wire
from agent_cli.providers.resolve import ModelChoice
from agent_cli.providers.sdk_client import STALL_SECONDS, SDKProvider
from agent_cli.providers.sdk_errors import classify_sdk_error

__all__ = ["DEFAULT_BASE_URL", "OpenAIProvider", "classify", "load_sdk"]

DEFAULT_BASE_URL = "https://api.openai.com/v1"


def load_sdk() -> None:
    """Import the SDK (about a second on a small machine) and the HTTP transport its first client
    imports; later imports are free."""
    import httpcore2  # noqa: F401
    import httpx2  # noqa: F401
    import openai  # noqa: F401


def _detail(exc: Any) -> tuple[str, str | None]:
    """The error's message, and its code, or its type when the code is only a number (llama.cpp
    sends `"code": 400`)."""
    code = getattr(exc, "code", None)
    if code is None or str(code).isdigit():
        code = getattr(exc, "type", None) or (None if code is None else str(code))
    return body_message(exc.body, exc.message), None if code is None else str(code)


def classify(exc: BaseException) -> ProviderError | None:
    """The error-tree member for an exception from the SDK or its transport, or None."""
    import openai

    return classify_sdk_error(exc, openai, provider=OPENAI.name, detail=_detail)


class OpenAIProvider(SDKProvider):
    """`Provider` for OpenAI Chat Completions and compatible servers.

    `wire` (default: `chat` on OpenAI's endpoint, `chat-compatible` at another base URL, as the
    registry resolves a setting-less Chat Completions request) decides the request's field names."""

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
        effort: str | None = None,
        wire: ChatWire | None = None,
        images: bool = True,
    ) -> None:
        super().__init__(
            model,
            api_key=api_key,
            base_url=base_url or DEFAULT_BASE_URL,
            timeout=timeout,
            stall=stall,
            streaming=streaming,
            images=images,
        )
        own, elsewhere = OPENAI.wires["chat"]
        self.wire = wire or chat_wire(own if base_url is None else elsewhere)
        self.effort = effort

    @classmethod
    def build(
        cls,
        settings: ProviderSettings,
        model: ModelChoice,
        *,
        wire: Wire,
        streaming: bool,
        web_search: bool = False,
    ) -> OpenAIProvider:
        del web_search  # Chat Completions: no provider search (server_search.py)
        return cls(
            model.name,
            api_key=settings.api_key or "",
            base_url=settings.base_url,
            timeout=settings.timeout,
            stall=settings.stall_timeout,
            streaming=streaming,
            effort=model.effort,
            wire=chat_wire(wire),
            images=model.accepts.images,
        )

    @staticmethod
    def load_sdk() -> None:
        load_sdk()

    def _new_client(self) -> Any:
        import openai

        return openai.OpenAI(**self._client_options(openai.DefaultHttpxClient))

    def _to_wire(self, request: Request) -> dict[str, Any]:
        return to_wire(request, self._model, wire=self.wire, effort=self.effort)

    def _create(self, wire: dict[str, Any], *, stream: bool) -> Any:
        completions = self._sdk().chat.completions
        if not stream:
            return completions.create(**wire)
        return completions.create(**wire, stream=True, stream_options={"include_usage": True})

    def _from_wire(self, body: Mapping[str, Any]) -> Completion:
        return from_wire(body, self._model)

    def _assembler(self) -> ChunkAssembler:
        return ChunkAssembler(self._model)

    @staticmethod
    def _classify(exc: BaseException) -> ProviderError | None:
        return classify(exc)
