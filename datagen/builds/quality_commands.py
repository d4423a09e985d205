"""``datagen quality annotate`` and ``datagen quality train``: the two commands that make
the learned quality scorer (``datagen/score/quality_*.py``) that the corpus build applies
with ``quality_model.path``.

``annotate`` records a run like ``teacher run`` does (``runs`` and ``teacher_calls`` in
the manifest beside the labels, each paid call journaled as its answer arrives), so a
killed annotation resumes from the request cache and its spending is kept.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path
from typing import Any

from datagen.builds.base import accounted_teacher
from datagen.config.base import canonical_json, load_recipe, recipe_hash
from datagen.config.quality import QualityRecipe
from datagen.errors import UserError
from datagen.records import RunRow, TeacherCall
from datagen.runtime.atomic import atomic_write
from datagen.runtime.run import BuildRun


def load_quality_recipe(recipe: str | None, overrides: list[str] | None) -> QualityRecipe:
    """``pipelines/quality.yaml`` (or ``recipe``) after ``--set`` overrides."""
    cfg, _ = load_recipe(QualityRecipe, recipe, "quality", overrides or [])
    return cfg


def annotate(corpus: Path, out: Path, recipe: QualityRecipe, manifest: Path | None = None,
             progress: bool = False) -> dict[str, Any]:
    """Rate a per-language sample of ``corpus``'s kept files with the recipe's teacher and
    write the labels JSONL to ``out`` (ordered by language, then id). Returns counts."""
    from datagen.score.quality_annotate import labels, read_files, requests, sample_ids

    cfg = recipe.annotate
    ids = sample_ids(corpus, cfg)
    if not ids:
        raise UserError(f"{corpus} has no kept files" + (f" in {', '.join(cfg.langs)}" if cfg.langs else ""))
    files = read_files(corpus, ids)
    key = canonical_json({"teacher": recipe.teacher.cache_model_id, "annotate": cfg.model_dump(mode="json"),
                          "ids": ids})
    run_id = hashlib.sha256(f"{recipe_hash(recipe.teacher)}:{key}".encode()).hexdigest()[:16]
    where = manifest or out.parent
    run = BuildRun.command_run(where, "quality annotate", recipe, run_id=run_id, tables=[RunRow, TeacherCall])
    with run:
        teacher = accounted_teacher(run, recipe.teacher)
        results = teacher.generate(requests(files, cfg), progress=progress)
        rows = labels(files, results, cfg, recipe.teacher.cache_model_id)
        atomic_write(out, "".join(r.model_dump_json() + "\n" for r in rows), mkdir=True)
    status = Counter(r.status for r in rows)
    per_lang = Counter(r.lang for r in rows if r.score is not None)
    return {"files": len(rows), "status": dict(sorted(status.items())), "labels": dict(sorted(per_lang.items())),
            "cached": sum(r.cached for r in results)}


def train(labels: Path, out: Path, recipe: QualityRecipe) -> dict[str, Any]:
    """Fit the per-language models on ``labels`` and write the model file; returns its meta."""
    from datagen.score.quality_train import train as fit

    return fit(labels, out, recipe.train)
