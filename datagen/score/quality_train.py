"""Fit the ``quality_v1`` scorer to teacher ratings: one linear model per language (and a
pooled one when some language has too few labels), each judged on held-out labels
before the model file is written.

The split is by a hash of each file's id (``holdout`` of every language held out), so it
is the same on every run and independent of the label file's order. Training is
full-batch and starts from zero, so the same labels and recipe give the same model bytes.
The held-out figures in the model's ``meta.json``: ``agreement`` (share of held-out files
on the same side of the language's threshold as the teacher's rating), ``mae`` (mean
absolute difference between score and rating) and their counts.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import xxhash

from datagen.config.quality import TrainConfig
from datagen.errors import UserError
from datagen.records import QualityLabel
from datagen.score.quality_model import DENSE, POOLED, VERSION, Features, save_model, score_one


def read_labels(path: Path) -> list[QualityLabel]:
    """The labels JSONL of ``datagen quality annotate`` (rows without a score are skipped)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise UserError(f"cannot read labels {path}: {exc}") from exc
    try:
        rows = [QualityLabel.model_validate_json(line) for line in lines if line.strip()]
    except ValueError as exc:
        raise UserError(f"{path} is not a labels file of datagen quality annotate: {exc}") from exc
    return [r for r in rows if r.score is not None]


def is_held_out(file_id: str, share: float) -> bool:
    """Whether a file belongs to the held-out split (a hash of its id, not the file order)."""
    return xxhash.xxh64_intdigest(f"holdout:{file_id}") / 2**64 < share


def agreement(scores: list[float], labels: list[int], threshold: float) -> dict[str, float | int | None]:
    """Held-out figures: same side of the threshold as the teacher, and mean abs error."""
    if not labels:
        return {"n": 0, "agreement": None, "mae": None}
    same = sum((s >= threshold) == (y >= threshold) for s, y in zip(scores, labels, strict=True))
    mae = sum(abs(s - y) for s, y in zip(scores, labels, strict=True)) / len(labels)
    return {"n": len(labels), "agreement": round(same / len(labels), 4), "mae": round(mae, 4)}


@dataclass
class Design:
    """The training matrix of a set of files, sparse: entry ``i`` is
    ``x[rows[i], cols[i]] = vals[i]``; ``dense`` holds the dense features per file."""

    rows: np.ndarray
    cols: np.ndarray
    vals: np.ndarray
    dense: np.ndarray

    @classmethod
    def of(cls, texts: list[str], feats: Features) -> Design:
        parts = [feats.vector(t) for t in texts]
        rows = np.concatenate([np.full(len(ids), i, np.int64) for i, (ids, _, _) in enumerate(parts)])
        return cls(rows, np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]).astype(
            np.float64), np.stack([p[2] for p in parts]).astype(np.float64))

    def predict(self, w: np.ndarray, n: int) -> np.ndarray:
        nb = len(w) - DENSE
        return np.bincount(self.rows, weights=self.vals * w[self.cols], minlength=n) + self.dense @ w[nb:]


def fit(texts: list[str], y: list[int], cfg: TrainConfig, feats: Features) -> np.ndarray:
    """Weights minimising the mean squared error (plus ``l2`` on the n-gram weights) by
    full-batch Adam from zero, the bias starting at the mean rating. Deterministic: numpy
    sums in a fixed order and nothing is sampled."""
    design, target, n = Design.of(texts, feats), np.asarray(y, np.float64), len(texts)
    w = np.zeros(feats.size, np.float64)
    w[-1] = target.mean()
    m, v = np.zeros_like(w), np.zeros_like(w)
    beta1, beta2, eps = 0.9, 0.999, 1e-8
    nb = feats.size - DENSE
    for step in range(1, cfg.steps + 1):
        r = (design.predict(w, n) - target) / n
        grad = np.empty_like(w)
        grad[:nb] = np.bincount(design.cols, weights=design.vals * r[design.rows], minlength=nb) + cfg.l2 * w[:nb]
        grad[nb:] = design.dense.T @ r
        m = beta1 * m + (1 - beta1) * grad
        v = beta2 * v + (1 - beta2) * grad * grad
        w -= cfg.lr * (m / (1 - beta1**step)) / (np.sqrt(v / (1 - beta2**step)) + eps)
    return w.astype(np.float32)


def train(labels_path: Path, out: Path, cfg: TrainConfig) -> dict[str, Any]:
    """Train per-language models on the labels, evaluate each on its held-out split, and
    write the model file to ``out``; returns its ``meta``."""
    rows = read_labels(labels_path)
    if len(rows) < cfg.min_labels:
        raise UserError(f"{labels_path} has {len(rows)} rated files; training needs at least "
                        f"train.min_labels={cfg.min_labels}")
    feats = Features(max_chars=cfg.max_chars, bits=cfg.bits)
    by_lang: dict[str, list[QualityLabel]] = defaultdict(list)
    for row in sorted(rows, key=lambda r: (r.lang, r.id)):
        by_lang[row.lang].append(row)
    groups = {lang: group for lang, group in by_lang.items() if len(group) >= cfg.min_labels}
    if len(groups) < len(by_lang):  # the languages with too few labels share one model
        groups[POOLED] = [r for lang in sorted(by_lang) for r in by_lang[lang]]
    thresholds = {lang: cfg.lang_thresholds.get(lang, cfg.threshold) for lang in sorted(by_lang)}
    thresholds[POOLED] = cfg.threshold
    models, evaluation = {}, {}
    for name, group in groups.items():
        train_rows = [r for r in group if not is_held_out(r.id, cfg.holdout)]
        held = [r for r in group if is_held_out(r.id, cfg.holdout)]
        if not train_rows:
            raise UserError(f"language {name}: every label fell in the held-out split")
        models[name] = fit([r.text for r in train_rows], [r.score for r in train_rows], cfg, feats)
        scores = [score_one(models[name], feats, r.text) for r in held]
        evaluation[name] = {"train": len(train_rows), **agreement(scores, [r.score for r in held], thresholds[name])}
    meta = {
        "version": VERSION,
        "features": asdict(feats),
        "train": cfg.model_dump(mode="json"),
        "thresholds": thresholds,
        "models": sorted(groups),
        "held_out": evaluation,
        "labels_sha256": hashlib.sha256(labels_path.read_bytes()).hexdigest(),
        "labels": {lang: len(group) for lang, group in sorted(by_lang.items())},
    }
    save_model(out, meta, models)
    return meta
