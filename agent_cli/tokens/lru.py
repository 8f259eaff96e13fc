"""A bounded least-recently-used map that two threads may share.

    counts = Lru[str, int](16_384)
    counts.get(key)        # the value, now the most recent; None when not kept
    counts.put(key, value) # kept; the least recent dropped past the bound

A `TokenCounter` keeps its counts in two of these (by message id, by frame); the engine's summary call
counts in its own thread while the turn counts the next request, so each look-up-then-move and
insert-then-drop is one step under the map's lock. The work that makes a value is done outside it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

__all__ = ["Lru"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class Lru(Generic[K, V]):
    def __init__(self, size: int) -> None:
        self._size = max(1, size)
        self._items: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def peek(self, key: K) -> V | None:
        """The value, if kept, without making it the most recent."""
        with self._lock:
            return self._items.get(key)

    def put(self, key: K, value: V) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            if len(self._items) > self._size:
                self._items.popitem(last=False)
