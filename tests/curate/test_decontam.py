"""Decontamination: a planted benchmark solution is removed with its source and span;
eval repositories are excluded by name and by git remote; clean files stay."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from datatrove.data import Document

from datagen.config.curate import BenchmarkSource, DecontamConfig
from datagen.curate.decontam import DecontamStep, EvalRepos
from datagen.errors import UserError
from tests.curate.helpers import synthetic_python


def _doc(text: str, repo: str = "lib", path: str = "a.py") -> Document:
    meta = {"repo": repo, "path": path, "decision": "kept", "reason": None}
    return Document(text=text, id=f"{repo}/{path}", metadata=meta)


@pytest.fixture
def bench(tmp_path, rng):
    """A HumanEval-like JSONL: 20 problems with prompt and canonical solution."""
    rows = []
    for i in range(20):
        body = synthetic_python(rng, functions=2)
        prompt, solution = body.split("\n\n", 1)
        rows.append({"task_id": f"Bench/{i}", "prompt": prompt, "canonical_solution": solution, "test": "assert True"})
    path = tmp_path / "bench.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path, rows


def test_planted_solution_is_removed_with_source_and_span(bench, rng):
    path, rows = bench
    cfg = DecontamConfig(
        benchmarks=[
            BenchmarkSource(name="bench", path=str(path), fields=["prompt", "canonical_solution"], id_field="task_id")
        ]
    )
    solution = rows[7]["canonical_solution"]
    # Copied into a project file: re-indented, wrapped in other code.
    planted = "import sys\n\n\n" + solution.replace("    ", "\t") + "\n\nprint(sys.argv)\n"
    clean = [_doc(synthetic_python(rng), path=f"clean{i}.py") for i in range(10)]
    docs = list(DecontamStep(cfg).run([_doc(planted, path="copied.py"), *clean]))
    hit = docs[0].metadata
    assert (hit["decision"], hit["reason"]) == ("dropped", "contaminated")
    assert hit["contamination_source"] == "bench:Bench/7.canonical_solution"
    span = hit["contamination_span"]
    start, end = map(int, span.split(" ", 1)[0].split(":"))
    assert span.split(" ", 1)[1].rstrip("…") in planted[start:end]
    assert planted[start:end].split()[:3] == solution.split()[:3]
    assert all(d.metadata["decision"] == "kept" for d in docs[1:])


def test_parquet_and_text_benchmarks(tmp_path, rng):
    a, b = synthetic_python(rng), synthetic_python(rng)
    pq.write_table(pa.table({"id": ["p0"], "solution": [a], "other": [7]}), tmp_path / "b.parquet")
    (tmp_path / "leak.txt").write_text(b)
    cfg = DecontamConfig(
        ngram=13,
        benchmarks=[
            BenchmarkSource(name="pq", path=str(tmp_path / "b.parquet"), id_field="id"),
            BenchmarkSource(name="txt", path=str(tmp_path / "leak.txt")),
        ],
    )
    docs = list(DecontamStep(cfg).run([_doc(a), _doc(b), _doc(synthetic_python(rng))]))
    assert [d.metadata.get("contamination_source") for d in docs] == ["pq:p0.solution", "txt:leak.txt", None]


def test_short_overlap_below_the_ngram_size_is_kept(bench):
    path, rows = bench
    cfg = DecontamConfig(benchmarks=[BenchmarkSource(name="bench", path=str(path))])
    words = rows[0]["canonical_solution"].split()[:8]  # 8 words < 13-gram
    (doc,) = DecontamStep(cfg).run([_doc(" ".join(words))])
    assert doc.metadata["decision"] == "kept"


def test_eval_repos_by_name_and_remote():
    cfg = DecontamConfig()
    docs = [
        _doc("x = 1\n", repo="django"),
        _doc("x = 1\n", repo="sympy/sympy"),
        _doc("x = 1\n", repo="mylib"),
        _doc("x = 1\n", repo="django-extensions"),
        _doc("x = 1\n", repo="other"),
    ]
    remotes = {"mylib": "git@github.com:pytest-dev/pytest.git", "other": "https://github.com/someone/other"}
    out = list(DecontamStep(cfg, remotes).run(docs))
    assert [d.metadata["reason"] for d in out] == ["eval_repo", "eval_repo", "eval_repo", None, None]
    assert out[0].metadata["contamination_source"] == "eval_repos:swe-bench:django/django"
    assert out[2].metadata["contamination_source"] == "eval_repos:swe-bench:pytest-dev/pytest"


def test_bad_inputs_are_user_errors(tmp_path):
    with pytest.raises(UserError, match="file not found"):
        DecontamStep(DecontamConfig(benchmarks=[BenchmarkSource(name="x", path=str(tmp_path / "no"))]))
    bad = tmp_path / "repos.yaml"
    bad.write_text("lists:\n  mine: [justaname]\n")
    with pytest.raises(UserError, match="not owner/name"):
        EvalRepos.load(str(bad))
