"""Bounded in-memory state of a serving process: an LRU map and striped locks.

A live study must not grow with every visitor: ``Study`` keeps participants' state and
built pages in ``BoundedCache`` (least recently used entries are dropped past ``maxsize``;
they are reloaded from the store on next use) and serializes a participant's answers with
one of a fixed number of locks (``StripedLocks``) instead of one lock per participant ever
seen.
"""

from __future__ import annotations

import threading
import zlib
from collections import OrderedDict
from collections.abc import Iterable
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class BoundedCache(Generic[K, V]):
    """A thread-safe map that keeps at most ``maxsize`` entries (least recently used out)."""

    def __init__(self, maxsize: int) -> None:
        if maxsize < 1:
            raise ValueError(f"maxsize must be >= 1, got {maxsize}")
        self.maxsize = maxsize
        self._data: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        with self._lock:
            value = self._data.get(key)
            if value is not None:
                self._data.move_to_end(key)
            return value

    def __setitem__(self, key: K, value: V) -> None:
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self.maxsize:
                self._data.popitem(last=False)

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return key in self._data

    def __len__(self) -> int:
        return len(self._data)

    def pop(self, key: K) -> None:
        with self._lock:
            self._data.pop(key, None)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()


# Stripes of StripedLocks. Two participants whose ids share a stripe wait for each other's
# whole transaction (a HARE search included): with 64 stripes, 10 participants at once shared
# one about half the time (1 - prod(1 - k/64), k < 10), and a load test's page threads spent
# much of their time waiting there (docs/benchmarks.md, "Findings behind the code"); with 4096
# it is ~1% (a lock is ~50 bytes).
STRIPES = 4096


class StripedLocks:
    """``n`` locks; a key always maps to the same one (CRC-32 of the key)."""

    def __init__(self, n: int = STRIPES) -> None:
        self._locks = [threading.Lock() for _ in range(n)]

    def for_keys(self, keys: Iterable[str]) -> list[threading.Lock]:
        """The distinct locks of ``keys`` in a fixed order (acquire them in this order: two
        callers never wait on each other in a cycle)."""
        idx = sorted({zlib.crc32(k.encode()) % len(self._locks) for k in keys})
        return [self._locks[i] for i in idx]
