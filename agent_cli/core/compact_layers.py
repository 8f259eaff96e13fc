"""The context engine's layers as one value: each layer's name and what it is (the one home).

A *layer* is one way the engine makes a request fit (DESIGN, "The layers"). Its *name* is how the
session log, stream-json, hooks and panels spell it (`CompactEvent.layer`); its *design name* is the
design's L0-L4. What a layer does to the history decides how everything else treats its event:

- it *condenses*: a record written for a span takes the span's place (L2 summarize, L3 manual);
  the loop marks where the context was compacted, `/record` reads the record;
- it *removes*: whole messages leave the history with only a marker in their place (L4 emergency);
  `/uncompact` brings them back if they fit;
- it *acts on arrival*: it shapes what enters the context rather than what the context held (L0 cap
  cuts a result as it arrives), so a PostCompact hook is not told of it;
- it is *shown as a panel* (the layers that rewrite history) or as one dim line (L0, L1).

So `/uncompact` undoes a layer that condenses or removes (`undoable`). Adding a layer is its module in
`context/`, its entry here and the engine's decision; nothing else names it. Nothing outside this
module spells a layer's name: it compares `CompactLayer` members or reads these properties
(`tests/test_architecture.py` holds that).
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["CompactLayer"]


class CompactLayer(StrEnum):
    """One layer of the context engine. A member is its name (a `str`: it is written as the name in
    every record) and carries its properties; `CompactLayer("clear")` reads a record's name back."""

    _value_: str
    design: str  # "L0" .. "L4"
    condenses: bool
    removes: bool
    on_arrival: bool
    panel: bool
    verb: str  # what its one-line notice says it did ("cut", "cleared"), for a layer shown as a line

    def __new__(
        cls, name: str, design: str, condenses: bool, removes: bool, on_arrival: bool, panel: bool, verb: str
    ) -> CompactLayer:
        self = str.__new__(cls, name)  # the member being made (`self` to every method after)
        self._value_ = name
        self.design = design
        self.condenses = condenses
        self.removes = removes
        self.on_arrival = on_arrival
        self.panel = panel
        self.verb = verb
        return self

    #          name         design condenses removes on_arrival panel  verb
    CAP = ("cap", "L0", False, False, True, False, "cut")
    CLEAR = ("clear", "L1", False, False, False, False, "cleared")
    SUMMARIZE = ("summarize", "L2", True, False, False, True, "summarized")
    MANUAL = ("manual", "L3", True, False, False, True, "summarized")
    EMERGENCY = ("emergency", "L4", False, True, False, True, "dropped")

    @classmethod
    def named(cls, name: str) -> CompactLayer:
        """The layer a record names (a member stays itself); ValueError when it names none."""
        for layer in cls:
            if layer.value == name:
                return layer
        raise ValueError(f"not a compaction layer: {name!r}")

    @property
    def undoable(self) -> bool:
        """Whether `/uncompact` can undo it: it condensed or removed messages (L2, L3, L4)."""
        return self.condenses or self.removes
