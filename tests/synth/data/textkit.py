"""textkit: small text-processing helpers (test data for the synth strategies).

Written for datagen's tests: it exercises every construct the Python strategies edit
(operators, comparisons, literals, defaults, loops, with/try, asserts, raises, classes
with bases and methods) in code that reads like a real library.
"""

from __future__ import annotations

import io
import re
from collections import Counter
from collections.abc import Iterable, Iterator

WORD = re.compile(r"[A-Za-z0-9']+")
DEFAULT_WIDTH = 72


class TextError(ValueError):
    """Raised when an input cannot be processed."""


class Token:
    """One word and where it starts in the text."""

    kind = "word"

    def __init__(self, text: str, start: int) -> None:
        self.text = text
        self.start = start

    @property
    def end(self) -> int:
        return self.start + len(self.text)

    def overlaps(self, other: Token) -> bool:
        return self.start < other.end and other.start < self.end

    def __repr__(self) -> str:
        return f"Token({self.text!r}, {self.start})"


def tokenize(text: str, lower: bool = False) -> list[Token]:
    """Split ``text`` into word tokens, optionally lower-cased."""
    tokens = []
    for match in WORD.finditer(text):
        word = match.group(0)
        if lower:
            word = word.lower()
        tokens.append(Token(word, match.start()))
    return tokens


def word_counts(text: str, min_count: int = 1) -> dict[str, int]:
    """Count words (case-insensitive), keeping those seen at least ``min_count`` times."""
    counts = Counter(token.text for token in tokenize(text, lower=True))
    return {word: n for word, n in counts.items() if n >= min_count}


def top_words(text: str, limit: int = 3) -> list[tuple[str, int]]:
    """The ``limit`` most frequent words, ties broken alphabetically."""
    assert limit >= 0, "limit must not be negative"
    ranked = sorted(word_counts(text).items(), key=lambda item: (-item[1], item[0]))
    return ranked[:limit]


def wrap(text: str, width: int = DEFAULT_WIDTH) -> list[str]:
    """Greedy word wrap: lines of at most ``width`` characters (long words stay whole)."""
    if width <= 0:
        raise TextError(f"width must be positive, got {width}")
    lines: list[str] = []
    current = ""
    for word in text.split():
        candidate = word if not current else current + " " + word
        if len(candidate) <= width or not current:
            current = candidate
        else:
            lines.append(current)
            current = word
    if current:
        lines.append(current)
    return lines


def center(text: str, width: int, fill: str = " ") -> str:
    """Center ``text`` in a field of ``width`` characters."""
    if len(fill) != 1:
        raise TextError("fill must be a single character")
    missing = width - len(text)
    if missing <= 0:
        return text
    left = missing // 2
    right = missing - left
    return fill * left + text + fill * right


def chunks(items: list[str], size: int) -> Iterator[list[str]]:
    """Consecutive slices of ``items`` of length ``size`` (the last may be shorter)."""
    index = 0
    while index < len(items):
        yield items[index : index + size]
        index += size


def read_lines(source: str | io.StringIO) -> list[str]:
    """Non-empty, stripped lines of a string or a text stream."""
    stream = io.StringIO(source) if isinstance(source, str) else source
    with stream:
        lines = [line.strip() for line in stream]
    return [line for line in lines if line]


def parse_number(text: str, default: float | None = None) -> float | None:
    """A float from ``text``; ``default`` when it is empty or not a number."""
    try:
        value = float(text.strip())
    except ValueError:
        return default
    except AttributeError:
        raise TextError("text must be a string") from None
    if value != value:  # NaN
        return default
    return value


def join_words(words: Iterable[str], sep: str = ", ", last: str = " and ") -> str:
    """Join words as in prose: "a, b and c"."""
    items = list(words)
    if len(items) > 1 and last:
        return sep.join(items[:-1]) + last + items[-1]
    return sep.join(items)


class Document(Token):
    """A whole text with lazily computed statistics."""

    kind = "document"
    max_length = 1_000_000

    def __init__(self, text: str, title: str = "") -> None:
        super().__init__(text, 0)
        self.title = title
        self._tokens: list[Token] | None = None

    def tokens(self) -> list[Token]:
        if self._tokens is None:
            self._tokens = tokenize(self.text)
        return self._tokens

    def summary(self, words: int = 5) -> str:
        head = " ".join(token.text for token in self.tokens()[:words])
        more = len(self.tokens()) > words
        return head + "..." if more else head

    def ratio(self, other: Document) -> float:
        mine, theirs = len(self.tokens()), len(other.tokens())
        if mine == 0 and theirs == 0:
            return 1.0
        return min(mine, theirs) / max(mine, theirs)

    def check(self) -> None:
        if len(self.text) > self.max_length:
            raise TextError("document too long")
        assert self.start == 0
