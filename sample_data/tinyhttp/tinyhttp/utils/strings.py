"""String helpers used when reading and writing HTTP messages."""

from __future__ import annotations

import re
import unicodedata

_SPACES = re.compile(r"[ \t]+")
_NOT_SLUG = re.compile(r"[^a-z0-9]+")


def squash_spaces(text: str) -> str:
    """Collapse runs of spaces and tabs into one space and trim the ends."""
    return _SPACES.sub(" ", text).strip()


def split_csv(value: str) -> list[str]:
    """Split a comma-separated header value, dropping empty items.

    >>> split_csv("gzip, deflate,, br")
    ['gzip', 'deflate', 'br']
    """
    parts = (part.strip() for part in value.split(","))
    return [part for part in parts if part]


def slugify(text: str, max_length: int = 60) -> str:
    """Turn a title into a lowercase URL fragment made of ASCII words."""
    normalized = unicodedata.normalize("NFKD", text)
    ascii_only = normalized.encode("ascii", "ignore").decode("ascii")
    slug = _NOT_SLUG.sub("-", ascii_only.lower()).strip("-")
    return slug[:max_length].rstrip("-")


def truncate(text: str, limit: int, marker: str = "...") -> str:
    """Shorten ``text`` to at most ``limit`` characters, ending with ``marker``."""
    if limit < len(marker):
        raise ValueError("limit must leave room for the marker")
    if len(text) <= limit:
        return text
    return text[: limit - len(marker)] + marker


def is_token(text: str) -> bool:
    """True when ``text`` is a valid HTTP token (method or header name)."""
    allowed = set("!#$%&'*+-.^_`|~")
    return bool(text) and all(ch.isalnum() or ch in allowed for ch in text)


def quote_string(text: str) -> str:
    """Quote a header parameter value, escaping backslashes and quotes."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def parse_weighted(value: str) -> list[tuple[str, float]]:
    """Parse an ``Accept``-style list into (item, weight) pairs, best first.

    >>> parse_weighted("text/html;q=0.8, application/json")
    [('application/json', 1.0), ('text/html', 0.8)]
    """
    items = []
    for position, part in enumerate(split_csv(value)):
        name, _, params = part.partition(";")
        weight = 1.0
        for param in params.split(";"):
            key, _, raw = param.strip().partition("=")
            if key == "q":
                try:
                    weight = float(raw)
                except ValueError:
                    weight = 0.0
        items.append((-weight, position, name.strip()))
    return [(name, -negative) for negative, _, name in sorted(items)]


def indent(text: str, prefix: str = "    ") -> str:
    """Prefix every non-empty line of ``text`` with ``prefix``."""
    lines = text.splitlines(keepends=True)
    return "".join(prefix + line if line.strip() else line for line in lines)
