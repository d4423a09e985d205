"""Case-insensitive, order-preserving HTTP header collection."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from .utils.strings import squash_spaces


class Headers:
    """A list of (name, value) pairs looked up without regard to case.

    HTTP allows a header to appear more than once (``Set-Cookie`` is the usual
    example), so values are kept in a list and ``get`` returns the first one.
    """

    def __init__(self, pairs: Iterable[tuple[str, str]] = ()) -> None:
        self._items: list[tuple[str, str]] = []
        for name, value in pairs:
            self.add(name, value)

    def add(self, name: str, value: str) -> None:
        """Append a header, keeping any existing value with the same name."""
        self._items.append((name.strip(), squash_spaces(value)))

    def set(self, name: str, value: str) -> None:
        """Replace every value of ``name`` with a single new one."""
        self.remove(name)
        self.add(name, value)

    def remove(self, name: str) -> None:
        key = name.lower()
        self._items = [(n, v) for n, v in self._items if n.lower() != key]

    def get(self, name: str, default: str | None = None) -> str | None:
        key = name.lower()
        for n, v in self._items:
            if n.lower() == key:
                return v
        return default

    def get_all(self, name: str) -> list[str]:
        key = name.lower()
        return [v for n, v in self._items if n.lower() == key]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def to_bytes(self) -> bytes:
        """Serialize as header lines, each ending in CRLF."""
        lines = [f"{n}: {v}\r\n" for n, v in self._items]
        return "".join(lines).encode("latin-1")

    def __repr__(self) -> str:
        return f"Headers({self._items!r})"
