"""The rl-pool build's perplexity stage with the tiny LM: scores per statement in the
manifest, the recipe's cut applied, the dropped instruction recorded with its reason."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb

from datagen.builds.rl_pool.build import run_rl_pool
from tests.sandbox.conftest import make_task_repo
from tests.score.lm import IN_DISTRIBUTION
from tests.score.test_perplexity import scrambled


def test_perplexity_cut_drops_the_garbled_statement(tmp_path: Path, tiny_lm: Path):
    fields = make_task_repo(tmp_path)
    statements = {"calc__code": IN_DISTRIBUTION, "calc__noise": scrambled(IN_DISTRIBUTION, 3)}
    (tmp_path / "tasks.jsonl").write_text("".join(json.dumps({
        "instance_id": iid, "repo": "calc", "problem_statement": text, "FAIL_TO_PASS": ["t::a"],
        "PASS_TO_PASS": ["t::b"], **fields}) + "\n" for iid, text in statements.items()))
    sets = ["perplexity.enabled=true", f"perplexity.model={tiny_lm}", "perplexity.score_fix=true",
            "perplexity_cut.max=20", "difficulty.enabled=false", "hygiene.near_dedup.enabled=false"]
    result = run_rl_pool(tasks=tmp_path / "tasks.jsonl", output=tmp_path / "pool", overrides=sets)
    assert result.funnel["pooled"] == 1 and result.dropped_by_reason == {"perplexity_too_high": 1}
    con = duckdb.connect(str(tmp_path / "pool" / "manifest.duckdb"), read_only=True)
    scores = con.execute("SELECT kind, count(*), min(scorer) FROM scores GROUP BY kind ORDER BY kind").fetchall()
    kept = con.execute("SELECT task_id, perplexity, perplexity_scorer FROM pool").fetchall()
    dropped = con.execute("SELECT task_id, reason FROM pool_drops").fetchall()
    assert [(k, n) for k, n, _ in scores] == [("perplexity_fix", 2), ("perplexity_statement", 2)]
    assert scores[0][2].startswith("ppl_v1/transformers/")
    assert kept[0][0] == "calc__code" and kept[0][1] < 20 and kept[0][2] == scores[0][2]
    assert dropped == [("calc__noise", "perplexity_too_high")]
