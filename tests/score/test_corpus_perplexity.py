"""The corpus build's perplexity step with the tiny LM: a score per kept file in the
manifest, and the file over the recipe's cut dropped with reason ``perplexity``."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from datagen.builds.cpt_corpus.build import run_cpt_corpus
from tests.score.lm import IN_DISTRIBUTION
from tests.score.test_perplexity import scrambled

pytestmark = pytest.mark.slow


def test_perplexity_step_scores_files_and_applies_the_cut(tmp_path: Path, tiny_lm: Path):
    repo = tmp_path / "mini"
    repo.mkdir()
    (repo / "LICENSE").write_text("MIT License\n\nPermission is hereby granted, free of charge, to any person")
    (repo / "stack.py").write_text(IN_DISTRIBUTION)
    (repo / "noise.py").write_text(scrambled(IN_DISTRIBUTION, 5))
    sets = ["perplexity.enabled=true", f"perplexity.model={tiny_lm}", "perplexity.max=20",
            "perplexity.batch_docs=1", "syntax.enabled=false", "quality.enabled=false", "dedup.near.enabled=false"]
    run_cpt_corpus(inputs=[str(repo)], output=tmp_path / "out", overrides=sets + ["crawl.licenses=any"])
    con = duckdb.connect(str(tmp_path / "out" / "manifest.duckdb"), read_only=True)
    rows = dict((p, (d, r, ppl)) for p, d, r, ppl in con.execute(
        "SELECT path, decision, reason, perplexity FROM files WHERE path LIKE '%.py'").fetchall())
    assert rows["stack.py"][0] == "kept" and rows["stack.py"][2] < 20
    decision, reason, ppl = rows["noise.py"]
    assert decision == "dropped" and reason.startswith("perplexity") and ppl > 20
