"""What the states of one parse share, so that an action costs O(1), not a copy of the graph so far.

A parser state is a value: applying an action makes a new state and leaves the old one as it was.
Copying its nodes and edges at every action made a derivation quadratic in the graph's size (a
5,000-node graph: 20,000 copies of tuples 5,000 long). Two structures share instead:

- :class:`Log`, an append-only sequence (the nodes' labels, their tokens, the edges): each state
  sees the first ``len`` items of one list, and appends in place when no other state has appended
  past it; appending to an older state copies what that state sees (a search's branch).
- :class:`Versions`, a persistent dict (Baker's trick: Baker 1991, "Shallow binding makes
  functional arrays fast"; Conchon & Filliâtre 2007): the newest version holds the dict, each older
  one the difference to a newer one. The newest reads and writes in O(1); an older one is made the
  newest first, undoing the writes between them (a search moves between sibling states, a few
  writes apart). Not thread-safe: the states of one parse belong to one thread.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Generic, TypeVar, overload

T = TypeVar("T")
_MISSING: Any = object()


class Log(Sequence[T], Generic[T]):
    """The first ``length`` items of a list that only grows; equal to any sequence of the same items."""

    __slots__ = ("items", "length")

    def __init__(self, items: list[T] | None = None, length: int | None = None) -> None:
        self.items = items if items is not None else []
        self.length = len(self.items) if length is None else length

    def extended(self, new: Sequence[T]) -> Log[T]:
        """This log with *new* at its end: in place when nothing was appended past it, else on a copy."""
        items = self.items if len(self.items) == self.length else self.items[: self.length]
        items.extend(new)
        return Log(items, len(items))

    def __len__(self) -> int:
        return self.length

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[T, ...]: ...
    def __getitem__(self, index: int | slice) -> T | tuple[T, ...]:
        if isinstance(index, slice):
            return tuple(self.items[: self.length][index])
        if not -self.length <= index < self.length:
            raise IndexError("Log index out of range")
        return self.items[index if index >= 0 else self.length + index]

    def __iter__(self) -> Iterator[T]:
        items = self.items
        return (items[index] for index in range(self.length))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and not isinstance(other, str) and tuple(self) == tuple(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Log({list(self)!r})"


class Versions:
    """A dict of which every write makes a new version, the old ones staying readable (see the module docstring)."""

    __slots__ = ("_node",)

    def __init__(self, data: dict | None = None) -> None:
        self._node: dict | tuple = {} if data is None else dict(data)  # a dict (the newest) or (key, value, newer)

    def _current(self) -> dict:
        """The dict, as this version sees it: made this version's by undoing the writes of the newer ones."""
        node = self._node
        if type(node) is dict:
            return node
        path = [self]
        while type(path[-1]._node) is not dict:
            path.append(path[-1]._node[2])
        data = path[-1]._node
        for version in reversed(path[:-1]):  # from the newest's neighbour back to this one
            key, value, newer = version._node
            old = data.get(key, _MISSING)
            if value is _MISSING:
                del data[key]
            else:
                data[key] = value
            newer._node = (key, old, version)
            version._node = data
        return data

    def get(self, key: Any, default: Any = None) -> Any:
        node = self._node
        return (node if type(node) is dict else self._current()).get(key, default)

    def __getitem__(self, key: Any) -> Any:
        node = self._node
        return (node if type(node) is dict else self._current())[key]

    def __contains__(self, key: Any) -> bool:
        node = self._node
        return key in (node if type(node) is dict else self._current())

    def set(self, key: Any, value: Any) -> Versions:
        """A new version with *key* set to *value*; this one keeps its own."""
        data = self._current()
        old = data.get(key, _MISSING)
        data[key] = value
        newer = Versions.__new__(Versions)
        newer._node = data
        self._node = (key, old, newer)
        return newer

    def __repr__(self) -> str:
        return f"Versions({self._current()!r})"
