"""The learned code-quality scorer: one linear model per language over hashed byte
n-grams of a file's first ``max_chars`` characters, fitted to teacher ratings (0-5) by
``datagen quality train``.

Features: every byte 4-gram and 8-gram of the text, each hashed (multiply-shift) into
``2**bits`` shared buckets, as frequencies (a file's n-grams sum to 1 per size), plus the
share of distinct non-blank lines (copy-paste, which bags of n-grams see poorly). The
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
import os
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from datagen.errors import UserError

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

    def buckets(self, text: str) -> np.ndarray:
        """Bucket of every byte 4-gram and 8-gram of the file's head (4-grams first)."""
        raw = text[: self.max_chars].encode("utf-8", "surrogatepass")
        n = len(raw)
        if n < 4:
            return np.zeros(0, np.uint64)
        buf = raw + b"\0" * 16
        m = (n + 7) // 8  # 8-byte words per offset: covers every start position < n
        grams = np.concatenate([np.frombuffer(buf, "<u8", m, k) for k in range(8)])
        shift = np.uint64(64 - self.bits)
        b4 = ((grams & _LOW) * _K4) >> shift
        b8 = (grams * _K8) >> shift
        # positions past the end are padding (zeros); a 4-gram starting at i needs i <= n - 4
        start = np.concatenate([np.arange(k, k + 8 * m, 8) for k in range(8)])
        return np.concatenate([b4[start <= n - 4], b8[start <= n - 8]])

    def dense(self, text: str) -> np.ndarray:
        """[share of distinct non-blank lines, 1.0]."""
        lines = [s for s in (x.strip() for x in text[: self.max_chars].splitlines()) if s]
        distinct = len(set(lines)) / len(lines) if lines else 1.0
        return np.array([distinct, 1.0], np.float32)

    def vector(self, text: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Sparse features of one file: (bucket ids, their frequencies, dense values)."""
        b = self.buckets(text)
        ids, counts = np.unique(b, return_counts=True)
        return ids.astype(np.int64), (counts / max(1, len(b))).astype(np.float32), self.dense(text)


def score_one(weights: np.ndarray, feats: Features, text: str) -> float:
    """``bias + w . x`` of one file, clipped to the rating scale."""
    b = feats.buckets(text)
    value = float(weights[b.astype(np.intp)].sum(dtype=np.float64) / len(b)) if len(b) else 0.0
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
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(_entry("meta.json"), json.dumps(meta, indent=2, sort_keys=True) + "\n")
        for lang in sorted(models):
            buf = io.BytesIO()
            np.save(buf, models[lang].astype("<f4"), allow_pickle=False)
            zf.writestr(_entry(f"models/{lang}.npy"), buf.getvalue())
    os.replace(tmp, path)


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
