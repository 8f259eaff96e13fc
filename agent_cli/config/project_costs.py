"""What a project file may choose that costs the user money, said aloud and capped where absurd.

A `.agent/config.toml` arrives with the repository. It may tune the agent for the project, but
a repository must not silently pick the most expensive model at max effort with caching off and
a million tool rounds: every such choice a project file makes (and no flag or env overrides) is
named in one warning the user sees on the welcome line (stderr under `-p`), and the open-ended
ones are capped. The caps sit a few times above the defaults, which are what a long task needs:

    tools.max_iterations        100 rounds a turn      -> at most 250
    tools.max_task_depth        2 levels of sub-agents -> at most 4
    provider.max_retries        6                      -> at most 10
    provider.max_output_tokens  the model's, to 32k    -> at most 32,000 (app_assembly.MAX_OUTPUT_CAP)
    context.working_budget      100k tokens            -> at most 200,000 (0, the whole window, too)

The same values in the user's own config, a `--config` file, the environment or a flag are the
user's choice and are not capped. Pure functions over the merged values.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass

from agent_cli.config.schema import default_value, show_value

__all__ = ["COSTLY_KEYS", "PROJECT_CAPS", "ProjectCosts", "review_project_choices"]

# Keys whose value changes what a session costs; shown when a project file chose them.
COSTLY_KEYS: tuple[str, ...] = (
    "provider.name",
    "provider.model",
    "context.summary_model",  # a writer dearer than the session's model
    "provider.effort",
    "provider.prompt_caching",
    "provider.max_output_tokens",
    "provider.max_retries",
    "tools.max_iterations",
    "tools.max_task_depth",  # every level of sub-agents multiplies the requests
    # Not context.context_window: the working budget, not the window, bounds what a request costs.
    "context.working_budget",
)

PROJECT_CAPS: dict[str, int] = {
    "tools.max_iterations": 250,
    "tools.max_task_depth": 4,
    "provider.max_retries": 10,
    "provider.max_output_tokens": 32_000,
    "context.working_budget": 200_000,
}


# Effort levels above the middle: a model thinks (and bills) more at each.
_COSTLY_EFFORT = frozenset({"high", "xhigh", "max"})


def _may_cost_more(key: str, value: object) -> bool:
    """Whether a project's value can make a session cost more than the default would: a smaller
    output limit, fewer rounds or a low effort saves money and needs no word (a test project that
    sets max_output_tokens = 64 is not warned about)."""
    default = default_value(key)
    if value == default:
        return False
    if key == "provider.effort":
        return value in _COSTLY_EFFORT
    if key == "context.working_budget" and value == 0:
        return True  # the whole window
    if isinstance(value, int) and not isinstance(value, bool):
        if isinstance(default, int):
            return value > default
        cap = PROJECT_CAPS.get(key)
        # No fixed default (the model's own output limit or window): only past the cap is it a choice.
        return cap is None or value > cap
    return True  # provider, model, prompt caching off


@dataclass(frozen=True, slots=True)
class ProjectCosts:
    values: dict[str, object]  # the merged values, caps applied
    notice: str  # one line for the user, "" when the project chose nothing that costs


def review_project_choices(
    values: Mapping[str, object], from_project: Collection[str], where: str, secrets: Collection[str] = ()
) -> ProjectCosts:
    """Cap the costly values that came from the project file at `where`, and say what it chose."""
    capped = dict(values)
    shown: list[str] = []
    for key in COSTLY_KEYS:
        if key not in from_project or key not in values:
            continue
        value = values[key]
        if not _may_cost_more(key, value):
            continue
        name = key.split(".", 1)[1]
        cap = PROJECT_CAPS.get(key)
        # A working budget of 0 means the whole window: on a 1M-token model, the most costly choice.
        over = cap is not None and isinstance(value, int) and (value > cap or value == 0)
        if over:
            capped[key] = cap
            shown.append(f"{name} {show_value(value, secrets)} (capped at {cap:,})")
        else:
            shown.append(f"{name} {show_value(value, secrets)}")
    if not shown:
        return ProjectCosts(capped, "")
    notice = (
        f"the project's {where} chooses what costs money: {', '.join(shown)}; "
        "set these in your own config or with flags to override"
    )
    return ProjectCosts(capped, notice)
