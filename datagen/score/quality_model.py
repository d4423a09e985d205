"""The learned code-quality scorer: one linear model per language over hashed byte
n-grams of a file's first ``max_chars`` characters, fitted to teacher ratings (0-5) by
``datagen quality train``.

Features: every byte 4-gram and 8-gram of the text, each hashed (multiply-shift) into
``2**bits`` shared buckets, as frequencies (a file's n-grams sum to 1 per size), plus the
share of distinct non-empty lines (copy-paste, which bags of n-grams see poorly). The
score is ``bias + w . x``, clipped to [0, 5]: a regression on the teacher's scale, as
Stack-Edu's classifier is. Reading the n-grams costs no Python loop: the 8-grams at
offsets ``k, k+8, ...`` are one ``uint64`` view of the bytes shifted by ``k``, and the
4-grams are their low halves, so scoring a file is a few numpy passes over its bytes.

Why not fastText or scikit-learn (measured in ``benchmarks/quality_throughput.py``,
docs/quality.md): fastText's supervised training here gave different weights run to run
even on one thread, and stopped with "Encountered NaN" on small label sets; scikit-learn's
``HashingVectorizer`` tokenizes in a Python regex (a few MB/s) and is not a dependency.

The model is one versioned file (``quality_v1``): a zip archive of ``meta.json`` (version,
feature config, per-language thresholds and held-out agreement, the sha256 of the
training labels) and one float32 weight vector per language (``models/<lang>.npy``),
plus ``*`` (all languages pooled) when some language has too few labels.
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from datagen.errors import UserError
from datagen.runtime.atomic import atomic_path

VERSION = "quality_v1"
POOLED = "*"  # the model of every language without its own
_K4 = np.uint64(0x9E3779B97F4A7C15)  # multiply-shift hashing constants (odd 64-bit)
_K8 = np.uint64(0xC2B2AE3D27D4EB4F)
_LOW = np.uint64(0xFFFFFFFF)
DENSE = 2  # the dense features after the buckets: distinct-line share, and a constant 1 (the bias)


@dataclass(frozen=True)
class Features:
    """What the model reads of a file and how it is hashed."""

    max_chars: int = 8000
    bits: int = 18

    @property
    def size(self) -> int:
        """Weights of one model: the buckets, then the dense features."""
        return (1 << self.bits) + DENSE

    def grams(self, text: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The byte n-grams of the file's head as ``uint64``, in no particular order:
        (4-grams, 8-byte words at every 4-gram start, the indices of those words that run
        past the end and so are no 8-gram)."""
        raw = text[: self.max_chars].encode("utf-8", "surrogatepass")
        n = len(raw)
        if n < 4:
            empty = np.zeros(0, np.uint64)
            return empty, empty, np.zeros(0, np.intp)
        buf = raw + b"\0" * 8  # a 4-gram starting at n - 4 is read as 8 bytes
        # starts k, k+8, ... of each offset k: a 4-gram needs start <= n - 4, an 8-gram start <= n - 8
        counts = [(n - 4 - k) // 8 + 1 for k in range(min(8, n - 3))]
        words = np.concatenate([np.frombuffer(buf, "<u8", c, k) for k, c in enumerate(counts)])
        ends = np.cumsum(counts) - 1
        past = [int(ends[k]) for k, c in enumerate(counts) if 8 * (c - 1) + k > n - 8]
        return words & _LOW, words, np.array(past, np.intp)

    def buckets(self, text: str) -> np.ndarray:
        """Bucket of every byte 4-gram and 8-gram of the file's head (4-grams first)."""
        g4, words, past = self.grams(text)
        return np.concatenate([self._hash(g4, _K4), np.delete(self._hash(words, _K8), past)])

    def _hash(self, grams: np.ndarray, key: np.uint64) -> np.ndarray:
        """Multiply-shift hash of ``grams`` into ``2**bits`` buckets, in place, as int64."""
        grams *= key
        grams >>= np.uint64(64 - self.bits)
        return grams.view(np.int64)

    def dense(self, text: str) -> np.ndarray:
        """[share of distinct lines among the non-empty ones, 1.0] (C-level str and set work)."""
        lines = text[: self.max_chars].splitlines()
        distinct = set(lines)
        distinct.discard("")
        filled = len(lines) - lines.count("")
        return np.array([len(distinct) / filled if filled else 1.0, 1.0], np.float32)

    def vector(self, text: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Sparse features of one file: (bucket ids, their frequencies, dense values)."""
        b = self.buckets(text)
        ids, counts = np.unique(b, return_counts=True)
        return ids.astype(np.int64), (counts / max(1, len(b))).astype(np.float32), self.dense(text)


def score_one(weights: np.ndarray, feats: Features, text: str) -> float:
    """``bias + w . x`` of one file, clipped to the rating scale."""
    g4, words, past = feats.grams(text)
    n = len(g4) + len(words) - len(past)
    value = 0.0
    if n:
        total = weights.take(feats._hash(g4, _K4)).sum(dtype=np.float64)
        h8 = feats._hash(words, _K8)
        total += weights.take(h8).sum(dtype=np.float64) - weights.take(h8[past]).sum(dtype=np.float64)
        value = float(total) / n
    value += float(weights[-DENSE:] @ feats.dense(text))
    return round(min(5.0, max(0.0, value)), 4)


@dataclass
class QualityModel:
    """A loaded ``quality_v1`` file: per-language weights and thresholds."""

    meta: dict[str, Any]
    models: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def features(self) -> Features:
        return Features(**self.meta["features"])

    def threshold(self, lang: str | None) -> float:
        per_lang = self.meta["thresholds"]
        return per_lang.get(lang or "", per_lang[POOLED])

    def weights_for(self, lang: str | None) -> np.ndarray | None:
        return self.models.get(lang or "", self.models.get(POOLED))

    def score(self, texts: Sequence[str], langs: Sequence[str | None]) -> list[float | None]:
        """The score of each text under its language's model (None: no model applies)."""
        feats = self.features
        out: list[float | None] = []
        for text, lang in zip(texts, langs, strict=True):
            weights = self.weights_for(lang)
            out.append(None if weights is None else score_one(weights, feats, text))
        return out


def save_model(path: Path, meta: dict[str, Any], models: dict[str, np.ndarray]) -> None:
    """Write the versioned model file (written whole, then renamed; the same model is the
    same bytes: fixed entry timestamps, sorted entries)."""
    with atomic_path(path, mkdir=True) as tmp, zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(_entry("meta.json"), json.dumps(meta, indent=2, sort_keys=True) + "\n")
        for lang in sorted(models):
            buf = io.BytesIO()
            np.save(buf, models[lang].astype("<f4"), allow_pickle=False)
            zf.writestr(_entry(f"models/{lang}.npy"), buf.getvalue())


def _entry(name: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
    info.external_attr = 0o644 << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    return info


def read_meta(path: str | Path) -> dict[str, Any]:
    """The ``meta.json`` of a model file (checked to be a ``quality_v1`` model)."""
    try:
        with zipfile.ZipFile(path) as zf:
            meta = json.loads(zf.read("meta.json"))
    except (OSError, KeyError, zipfile.BadZipFile, ValueError) as exc:
        raise UserError(f"{path} is not a quality model file ({exc})") from exc
    if meta.get("version") != VERSION:
        raise UserError(f"{path} is a {meta.get('version')!r} model; this datagen reads {VERSION}")
    return meta


def load_model(path: str | Path) -> QualityModel:
    """Load a model file: its meta and every language's weights."""
    meta = read_meta(path)
    size = Features(**meta["features"]).size
    models = {}
    with zipfile.ZipFile(path) as zf:
        for lang in meta["models"]:
            weights = np.load(io.BytesIO(zf.read(f"models/{lang}.npy")), allow_pickle=False)
            if weights.shape != (size,):
                raise UserError(f"{path}: the {lang} weights have shape {weights.shape}, expected ({size},)")
            models[lang] = weights
    return QualityModel(meta, models)
