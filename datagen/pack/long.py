"""Long-context buckets: repo documents by the token length of their repo, and the choice of
documents for the longest output (``pack.long``).

A document's bucket is that of its whole repo (all its parts): a repo of 1M tokens is cut
into documents of ``doc_max_tokens``, and each is long-context material, while the last
part of it is still a part of a long repo. Buckets are ``< e0``, ``e0-e1``, ..., ``>= last``
(``pack.long.edges``); a bucket whose lower edge reaches ``pack.long.min_tokens`` is long.

With ``pack.long.share`` the longest ``seq_len``'s output takes every long document and
short ones while long tokens stay at least that share of the output's document tokens, as the
long-context phases of ProLong and Qwen2.5-Coder mix long and short data. The short
documents are taken in the order of a seeded hash of their id (a deterministic sample), and
packed in corpus order. Their tokens are spooled to a file during the pass (one int32 array
and an index of (doc, long, offset, length)), so the choice is made once all are seen and
read back memory-mapped.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from datagen.config.pack import LongConfig


def _human(n: int) -> str:
    for unit, size in (("M", 1 << 20), ("k", 1 << 10)):
        if n % size == 0:
            return f"{n // size}{unit}"
    return str(n)


@dataclass(frozen=True)
class Bucket:
    label: str
    low: int
    high: int | None
    long: bool


def buckets(cfg: LongConfig) -> list[Bucket]:
    """The buckets of ``cfg.edges``, shortest first."""
    edges = list(cfg.edges)
    out = [Bucket(f"<{_human(edges[0])}", 0, edges[0], False)]
    for a, b in zip(edges, edges[1:], strict=False):
        out.append(Bucket(f"{_human(a)}-{_human(b)}", a, b, a >= cfg.min_tokens))
    out.append(Bucket(f">={_human(edges[-1])}", edges[-1], None, edges[-1] >= cfg.min_tokens))
    return out


def bucket_of(tokens: int, table: list[Bucket]) -> Bucket:
    for b in reversed(table):
        if tokens >= b.low:
            return b
    return table[0]


@dataclass
class BucketCounts:
    """Documents and tokens per bucket of one split, and those the long output took."""

    docs: dict[str, list[int]] = field(default_factory=dict)  # label -> [docs, tokens, sel docs, sel tokens]

    def add(self, label: str, tokens: int, selected: bool) -> None:
        row = self.docs.setdefault(label, [0, 0, 0, 0])
        row[0] += 1
        row[1] += tokens
        if selected:
            row[2] += 1
            row[3] += tokens


def _order_key(doc_id: str, seed: int) -> bytes:
    return hashlib.blake2b(f"{seed}\0{doc_id}".encode(), digest_size=8).digest()


class LongSpool:
    """The documents of one split for the long output, kept on disk until ``select``."""

    def __init__(self, path: Path, cfg: LongConfig):
        self.path, self.cfg = path, cfg
        self.file = open(path, "wb")
        self.index: list[tuple[str, bool, int, int]] = []
        self.offset = 0

    def add(self, doc_id: str, long: bool, tokens: np.ndarray) -> None:
        self.file.write(np.ascontiguousarray(tokens, dtype=np.int32).tobytes())
        self.index.append((doc_id, long, self.offset, len(tokens)))
        self.offset += len(tokens)

    def select(self) -> set[str]:
        """Every long document, and short ones (hash order) up to the recipe's share."""
        self.file.close()
        share = self.cfg.share if self.cfg.share is not None else 0.0
        long_tokens = sum(n for _, lg, _, n in self.index if lg)
        chosen = {d for d, lg, _, _ in self.index if lg}
        shorts = sorted((_order_key(d, self.cfg.seed), d, n) for d, lg, _, n in self.index if not lg)
        if not long_tokens:  # nothing long: the output is the short documents
            return chosen | {d for _, d, _ in shorts}
        if share <= 0:  # no long documents wanted: short ones only
            return {d for _, d, _ in shorts}
        budget = long_tokens * (1 - share) / share
        taken = 0
        for _, d, n in shorts:  # up to the budget: the long share is at least the recipe's
            if taken + n > budget:
                break
            chosen.add(d)
            taken += n
        return chosen

    def replay(self, chosen: set[str]) -> Iterator[tuple[str, np.ndarray]]:
        """(doc_id, tokens) of the chosen documents, in the order they were added."""
        if not self.offset:
            return
        data = np.memmap(self.path, np.int32, "r")
        for doc_id, _, start, n in self.index:
            if doc_id in chosen:
                yield doc_id, np.asarray(data[start : start + n])
        del data

    def close(self) -> None:
        if not self.file.closed:
            self.file.close()
        self.path.unlink(missing_ok=True)
