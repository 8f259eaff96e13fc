"""When the model's compact call has nothing to do: the rule, and what the tool says instead.

A compaction condenses what the history holds after the last one. When all that came since is
compact calls and their results (a model calling compact twenty times in a row), another
compaction would only summarize the summary again, a model call for nothing; so such a call does
nothing and says so to the model. Two compact calls in one round are one compaction.

Pure: the loop keeps the id of the history's last message as the last compaction left it (the
*marker*) and passes each compact call's output through `honoured`.
"""

from __future__ import annotations

from collections.abc import Sequence

from agent_cli.core.messages import Message, ToolResult
from agent_cli.tools.base import CompactRequest, ToolOutput
from agent_cli.tools.context_tools import Compact

__all__ = ["ALREADY_SCHEDULED", "NOTHING_NEW_TO_COMPACT", "honoured", "nothing_new_since"]

NOTHING_NEW_TO_COMPACT = (
    "Nothing to compact: nothing has been added since the last compaction, so the conversation is "
    "already condensed. Go on with the task."
)
ALREADY_SCHEDULED = "Compaction is already scheduled by an earlier compact call in this round."
COMPACT_TOOL = Compact.spec.name


def nothing_new_since(history: Sequence[Message], marker: str | None) -> bool:
    """Whether all `history` holds after the message `marker` is compact calls and their results
    (an assistant message's own words beside its compact call do not count as new). False when
    there is no marker or it is gone (cleared, another session): then everything is new."""
    ids = [m.id for m in history]
    if marker is None or marker not in ids:
        return False
    after = history[ids.index(marker) + 1 :]
    calls = {u.id for m in after for u in m.tool_uses if u.name == COMPACT_TOOL}
    for message in after:
        if message.role == "assistant":
            if not message.tool_uses or any(u.id not in calls for u in message.tool_uses):
                return False
        elif any(not isinstance(b, ToolResult) or b.tool_use_id not in calls for b in message.content):
            return False
    return True


def honoured(
    output: ToolOutput, scheduled: CompactRequest | None, history: Sequence[Message], marker: str | None
) -> ToolOutput:
    """A tool's output as the round takes it: a compact call's wish is dropped (and the model told
    why) when the round already has one (`scheduled`) or nothing is new since the `marker`."""
    if output.compact is None:
        return output
    if scheduled is not None:
        return ToolOutput(ALREADY_SCHEDULED)
    if nothing_new_since(history, marker):
        return ToolOutput(NOTHING_NEW_TO_COMPACT)
    return output
