"""`CompactLayer`: each layer of the context engine as one value, named as every record names it.

The sets the loop, the panels, the hooks and `/uncompact` used to keep, one each, are the layers'
properties now; these are those sets, read off the value.
"""

from __future__ import annotations

import json

import pytest

from agent_cli.core.compact_layers import CompactLayer
from agent_cli.core.events import CompactEvent, event_from_json


def _having(prop: str) -> set[str]:
    return {str(layer) for layer in CompactLayer if getattr(layer, prop)}


def test_the_properties_are_the_sets_the_modules_kept() -> None:
    assert [(str(layer), layer.design) for layer in CompactLayer] == [
        ("cap", "L0"), ("clear", "L1"), ("summarize", "L2"), ("manual", "L3"), ("emergency", "L4"),
    ]  # fmt: skip
    assert _having("condenses") == {"summarize", "manual"}  # the loop's "condensed", /record
    assert _having("removes") == {"emergency"}  # "/uncompact brings the dropped messages back"
    assert _having("undoable") == {"summarize", "manual", "emergency"}  # /uncompact, /record's origin
    assert _having("panel") == {"summarize", "manual", "emergency"}  # the rest are one dim line
    assert {str(x) for x in CompactLayer if not x.on_arrival} == {"clear", "summarize", "manual", "emergency"}
    assert (CompactLayer.CAP.verb, CompactLayer.CLEAR.verb) == ("cut", "cleared")


def test_an_event_takes_a_layers_name_and_writes_the_name_back() -> None:
    event = CompactEvent(layer="clear", trigger="auto", messages_before=4, messages_after=4,  # type: ignore[arg-type]
                         tokens_before=900, tokens_after=300)  # fmt: skip
    assert event.layer is CompactLayer.CLEAR and not event.layer.panel
    line = json.dumps(event.to_json())
    assert '"layer": "clear"' in line
    back = event_from_json(json.loads(line))
    assert back == event and isinstance(back, CompactEvent) and back.layer is CompactLayer.CLEAR


def test_a_name_that_is_no_layer_is_a_record_that_does_not_fit() -> None:
    data = CompactEvent(
        layer=CompactLayer.MANUAL, trigger="manual", messages_before=9, messages_after=3,
        tokens_before=9_000, tokens_after=1_000,
    ).to_json()  # fmt: skip
    with pytest.raises(ValueError, match="not a compaction layer: 'L2'"):
        event_from_json({**data, "layer": "L2"})
    assert CompactLayer.named("emergency") is CompactLayer.EMERGENCY
