"""StarCoder-style quality heuristics for code: score every file, then decide per language.

Scores (``FileRow`` fields): max_line_length, avg_line_length, alnum_fraction. Data-like
lines (long runs of numbers, hex or base64) are counted for the ``data_lines`` check.
Thresholds come from ``filters/quality.yaml``; each drop names the check that failed.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import numpy as np
import polars as pl
from datatrove.data import Document

from datagen.config.base import load_yaml_pack
from datagen.config.curate import QualityConfig
from datagen.curate.base import FileStep, drop
from datagen.records import DropReason

_ASCII_NOT_ALNUM = bytes(b for b in range(128) if not chr(b).isalnum())
_DATA_PATTERN = (
    r"^\s*(?:[-+]?(?:0x[0-9a-fA-F]+|\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)\s*,\s*){8,}"  # number lists
    r"|[A-Za-z0-9+/=]{120,}"  # base64 / hex blobs
)
_DATA_LINE = re.compile(_DATA_PATTERN)
_ANY_DATA_LINE = re.compile(_DATA_PATTERN, re.MULTILINE)  # one pass: most files have none
# A superset of ``_ANY_DATA_LINE`` in Rust's linear-time regex (polars), ~10x faster than
# Python's ``re`` on code: ``\s`` plus what ``str.isspace`` adds, any numeric character for
# ``\d``, eight repetitions being enough to match ``{8,}``. Only a file it matches is
# searched with ``_ANY_DATA_LINE``, so the scores are exactly those of the Python pattern.
_S, _D = r"[\s\x1c-\x1f]", r"\p{N}"
_DATA_GATE = (
    rf"(?m)^{_S}*(?:[-+]?(?:0x[0-9a-fA-F]+|{_D}+(?:\.{_D}+)?(?:[eE][-+]?{_D}+)?){_S}*,{_S}*){{8}}"
    r"|[A-Za-z0-9+/=]{120}"
)


def may_have_data_lines(texts: list[str]) -> list[bool]:
    """For each text, False when no line of it can be data-like (``_DATA_GATE``)."""
    if not texts:
        return []
    return pl.Series("t", texts, dtype=pl.String).str.contains(_DATA_GATE).to_list()


@functools.cache
def _bmp_alnum() -> np.ndarray:
    """``str.isalnum()`` of every code point of the Basic Multilingual Plane (a 64 KiB
    lookup table, built once per process on the first non-ASCII text)."""
    return np.array([chr(c).isalnum() for c in range(0x10000)])


def count_alnum(text: str) -> int:
    """Number of characters for which ``str.isalnum()`` is true."""
    if text.isascii():  # bytes.translate deletes in C at memory speed
        return len(text.encode("ascii").translate(None, _ASCII_NOT_ALNUM))
    # One code point per 4 bytes, looked up in the table; U+FFFF (not alnum) stands in
    # for the rare characters above the BMP, which are then counted one by one.
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), np.uint32)
    n = int(np.count_nonzero(_bmp_alnum()[np.minimum(codes, 0xFFFF)]))
    if codes.max() > 0xFFFF:
        n += sum(chr(c).isalnum() for c in codes[codes > 0xFFFF].tolist())
    return n


@dataclass(frozen=True)
class Thresholds:
    max_line_length: int | None = None
    avg_line_length: float | None = None
    min_alnum_fraction: float | None = None
    max_data_line_fraction: float | None = None
    min_lines: int | None = None


def load_thresholds(rules: str) -> dict[str, Thresholds]:
    pack = load_yaml_pack(rules)
    default = pack.get("default", {})
    table = {"*": Thresholds(**default)}
    for lang, over in (pack.get("languages") or {}).items():
        table[lang] = Thresholds(**{**default, **(over or {})})
    return table


def quality_scores(text: str, may_have_data: bool = True) -> dict[str, float | int]:
    """The scores of one file; ``may_have_data=False`` (from ``may_have_data_lines``)
    skips the data-line search."""
    lines = text.splitlines() or [""]
    lengths = list(map(len, lines))
    alnum = count_alnum(text)
    data_lines = 0
    if may_have_data and _ANY_DATA_LINE.search(text):
        data_lines = sum(1 for line in lines if _DATA_LINE.search(line))
    return {
        "max_line_length": max(lengths),
        "avg_line_length": round(sum(lengths) / len(lines), 4),
        "alnum_fraction": round(alnum / len(text), 6) if text else 0.0,
        "data_line_fraction": data_lines / len(lines),
        "lines": len(lines),
    }


def quality_reason(scores: dict, t: Thresholds) -> DropReason | None:
    if t.min_lines is not None and scores["lines"] < t.min_lines:
        return "too_few_lines"
    if t.max_line_length is not None and scores["max_line_length"] > t.max_line_length:
        return "max_line_length"
    if t.avg_line_length is not None and scores["avg_line_length"] > t.avg_line_length:
        return "avg_line_length"
    if t.min_alnum_fraction is not None and scores["alnum_fraction"] < t.min_alnum_fraction:
        return "alnum_fraction"
    if t.max_data_line_fraction is not None and scores["data_line_fraction"] > t.max_data_line_fraction:
        return "data_lines"
    return None


class QualityStep(FileStep):
    """Writes the quality scores of every kept file and drops those over a threshold."""

    name = "quality"
    section = "quality"
    writes = ("max_line_length", "avg_line_length", "alnum_fraction")
    batch_docs = 256  # the data-line gate runs once per batch

    def __init__(self, cfg: QualityConfig):
        super().__init__()
        self.thresholds = load_thresholds(cfg.rules)

    def process_batch(self, docs: list[Document]) -> None:
        for doc, maybe in zip(docs, may_have_data_lines([d.text for d in docs]), strict=True):
            self._score(doc, maybe)

    def process(self, doc: Document) -> None:
        self._score(doc, True)

    def _score(self, doc: Document, may_have_data: bool) -> None:
        scores = quality_scores(doc.text, may_have_data)
        for key in self.writes:
            doc.metadata[key] = scores[key]
        t = self.thresholds.get(doc.metadata.get("lang") or "*", self.thresholds["*"])
        reason = quality_reason(scores, t)
        if reason:
            drop(doc, reason)
