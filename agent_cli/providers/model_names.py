"""The rules that read a model's name: what family, version and spelling it is, and what follows.

Every rule that reads a model's name (a `claude-` or `gpt-` prefix, a family's version) is here,
nowhere else; the model table (`models.py`) and its callers ask these functions.

- `normalize` is the table key a spelling most likely means: date-stamped snapshots,
  `-latest` / `-0` aliases, dotted versions, `provider/` and Bedrock prefixes.
- `family_limits` gives an unknown model of a known family (a new `claude-*`
  or `gpt-6*`) the window its family has, instead of the small default.
- `tokenizer_for` says how a model's tokens are counted here: OpenAI's own
  vocabulary for its models (exact), else cl100k_base scaled from a start
  ratio that is higher for Claude's newer tokenizer.
- `takes_images` whether a model of a family takes image input; `keeps_prior_thinking` whether
  the API keeps earlier turns' thinking blocks for it.
"""

from __future__ import annotations

import re

from agent_cli.providers.registry import ANTHROPIC
from agent_cli.tokens.images import ImageRule
from agent_cli.tokens.ratio import NEW_TOKENIZER_FACTOR, START_RATIO
from agent_cli.tokens.tokenizer import Tokenizer

__all__ = [
    "family_limits",
    "image_family",
    "keeps_prior_thinking",
    "normalize",
    "takes_images",
    "tokenizer_for",
]


# OpenAI's vocabularies by model family (tiktoken's own model table); routed names (`openai/gpt-4o`)
# and fine-tunes (`ft:gpt-4o-mini:org::id`) count as their base model.
_O200K_MODEL = re.compile(r"^(gpt-4o|chatgpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|gpt-oss|o[134](-|$)|codex-)")
_CL100K_MODEL = re.compile(r"^(gpt-4|gpt-3\.5|gpt-35|text-embedding-ada-002|text-embedding-3)")
# Claude 4.7 and later, every 5.x, Fable and Mythos: the newer tokenizer (see tokens/ratio.py).
_NEW_CLAUDE = re.compile(r"claude-(?:(?:opus|sonnet|haiku)-(?:[5-9]|4-(?:[7-9]|\d\d))|fable|mythos)")
_NEW_CLAUDE_RATIO = round(START_RATIO * NEW_TOKENIZER_FACTOR, 3)


def tokenizer_for(name: str, provider: str) -> Tokenizer:
    """How `name`'s tokens are counted when `provider` serves it (see the module docstring).

    Anthropic's API serves no OpenAI model, so a `gpt-` name there is not counted as exact."""
    base = name.strip().lower().rsplit("/", 1)[-1].removeprefix("ft:")
    if provider != ANTHROPIC.name:
        if _O200K_MODEL.match(base):
            return Tokenizer("o200k_base", exact=True, images="tiles")
        if _CL100K_MODEL.match(base):
            return Tokenizer("cl100k_base", exact=True, images="tiles")
    # Images: Anthropic's rule on its API; elsewhere (a compatible server) the larger of both.
    rule: ImageRule = "pixels" if provider == ANTHROPIC.name else "any"
    if _NEW_CLAUDE.search(name.lower()):
        return Tokenizer(start_ratio=_NEW_CLAUDE_RATIO, images=rule)
    return Tokenizer(images=rule)


# Image input. Every Claude model in the table takes images ("Images and vision",
# platform.claude.com/docs/en/build-with-claude/vision: "all current Claude models"), and every GPT
# model in it as well (each model's page lists image under input; the o-series and GPT-4.1/4o/5/6
# pages read 2026-12-05 in stored copies). A name of either family the table does not know yet is
# taken to as well; any other model (a local server's) is not, so it is sent a line, never a 400.
_IMAGE_FAMILY = re.compile(r"^(?:claude-|gpt-(?:4o|4\.1|4\.5|5|6)|chatgpt-4o|o[134](?:-|$))")


def takes_images(name: str) -> bool:
    """Whether `name` takes image input (see above)."""
    return image_family(normalize(name))


def image_family(key: str) -> bool:
    """Whether a table key (a name `normalize` already read) is of a family that takes images."""
    return bool(_IMAGE_FAMILY.match(key))


# Older names for the same models.
_ALIASES = {
    "claude-4-opus": "claude-opus-4",
    "claude-4-sonnet": "claude-sonnet-4",
    "claude-opus-4-0": "claude-opus-4",
    "claude-sonnet-4-0": "claude-sonnet-4",
    "claude-sonnet-3-7": "claude-3-7-sonnet",
    "claude-haiku-3-5": "claude-3-5-haiku",
}
_PREFIX = re.compile(r"^(?:[a-z0-9_.-]+/)+")  # "anthropic/", "openai/", "openrouter/openai/"
_BEDROCK = re.compile(r"^(?:[a-z]{2,4}\.)?anthropic\.")  # "us.anthropic.claude-..."
_SUFFIXES = (
    re.compile(r"-v\d+(?::\d+)?$"),  # Bedrock "-v1:0"
    re.compile(r"@\d{8}$"),  # Vertex "@20250929"
    re.compile(r"-\d{8}$"),  # "-20250929"
    re.compile(r"-\d{4}-\d{2}-\d{2}$"),  # "-2025-04-14"
    re.compile(r"-latest$"),
)


def normalize(name: str) -> str:
    """The table key a model name most likely means (it may still be unknown)."""
    key = _BEDROCK.sub("", _PREFIX.sub("", name.strip().lower()))
    for _ in range(2):  # "claude-3-7-sonnet-20250219-v1:0" carries two suffixes
        for suffix in _SUFFIXES:
            key = suffix.sub("", key)
    if key.startswith("claude"):
        key = key.replace(".", "-")  # "claude-sonnet-4.5" -> "claude-sonnet-4-5"
    return _ALIASES.get(key, key)


_CLAUDE_VERSION = re.compile(r"^claude-(?:opus|sonnet|haiku|fable|mythos)-(\d+)(?:-(\d+))?$")
_CLAUDE_OLD = re.compile(r"^claude-(\d+)(?:-(\d+))?-(?:opus|sonnet|haiku)$")


def family_limits(name: str) -> tuple[int, int] | None:
    """(window, max output) for an unknown model of a known family, or None.

    Claude 4.6 and later (and every 5.x) have 1M-token windows and 128k output;
    Claude 4.5 and earlier 200k and 64k. GPT-6.x and GPT-5.6 have 1.05M and 128k.
    """
    key = normalize(name)
    match = _CLAUDE_VERSION.match(key) or _CLAUDE_OLD.match(key)
    if match:
        major, minor = int(match.group(1)), int(match.group(2) or 0)
        return (1_000_000, 128_000) if (major, minor) >= (4, 6) else (200_000, 64_000)
    if re.match(r"^gpt-(?:6|5\.6)(?:[.-]|$)", key):
        return 1_050_000, 128_000
    return None


# "claude-opus-4-6", "us.anthropic.claude-haiku-4-5-20251001-v1:0", "claude-sonnet-4-5@20250929";
# the minor version is one or two digits not followed by another (a date is not a version).
_NAMED = re.compile(r"claude-(opus|sonnet|haiku|fable|mythos)(?:-(\d{1,2})(?:[-.](\d{1,2}))?(?!\d))?")
_OLD_NAMING = re.compile(r"claude-\d+(?:-\d)?-(?:opus|sonnet|haiku)")  # claude-3-7-sonnet


def keeps_prior_thinking(model: str) -> bool:
    """Whether the API keeps thinking blocks of earlier turns in context (and in the cached prefix).

    platform.claude.com/docs/en/build-with-claude/thinking, "Thinking block preservation by model"
    (read 2026-12-05): "Keep all prior turns: Claude Opus 4.5 and later Opus models, Claude Sonnet
    4.6 and later Sonnet models, Claude Fable 5, Claude Mythos 5, and Claude Mythos Preview. Keep
    the last turn only: earlier Opus and Sonnet models, and all Haiku models through Claude Haiku
    4.5"; the extended-thinking page: "Claude Opus 4.5 and models numbered 4.6 and higher keep prior
    turns' thinking blocks". The prompt-caching page's invalidation table, "Non-tool results passed
    to extended thinking requests": the messages cache stays valid on Opus 4.5+ and Sonnet 4.6+; on
    the others "all previously-cached thinking blocks are stripped from context". A name this does
    not read as a Claude model is taken to keep them (the current default)."""
    name = model.lower()
    if _OLD_NAMING.search(name):
        return False
    match = _NAMED.search(name)
    if match is None:
        return True
    family, major, minor = match.group(1), match.group(2), match.group(3)
    if family in ("fable", "mythos") or major is None:
        return True
    version = (int(major), int(minor or 0))
    return version >= ((4, 5) if family == "opus" else (4, 6))
