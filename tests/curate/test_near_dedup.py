"""Near-dedup quality bar on planted near-duplicates, stage plumbing, determinism."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from datagen.config.curate import NearDedupConfig
from datagen.curate.near_dedup import candidate_pairs, near_dedup
from tests.curate.helpers import crawl_row, synthetic_python, write_crawl
from tests.curate.plant import planted_copy, shingle_jaccard


@pytest.fixture
def planted(tmp_path, rng):
    """Two crawl parquets: 300 unrelated modules, 60 of them with a planted near copy
    (Jaccard >= 0.85) in another repo, plus rows that must be ignored."""
    rows, truth = [], set()
    for i in range(300):
        text = synthetic_python(rng)
        rows.append(crawl_row("base", f"m{i:03d}.py", text))
        if i < 60:
            copy, j = planted_copy(text, rng)
            assert j >= 0.85
            rows.append(crawl_row("fork", f"m{i:03d}.py", copy))
            truth.add(frozenset({f"base/m{i:03d}.py", f"fork/m{i:03d}.py"}))
    dropped = dict(rows[0], file_id="gone/x.py", repo="gone", decision="dropped", reason="binary")
    rows.append(dropped)
    rows.append(crawl_row("tiny", "t.py", "x = 1"))  # fewer tokens than a shingle
    half = len(rows) // 2
    parts = [
        write_crawl(tmp_path / "0.parquet", rows[:half]),
        write_crawl(tmp_path / "1.parquet", rows[half:]),
    ]
    return parts, truth


def _pairs(table) -> set[frozenset]:
    by_cluster: dict[str, list[str]] = {}
    for fid, cid in zip(table["file_id"].to_pylist(), table["cluster_id"].to_pylist(), strict=True):
        by_cluster.setdefault(cid, []).append(fid)
    return {frozenset(p) for m in by_cluster.values() for p in itertools.combinations(m, 2)}


def test_recall_and_precision_on_planted_pairs(planted, tmp_path):
    parts, truth = planted
    cfg = NearDedupConfig(partitions=3)
    table = pq.read_table(near_dedup(parts, tmp_path / "work", cfg, workers=1))
    found = _pairs(table)
    recall = len(found & truth) / len(truth)
    precision = len(found & truth) / max(1, len(found))
    assert recall >= 0.95, recall
    assert precision >= 0.99, precision
    assert "gone/x.py" not in table["file_id"].to_pylist()
    # Representative rule: the longest file of the cluster, and it is no one's duplicate.
    rows = table.to_pylist()
    for r in rows:
        if r["duplicate_of"] is None:
            assert r["file_id"] == r["cluster_id"]
        else:
            assert r["duplicate_of"] == r["cluster_id"]
        assert r["cluster_size"] >= 2


def test_representative_is_longest_then_repo_path(tmp_path, rng):
    text = synthetic_python(rng)
    longer = text + "\n# trailing comment\n"
    rows = [
        crawl_row("b", "x.py", text),
        crawl_row("a", "x.py", text),
        crawl_row("c", "x.py", longer),
    ]
    out = near_dedup([write_crawl(tmp_path / "c.parquet", rows)], tmp_path / "w", NearDedupConfig())
    table = pq.read_table(out).to_pylist()
    assert {r["cluster_id"] for r in table} == {"c/x.py"}
    rows.pop()  # equal length: repo order decides
    out = near_dedup([write_crawl(tmp_path / "d.parquet", rows)], tmp_path / "w", NearDedupConfig())
    assert {r["cluster_id"] for r in pq.read_table(out).to_pylist()} == {"a/x.py"}


@pytest.mark.slow
def test_parallel_workers_and_exclusion_are_deterministic(planted, tmp_path):
    parts, truth = planted
    cfg = NearDedupConfig()
    one = pq.read_table(near_dedup(parts, tmp_path / "w1", cfg, workers=1))
    two = pq.read_table(near_dedup(parts, tmp_path / "w2", cfg, workers=2))
    assert one.equals(two)
    excl = tmp_path / "excl.parquet"
    write_crawl(excl, [{"file_id": "fork/m000.py"}])
    three = pq.read_table(near_dedup(parts, tmp_path / "w3", cfg, workers=1, exclude=excl))
    assert "fork/m000.py" not in three["file_id"].to_pylist()
    assert "base/m000.py" not in three["file_id"].to_pylist()  # its only partner is gone


def test_candidate_pairs_group_equal_hashes():
    import numpy as np

    rec = np.array([(5, 9), (1, 3), (5, 2), (7, 1), (5, 4)], dtype=[("h", "<u8"), ("g", "<u8")])
    assert candidate_pairs(rec).tolist() == [[2, 4], [2, 9]]


def test_chains_do_not_make_far_files_duplicates(tmp_path, rng):
    """A~B~C~D~E~F, each step sharing ~90% of shingles but A and F only ~60%: F must not
    be dropped as a duplicate of A (connected components alone would do that)."""
    blocks = [synthetic_python(rng, functions=1) for _ in range(60)]
    tail = synthetic_python(rng, functions=2)  # makes A the longest: the representative
    texts = {"a": "".join(blocks[0:40]) + tail}
    for i, name in enumerate("bcdef", start=1):
        texts[name] = "".join(blocks[2 * i : 2 * i + 40])
    rows = [crawl_row(name, "m.py", text) for name, text in texts.items()]
    cfg = NearDedupConfig(rep_threshold=0.75)
    table = pq.read_table(near_dedup([write_crawl(tmp_path / "c.parquet", rows)], tmp_path / "w", cfg))
    by_id = {r["file_id"]: r for r in table.to_pylist()}
    assert by_id["b/m.py"]["duplicate_of"] == "a/m.py"
    assert shingle_jaccard(texts["a"], texts["f"]) < 0.65
    assert len(by_id) == 6  # every file has a near twin
    for r in by_id.values():
        if r["duplicate_of"]:
            dup, rep = r["file_id"].split("/")[0], r["duplicate_of"].split("/")[0]
            assert shingle_jaccard(texts[dup], texts[rep]) >= 0.68, (dup, rep)
    # rep_threshold 0: plain connected components, one cluster around A.
    loose = pq.read_table(near_dedup([tmp_path / "c.parquet"], tmp_path / "w0", NearDedupConfig(rep_threshold=0)))
    assert set(loose["cluster_id"].to_pylist()) == {"a/m.py"} and loose.num_rows == 6


def test_default_drops_nothing_below_rep_threshold_to_its_representative(tmp_path, rng):
    """A ~0.8~ B ~0.8~ C with exact J(A, C) ~0.64: under the defaults C is not dropped for
    A (the recipe promises estimated Jaccard >= rep_threshold = 0.7 with the kept file);
    at rep_threshold 0.6 it would be."""
    blocks = [synthetic_python(rng, functions=1) for _ in range(60)]
    texts = {
        "a": "".join(blocks[0:40]) + synthetic_python(rng, functions=2),
        "b": "".join(blocks[4:44]),
        "c": "".join(blocks[8:48]),
    }
    assert 0.6 < shingle_jaccard(texts["a"], texts["c"]) < 0.67
    assert min(shingle_jaccard(texts["a"], texts["b"]), shingle_jaccard(texts["b"], texts["c"])) > 0.78
    crawl = write_crawl(tmp_path / "c.parquet", [crawl_row(n, "m.py", t) for n, t in texts.items()])
    cfg = NearDedupConfig()
    by_id = {r["file_id"]: r for r in pq.read_table(near_dedup([crawl], tmp_path / "w", cfg)).to_pylist()}
    assert by_id["b/m.py"]["duplicate_of"] == "a/m.py"
    assert by_id.get("c/m.py", {}).get("duplicate_of") != "a/m.py"
    for r in by_id.values():
        if r["duplicate_of"]:
            dup, rep = r["file_id"].split("/")[0], r["duplicate_of"].split("/")[0]
            assert shingle_jaccard(texts[dup], texts[rep]) >= 0.7 - 0.05, (dup, rep)
    loose = NearDedupConfig(rep_threshold=0.6)
    by_id = {r["file_id"]: r for r in pq.read_table(near_dedup([crawl], tmp_path / "w6", loose)).to_pylist()}
    assert by_id["c/m.py"]["duplicate_of"] == "a/m.py"  # the case the default rules out


def test_stage_folder_is_stable_across_reruns(tmp_path):
    """A restarted build finds its finished near-dedup stages again."""
    import time

    from datagen.config.curate import NearDedupConfig
    from datagen.curate.near_dedup import _stage_dir

    crawl = tmp_path / "c.parquet"
    crawl.write_bytes(b"x")
    exclude = tmp_path / "ex.parquet"
    exclude.write_bytes(b"same content")
    first = _stage_dir([crawl], tmp_path, NearDedupConfig(), exclude, 1, 1)
    time.sleep(0.01)
    exclude.write_bytes(b"same content")  # rewritten every run: new mtime, same bytes
    assert _stage_dir([crawl], tmp_path, NearDedupConfig(), exclude, 1, 1) == first
    assert _stage_dir([crawl], tmp_path, NearDedupConfig(), exclude, 2, 2) != first


def test_small_inputs_get_one_worker_large_ones_all(tmp_path):
    from datagen.curate.near_dedup import MIN_BYTES_PER_TASK, useful_workers

    small = [tmp_path / f"{i}.parquet" for i in range(4)]
    for p in small:
        p.write_bytes(b"x" * 1000)
    assert useful_workers(small, 8) == 1
    big = tmp_path / "big.parquet"
    with open(big, "wb") as fh:
        fh.truncate(3 * MIN_BYTES_PER_TASK)  # sparse: size is what counts
    assert useful_workers([big], 8) == 1  # one parquet, one task
    assert useful_workers([big, *small], 8) == 4
    assert useful_workers([big, *small], 2) == 2


_SIGNATURES_IN_A_FRESH_PROCESS = """
import sys
from pathlib import Path
from datagen.config.curate import NearDedupConfig
from datagen.curate.near_dedup import SignatureStep
parts, out, exclude = sys.argv[1:3], Path(sys.argv[3]), Path(sys.argv[4])
SignatureStep([Path(p) for p in parts], out, NearDedupConfig(), exclude).run(rank=0, world_size=1)
assert (out / "sigs" / "00000.sig").stat().st_size > 0
print("pandas" in sys.modules)
"""


def test_signature_step_does_not_load_pandas(planted, tmp_path):
    """pyarrow's Python-value conversions import pandas (some 40 MB in each signature
    worker); the signature step does without them."""
    parts, _ = planted
    exclude = write_crawl(tmp_path / "exclude.parquet", [{"file_id": "base/m000.py"}])
    done = subprocess.run(
        [sys.executable, "-c", _SIGNATURES_IN_A_FRESH_PROCESS, *map(str, parts), str(tmp_path / "work"), str(exclude)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    )
    assert done.stdout.split() == ["False"]
