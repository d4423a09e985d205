"""Planted near-duplicates for measuring dedup recall and precision (tests, benchmarks).

``near_copy`` edits a file the way copies drift in real repositories: renamed
identifiers, re-indentation and re-wrapped whitespace, and a few changed lines.
``shingle_jaccard`` is the exact Jaccard of the same shingles the MinHash stage uses.
"""

from __future__ import annotations

import random
import re

_IDENT = re.compile(r"\b[A-Za-z_][A-Za-z_0-9]{3,}\b")


def shingles(text: str, ngram: int = 5) -> set[tuple[str, ...]]:
    words = text.split()
    return {tuple(words[i : i + ngram]) for i in range(len(words) - ngram + 1)}


def shingle_jaccard(a: str, b: str, ngram: int = 5) -> float:
    sa, sb = shingles(a, ngram), shingles(b, ngram)
    if not sa and not sb:
        return 1.0
    return len(sa & sb) / len(sa | sb)


def near_copy(text: str, rng: random.Random, renames: int = 1, changed_lines: int = 2) -> str:
    """A drifted copy of ``text``: ``renames`` identifiers renamed everywhere, indentation
    changed, and ``changed_lines`` lines replaced or inserted."""
    idents = sorted(set(_IDENT.findall(text)))
    for old in rng.sample(idents, min(renames, len(idents))):
        text = re.sub(rf"\b{re.escape(old)}\b", old + "_v2", text)
    lines = [ln.replace("    ", "  ") for ln in text.splitlines()]  # re-indent: 4 -> 2
    for _ in range(changed_lines):
        i = rng.randrange(len(lines) + 1)
        new = f"    value_{rng.randrange(10**6)} = compute({rng.randrange(100)})"
        if i < len(lines) and rng.random() < 0.5:
            lines[i] = new
        else:
            lines.insert(i, new)
    return "\n".join(lines) + "\n"


def planted_copy(
    text: str, rng: random.Random, min_jaccard: float = 0.85, ngram: int = 5, tries: int = 8
) -> tuple[str, float] | None:
    """A near copy with shingle Jaccard >= ``min_jaccard``, fewer edits on each retry;
    None when even a light edit falls below (the file is too short)."""
    renames, changed = 1, 3
    for _ in range(tries):
        copy = near_copy(text, rng, renames, changed)
        j = shingle_jaccard(text, copy, ngram)
        if j >= min_jaccard:
            return copy, j
        renames, changed = 0, max(1, changed - 1)
    return None
