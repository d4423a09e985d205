"""``datagen build cpt-corpus`` with every feature of issue 23 on (the learned quality scorer,
FIM, language mix, long buckets, dedup keep rule with repo metadata): manifest columns, card sections,
byte-identical output whatever ``--workers``, and the same output after a SIGKILL."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from datagen.config.quality import TrainConfig
from datagen.records import QualityLabel
from datagen.score.quality_train import train
from tests.builds.test_cpt_corpus import build
from tests.conftest import MIT, write_tree

NAMES = "{prefix: <fim_prefix>, middle: <fim_middle>, suffix: <fim_suffix>}"


def _corpus(root: Path) -> tuple[list[Path], Path]:
    """Six repos of Python and JavaScript (one long), a copy across two repos, and
    stars for each repo."""
    roots = []
    for r in range(6):
        tree = {"LICENSE": MIT}
        files = 40 if r == 0 else 6
        for i in range(files):
            tree[f"pkg/m{i:03d}.py"] = f"# repo {r} module {i} ✓\n" + "".join(
                f"def fn_{r}_{i}_{j}(value):\n    return value + {j}\n\n" for j in range(12))
            if i % 4 == 0:
                tree[f"web/w{i:03d}.js"] = f"// repo {r} widget {i}\nexport const w{i} = (x) => x * {i + r};\n" * 3
        if r in (1, 2):  # the same module in two repos: one copy survives, by stars
            tree["pkg/shared.py"] = "".join(f"def shared_{j}(value):\n    return value + {j}\n\n" for j in range(40))
        roots.append(write_tree(root / f"repo{r}", tree))
    meta = root / "meta.json"
    meta.write_text(json.dumps({f"repo{r}": {"stars": 10 * r, "date": f"202{r}-01-01"} for r in range(6)}))
    _quality_model(root)
    return roots, meta


def _quality_model(root: Path) -> Path:
    """A quality_v1 model next to ``meta.json``, trained on hand-written labels (tidy code
    rated 4, noise rated 1), so the build runs the learned scorer too."""
    rows = []
    for i in range(60):
        good = i % 2 == 0
        text = (f"def area_{i}(width, height):\n    return width * height\n" if good
                else f"x{i}=1;;;y=2 # TODO fix {'#' * (i % 7)}\n" * 5)
        rows.append(QualityLabel(id=f"label{i:03d}", repo="labels", path=f"f{i}.py", lang="python", text=text,
                                 score=4 if good else 1, status="ok", teacher="hand").model_dump_json())
    labels = root / "labels.jsonl"
    labels.write_text("\n".join(rows) + "\n")
    model = root / "quality_v1.zip"
    train(labels, model, TrainConfig(min_labels=20, bits=12, steps=30))
    return model


def _sets(tokenizer: Path, meta: Path) -> list[str]:
    quality = ["quality_model.enabled=true", f"quality_model.path={meta.parent / 'quality_v1.zip'}",
               "quality_model.threshold=0"]  # every file scored, none cut: the other features see them all
    return [*quality, f"pack.tokenizer={tokenizer}", "pack.seq_lens=[64,2048]", "pack.fim.rate=0.5",
            f"pack.fim.tokens={NAMES}", "pack.fim.add_tokens=true", "pack.long.edges=[600,4000]",
            "pack.long.min_tokens=4000", "pack.long.share=0.6", "mix.weights={python: 0.7, javascript: 2.0}",
            "dedup.keep=stars", f"dedup.repo_metadata={meta}", "crawl.files_per_task=10"]


def _digest(out: Path) -> dict[str, str]:
    """Every output file (text shards, tokens, the extended tokenizer) by content."""
    return {str(p.relative_to(out)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(out.rglob("*")) if p.is_file() and p.parts[len(out.parts)] in ("data", "tokens")}


def _tables(out: Path) -> dict[str, list]:
    con = duckdb.connect(str(out / "manifest.duckdb"), read_only=True)
    try:
        return {t: con.execute(f"SELECT * EXCLUDE (run_id) FROM {t} ORDER BY ALL").fetchall()
                for t in ("files", "repo_docs", "language_mix", "long_buckets", "token_counts", "pack_outputs")}
    finally:
        con.close()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return _corpus(tmp_path_factory.mktemp("features"))


@pytest.fixture(scope="module")
def reference(corpus, tokenizer_dir, tmp_path_factory):
    roots, meta = corpus
    out = tmp_path_factory.mktemp("ref") / "out"
    build(roots, out, workers=2, overrides=_sets(tokenizer_dir, meta))
    return out


@pytest.mark.slow
def test_every_feature_lands_in_the_manifest_and_card(reference):
    t = _tables(reference)
    con = duckdb.connect(str(reference / "manifest.duckdb"), read_only=True)
    q = lambda sql: con.execute(sql).fetchall()  # noqa: E731
    try:
        # dedup keep=stars: the copy in the repo with more stars (repo2) survives (the mix may drop it later)
        assert q("SELECT d.repo, k.repo FROM files d JOIN files k ON d.duplicate_of = k.file_id "
                 "WHERE d.path = 'pkg/shared.py'") == [("repo1", "repo2")]
        mix = {r[0]: r for r in q("SELECT lang, files_before, files_after, downsampled, repeated, tokens_before, "
                                  "tokens_after FROM language_mix")}
        assert mix["python"][3] > 0 and mix["python"][2] + mix["python"][3] == mix["python"][1]
        assert mix["javascript"][4] == mix["javascript"][1] and mix["javascript"][6] > 1.9 * mix["javascript"][5]
        (down,) = q("SELECT count(*) FROM files WHERE reason = 'mix_downsampled'")[0]
        assert down == mix["python"][3]
        assert q("SELECT DISTINCT mix_repeats FROM files WHERE lang = 'javascript' AND decision = 'kept'") == [(2,)]
        buckets = dict(q("SELECT repo, any_value(bucket) FROM repo_docs GROUP BY repo"))
        assert buckets["repo0"] == ">=4000" and {buckets[f"repo{r}"] for r in range(1, 6)} <= {"<600", "600-4000"}
        assert q("SELECT bool_and(long_output) FROM repo_docs WHERE repo = 'repo0'") == [(True,)]
        (fim_files,) = q("SELECT sum(fim_files) FROM repo_docs")[0]
        assert fim_files > 10
        assert q("SELECT count(*) FROM shards WHERE path = 'tokens/tokenizer.json'") == [(1,)]
        # the learned scorer ran on every file the crawl kept (threshold 0: none dropped by it)
        assert q("SELECT count(*) FROM files WHERE reason = 'quality_model'") == [(0,)]
        assert q("SELECT count(*) FROM files WHERE lang = 'python' AND reason IS NULL AND quality_score IS NULL") \
            == [(0,)]
    finally:
        con.close()
    assert t["long_buckets"]
    card = (reference / "README.md").read_text()
    for section in ("## Language mix", "## Long-context buckets", "## Fill-in-the-middle", "## Dedup"):
        assert section in card


@pytest.mark.slow
def test_all_features_sigkill_then_rerun_gives_the_output_of_another_worker_count(reference, corpus,
                                                                                   tokenizer_dir, tmp_path):
    """Resume and determinism in one: killed mid-crawl and run again with ``-w 1``: the same
    bytes and manifest rows as the uninterrupted ``-w 2`` build."""
    roots, meta = corpus
    out = tmp_path / "killed"
    cmd = [sys.executable, "-m", "datagen.cli.app", "build", "cpt-corpus", *map(str, roots), "-o", str(out),
           "-w", "1"]
    for s in _sets(tokenizer_dir, meta):
        cmd += ["--set", s]
    env = {**os.environ, "DATAGEN_NO_PROGRESS": "1"}
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.monotonic() + 60
    done: list[Path] = []
    while time.monotonic() < deadline:  # some, not all, crawl tasks finished
        done = list((out / ".work").glob("*/logs/crawl/completions/*")) if (out / ".work").exists() else []
        if len(done) >= 2:
            break
        time.sleep(0.005)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()

    assert 2 <= len(done), "the kill must land mid-crawl"
    with_deadline = time.monotonic() + 15
    while time.monotonic() < with_deadline:  # the killed build's workers go with it
        try:
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    rerun = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    assert _digest(out) == _digest(reference) and len(_digest(out)) > 10
    assert _tables(out) == _tables(reference)
