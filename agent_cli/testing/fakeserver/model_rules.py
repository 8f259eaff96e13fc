"""What each model accepts and how it reasons: the per-model rules of both providers, as their docs say.

Anthropic. The Claude 5.5 family and Fable/Mythos 5.x (*thinking models*) think adaptively by
default: each reply begins with a thinking block. How much of it comes back is the *display*:
"omitted" (the default: empty text), "summarized" (readable text), "updates" (beta: only the
progress blocks before tool calls carry text). Sonnet 5.5 also takes `between_tools` (no leading
block; progress blocks with text), and Haiku 5.5 takes `disabled` at effort high or lower. These
models reject `enabled`/`budget_tokens`, non-default sampling parameters, a prefill, and, except
Haiku 5.5, a forced tool choice. Older models keep the fake's old behaviour: no thinking, no checks.

OpenAI. A *reasoning model* (gpt-6*, gpt-5*, o-series, or any request that sends `reasoning`)
answers with a reasoning item first, unless its effort is "none". The newest GPT-6 models refuse
effort "none" (and "minimal"); GPT-6 models refuse non-default `temperature` and `top_p`.

Where the docs give no exact error text (marked *invented* below), the text follows the API's
usual validation wording.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .script import Fault
from .wire import JSON

__all__ = [
    "BINDING_BETA",
    "UPDATES_BETA",
    "anthropic_display",
    "anthropic_problem",
    "drops_blocks",
    "has_beta",
    "openai_problem",
    "openai_reasons",
    "thinks",
]

BINDING_BETA = "thinking-binding-controls-2026-08-01"
UPDATES_BETA = "thinking-display-updates-2026-08-18"

# thinking model -> its family, which decides the exact texts
_FAMILIES = {
    "claude-opus-5-5": "opus",
    "claude-sonnet-5-5": "sonnet",
    "claude-haiku-5-5": "haiku",
    "claude-fable-5-1": "fable",
    "claude-fable-5-2": "fable",
    "claude-mythos-5-1": "fable",
    "claude-mythos-5-2": "fable",
}
_EFFORTS = ("low", "medium", "high", "xhigh", "max")
_CONTROL = 'Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.'
_DISABLED = {
    "opus": f'"thinking.type.disabled" is not supported for this model. {_CONTROL}',
    "haiku": f'"thinking.type.disabled" is not supported for this model. {_CONTROL}',  # at xhigh/max
    "sonnet": (
        '"thinking.type.disabled" is not supported for this model. Use "thinking.type.between_tools" for '
        'the lowest thinking setting, or "thinking.type.adaptive" and "output_config.effort" to control '
        "thinking behavior."
    ),
    "fable": (
        '"thinking.type.disabled" is not supported for this model. Thinking defaults to adaptive mode when '
        'not specified; use "thinking.type.enabled" with "budget_tokens" for extended thinking.'
    ),
}
_FIELDS = {  # what each thinking type takes besides `type`
    "adaptive": ("display", "block_binding"),
    "enabled": ("budget_tokens", "display", "block_binding"),
    "disabled": (),
    "between_tools": (),
}
_SAMPLING_DEFAULTS = {"temperature": 1, "top_p": 0.99}
_NO_NONE = ("gpt-6.2-sol", "gpt-6.2-astra", "gpt-6.1-sol", "gpt-6-astra")
_REASONING_PREFIXES = ("gpt-6", "gpt-5", "o1", "o3", "o4")


def thinks(model: str) -> bool:
    return model in _FAMILIES


def has_beta(headers: Mapping[str, str], beta: str) -> bool:
    return beta in [b.strip() for b in headers.get("anthropic-beta", "").split(",")]


def _thinking(body: JSON) -> JSON:
    value = body.get("thinking")
    return value if isinstance(value, dict) else {}


def _effort(body: JSON) -> Any:
    config = body.get("output_config")
    return config.get("effort") if isinstance(config, dict) else None


def drops_blocks(body: JSON, headers: Mapping[str, str]) -> bool:
    """thinking.block_binding.prefix_mismatch_behavior is "drop_block" (with its beta header)."""
    binding = _thinking(body).get("block_binding")
    return (
        isinstance(binding, dict)
        and binding.get("prefix_mismatch_behavior") == "drop_block"
        and has_beta(headers, BINDING_BETA)
    )


def anthropic_display(body: JSON) -> str:
    """How a thinking model's reply reasons: "" (not at all), "omitted", "summarized", "updates",
    "between_tools". Call only for a request anthropic_problem accepted."""
    model = str(body.get("model", ""))
    if not thinks(model):
        return ""
    config = _thinking(body)
    kind = config.get("type", "adaptive")
    if kind == "disabled":
        return ""
    choice = body.get("tool_choice")
    if isinstance(choice, dict) and choice.get("type") in ("any", "tool"):
        return ""  # only Haiku 5.5 takes it: its reply starts with the tool call, without thinking
    if kind == "between_tools":
        return "between_tools"
    return str(config.get("display") or "omitted")


def anthropic_problem(body: JSON, headers: Mapping[str, str], *, continuing: bool = False) -> str | None:
    """The 400 text a thinking model gives this request, else None (always None for other models).
    `continuing`: the last turn is a paused reply sent back to continue it, which is not a prefill."""
    family = _FAMILIES.get(str(body.get("model", "")))
    if family is None:
        return None
    return (
        _thinking_problem(body, headers, family)
        or _sampling_problem(body, family)
        or _choice_problem(body, family)
        or (None if continuing else _prefill_problem(body))
    )


def _thinking_problem(body: JSON, headers: Mapping[str, str], family: str) -> str | None:
    config, effort = _thinking(body), _effort(body)
    kind = config.get("type", "adaptive")
    if effort is not None and effort not in _EFFORTS:  # invented (pydantic wording)
        return "output_config.effort: Input should be 'low', 'medium', 'high', 'xhigh' or 'max'"
    if kind == "enabled" or "budget_tokens" in config:
        return f'"thinking.type.enabled" is not supported for this model. {_CONTROL}'
    if kind == "disabled" and not (family == "haiku" and effort in (None, "low", "medium", "high")):
        return _DISABLED[family]
    if kind == "between_tools" and (family != "sonnet" or effort in ("xhigh", "max")):  # invented
        return f'"thinking.type.between_tools" is not supported for this model at this effort. {_CONTROL}'
    if kind not in _FIELDS:  # invented
        return "thinking.type: Input should be 'adaptive', 'enabled', 'disabled' or 'between_tools'"
    for field in config:
        if field != "type" and field not in _FIELDS[kind]:  # documented for block_binding; else invented
            return f"thinking.{kind}.{field}: Extra inputs are not permitted"
    if "block_binding" in config:
        if not has_beta(headers, BINDING_BETA):
            return f"thinking.{kind}.block_binding: Extra inputs are not permitted"
        behaviour = (config.get("block_binding") or {}).get("prefix_mismatch_behavior", "error")
        if behaviour not in ("error", "drop_block"):  # invented
            return "thinking.block_binding.prefix_mismatch_behavior: Input should be 'error' or 'drop_block'"
    display = config.get("display")
    allowed = ["summarized", "omitted"] + (["updates"] if has_beta(headers, UPDATES_BETA) else [])
    if display is not None and display not in allowed:  # "updates" without its beta: the same 400; invented
        return f"thinking.{kind}.display: Input should be 'summarized' or 'omitted'"
    return None


def _sampling_problem(body: JSON, family: str) -> str | None:
    # The exact text is observed by third parties; the docs only say "a 400".
    if "top_k" in body:
        return "`top_k` is deprecated for this model."
    for name, default in _SAMPLING_DEFAULTS.items():
        if name in body and body[name] != default:
            return f"`{name}` is deprecated for this model."
    if family == "haiku" and "temperature" in body and "top_p" in body:
        return "`temperature` and `top_p` cannot both be specified for this model. Please use only one."
    return None


def _choice_problem(body: JSON, family: str) -> str | None:
    choice = body.get("tool_choice")
    if family != "haiku" and isinstance(choice, dict) and choice.get("type") in ("any", "tool"):
        return 'tool_choice: type "tool" and "any" are not supported for this model.'
    return None


def _prefill_problem(body: JSON) -> str | None:
    messages = body.get("messages") or []
    if messages and messages[-1].get("role") == "assistant":
        return (
            "This model does not support assistant message prefill. "
            "The conversation must end with a user message."
        )
    return None


# -- OpenAI ------------------------------------------------------------------------------------------


def _reasoning(body: JSON) -> JSON:
    value = body.get("reasoning")
    return value if isinstance(value, dict) else {}


def openai_reasons(body: JSON) -> bool:
    """The reply begins with a reasoning item."""
    model = str(body.get("model", ""))
    if not (model.startswith(_REASONING_PREFIXES) or isinstance(body.get("reasoning"), dict)):
        return False
    return _reasoning(body).get("effort") != "none"


def openai_problem(body: JSON) -> Fault | None:
    """The 400 a Responses model gives this request, else None."""
    model = str(body.get("model", ""))
    effort = _reasoning(body).get("effort")
    if model.startswith(_NO_NONE) and effort in ("none", "minimal"):
        return Fault(
            400,
            f"Unsupported value: 'reasoning.effort' does not support '{effort}' with this model.",
            kind="unsupported_value",
            param="reasoning.effort",
        )
    if model.startswith("gpt-6"):
        for name in ("temperature", "top_p"):
            if body.get(name) is not None and body[name] != 1:
                return Fault(
                    400,
                    f"Unsupported parameter: '{name}' is not supported with this model.",
                    kind="unsupported_parameter",
                    param=name,
                )
    return None
