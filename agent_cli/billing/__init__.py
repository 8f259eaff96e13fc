"""The bill as the provider sends it: one prompt-cache cost model per provider, pure.

`prices.py` holds the prices a caller hands in (`CachePrices`, built from the model table) and
what one request is billed (`Bill`); `anthropic.py` Anthropic's explicit breakpoints (the rules
as pure functions, and `AnthropicCache`, the entries written so far); `automatic.py` OpenAI's
automatic prefix cache and a compatible server's own (vLLM, llama.cpp); `wire_units.py` a wire
payload read as the units those bill. The sources of every rule
and the validation on recorded sessions are in docs/cost-model.md. This folder imports only
`agent_cli.core`; time is an input (each request carries its timestamp), nothing is read or written.
"""

from agent_cli.billing.anthropic import (
    LOOKBACK_BLOCKS,
    MAX_BREAKPOINTS,
    AnthropicCache,
    AnthropicRequest,
    BreakpointError,
    Unit,
    bill_anthropic,
    breakpoints,
    prefix_ids,
)
from agent_cli.billing.automatic import AutomaticCache, AutomaticRequest, cached_length
from agent_cli.billing.prices import Bill, CachePrices, CacheTerms, Ttl

__all__ = [
    "LOOKBACK_BLOCKS",
    "MAX_BREAKPOINTS",
    "AnthropicCache",
    "AnthropicRequest",
    "AutomaticCache",
    "AutomaticRequest",
    "Bill",
    "BreakpointError",
    "CachePrices",
    "CacheTerms",
    "Ttl",
    "Unit",
    "bill_anthropic",
    "breakpoints",
    "cached_length",
    "prefix_ids",
]
