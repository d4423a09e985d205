"""File names that are not UTF-8, kept losslessly.

Real repositories hold names with bytes that are not UTF-8 (Latin-1 names, broken
encodings). In memory such a path is a ``str`` with surrogate escapes (what ``os.walk``
and ``bytes.decode("utf-8", "surrogateescape")`` give), which the OS accepts as is. Parquet,
DuckDB and JSON need valid UTF-8, so where a path is written it becomes two values: the
``path`` to show (the odd bytes as ``\\xNN``) and ``path_raw``, the name's bytes in hex
(null for every UTF-8 name). ``os_path(path, path_raw)`` gives back the name the OS knows.
"""

from __future__ import annotations


def path_bytes(path: str) -> bytes:
    """The bytes of a (possibly surrogate-escaped) path."""
    return path.encode("utf-8", "surrogateescape")


def path_raw(path: str) -> str | None:
    """Hex of the name's bytes when it is not valid UTF-8, else None."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return path_bytes(path).hex()
    return None


def display_path(path: str) -> str:
    """The path as valid UTF-8: bytes that are not UTF-8 shown as ``\\xNN``."""
    return path_bytes(path).decode("utf-8", "backslashreplace")


def os_path(path: str, raw: str | None) -> str:
    """The surrogate-escaped name the OS knows, from a written ``path`` / ``path_raw``."""
    return bytes.fromhex(raw).decode("utf-8", "surrogateescape") if raw else path


__all__ = ["path_bytes", "path_raw", "display_path", "os_path"]
