"""``datagen build cpt-corpus`` with packing: text shards in dependency order, tokens, manifest."""

from __future__ import annotations

import os
import struct
import subprocess
import sys
from pathlib import Path

import duckdb
import numpy as np
import pyarrow.parquet as pq
import pytest

from datagen.builds.cpt_corpus.build import run_cpt_corpus
from tests.conftest import MIT, write_tree


def make_repos(root: Path, sample_code) -> list[Path]:
    app = write_tree(root / "app", {
        "LICENSE": MIT,
        "app/__init__.py": "",
        "app/api.py": "from app.models import User\nfrom .db import connect\n\n\ndef get(): return User()\n",
        "app/db.py": "import sqlite3\n\n\ndef connect():\n    return sqlite3.connect(':memory:')\n",
        "app/models.py": "from app.db import connect\n\n\nclass User:\n    pass\n",
        **{f"app/gen_{i:02d}.py": t for i, t in enumerate(sample_code(40))},
    })
    web = write_tree(root / "web", {
        "LICENSE": MIT,
        "src/a_main.ts": "import { b } from './b_util';\nexport const a = b + 1;\n",
        "src/b_util.ts": "import { c } from './lib';\nexport const b = c * 2;\n",
        "src/lib/index.ts": "export const c = 21;\n",
        "src/z/dup.ts": "export const c = 21;\n",  # exact duplicate: dropped, imports still count
        "src/y_user.ts": "import { c } from './z/dup';\nexport const y = c;\n",
    })
    held = write_tree(root / "held", {"LICENSE": MIT, "main.go": "package main\n\nfunc main() {}\n"})
    return [app, web, held]


def text_rows(out: Path, split: str) -> list[dict]:
    return pq.read_table(sorted((out / "data").glob(f"{split}-*.parquet"))).to_pylist()


@pytest.mark.slow
def test_build_with_tokenizer_packs_and_records(tmp_path, tokenizer_dir, sample_code):
    inputs = [str(p) for p in make_repos(tmp_path / "repos", sample_code)]
    out = tmp_path / "out"
    sets = [f"pack.tokenizer={tokenizer_dir}", "pack.seq_lens=[64,256]", "pack.holdout_repos=[held]"]
    res = run_cpt_corpus(inputs=inputs, output=out, overrides=sets)
    # text shards: dependency order inside a repo, held-out repo in validation
    train = text_rows(out, "train")
    paths = [r["path"] for r in train if r["repo"] == "app"]
    assert paths.index("app/db.py") < paths.index("app/models.py") < paths.index("app/api.py")
    web = [r["path"] for r in train if r["repo"] == "web"]
    assert web == ["src/lib/index.ts", "src/b_util.ts", "src/a_main.ts", "src/y_user.ts"]
    assert {r["repo"] for r in text_rows(out, "validation")} == {"held"}
    # tokens: every sequence exactly seq_len, both splits, both lengths
    for S in (64, 256):
        for split in ("train", "validation"):
            table = pq.read_table(sorted((out / "tokens" / str(S)).glob(f"{split}-*.parquet")))
            assert table.num_rows > 0
            assert {len(x) for x in table.column("input_ids").to_pylist()} == {S}
    con = duckdb.connect(str(out / "manifest.duckdb"), read_only=True)
    try:
        outputs = con.execute("SELECT split, seq_len, sequences, tokens FROM pack_outputs "
                              "ORDER BY ALL").fetchall()
        assert [(o[0], o[1]) for o in outputs] == [("train", 64), ("train", 256),
                                                    ("validation", 64), ("validation", 256)]
        (counted,) = con.execute("SELECT sum(tokens) FROM token_counts WHERE split='train'").fetchone()
        (bin_bytes,) = con.execute(
            "SELECT bytes FROM shards WHERE path='tokens/train_text_document.bin'").fetchone()
        assert counted == bin_bytes // 2
        orders = dict(con.execute("SELECT repo, edges FROM repo_orders").fetchall())
        assert orders["app"] == 3 and orders["web"] == 3
        docs = con.execute("SELECT doc_id, repo, file_ids FROM repo_docs").fetchall()
        kept = {r[0]: r[1] for r in con.execute(
            "SELECT file_id, repo FROM files WHERE decision='kept'").fetchall()}
        assert sorted(f for d in docs for f in d[2]) == sorted(kept)
        assert all(kept[f] == repo for _, repo, fids in docs for f in fids)
        seq_docs = pq.read_table(out / "tokens" / "64" / "train-00000-of-00001.parquet").column("doc_ids")
        assert {d for ids in seq_docs.to_pylist() for d in ids if d} <= {d[0] for d in docs}
        (n_token_files,) = con.execute("SELECT count(*) FROM shards WHERE path LIKE 'tokens/%'").fetchone()
        assert n_token_files == 2 * (2 * (1 + 4) + 2)  # 2 splits x (2 lengths x 5 files + Megatron)
    finally:
        con.close()
    assert res.packed and "## Tokens" in (out / "README.md").read_text()
    import datasets  # the card's configs let the Hub loader find the token shards

    ds = datasets.load_dataset(str(out), "tokens-64", cache_dir=str(tmp_path / "hf"))
    assert set(ds) == {"train", "validation"} and len(ds["train"][0]["input_ids"]) == 64
    assert "split: validation" in (out / "README.md").read_text()
    # same command again: nothing to do (token files are checked like text shards)
    assert run_cpt_corpus(inputs=inputs, output=out, overrides=sets).skipped
    # without a tokenizer the build stops after the text shards and stale tokens go
    run_cpt_corpus(inputs=inputs, output=out, overrides=["pack.holdout_repos=[held]"])
    assert not (out / "tokens").exists() and text_rows(out, "validation")


@pytest.mark.slow
def test_cli_packs_with_set_tokenizer(tmp_path, tokenizer_file, sample_code):
    inputs = [str(p) for p in make_repos(tmp_path / "repos", sample_code)]
    out = tmp_path / "out"
    env = {**os.environ, "DATAGEN_NO_PROGRESS": "1"}
    cmd = [sys.executable, "-m", "datagen.cli.app", "build", "cpt-corpus", "-o", str(out),
           "--set", f"pack.tokenizer={tokenizer_file}", "--set", "pack.seq_lens=[128]", *inputs]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "tokens/128: train" in proc.stdout + proc.stderr
    ds = np.fromfile(out / "tokens" / "128" / "train_00000_unshuffled.ds", "<u2")
    assert ds.size % 128 == 0 and ds.size > 0
    bad = subprocess.run([*cmd[:-3], "--set", "pack.tokenizer=/nonexistent/tok.json", *inputs],
                         capture_output=True, text=True, env=env, timeout=120)
    assert bad.returncode == 2 and "pack.tokenizer" in bad.stderr


def run_cli(out: Path, inputs: list[str], *sets: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "datagen.cli.app", "build", "cpt-corpus", "-o", str(out)]
    for s in sets:
        cmd += ["--set", s]
    env = {**os.environ, "DATAGEN_NO_PROGRESS": "1"}
    return subprocess.run([*cmd, *inputs], capture_output=True, text=True, env=env, timeout=120)


@pytest.mark.slow
def test_cli_refuses_bad_pack_settings_before_any_work(tmp_path, tokenizer_file, sample_code):
    """Too small documents, a doc header that fills a document, a mistyped held-out repo:
    one-line errors, exit 2, nothing crawled or written."""
    inputs = [str(p) for p in make_repos(tmp_path / "repos", sample_code)]
    tok = f"pack.tokenizer={tokenizer_file}"
    cases = [
        ([tok, "pack.seq_lens=[8]"], "seq_lens: repo documents of 8 tokens are too small"),
        ([tok, "pack.seq_lens=[64]", "pack.doc_max_tokens=32"], "doc_max_tokens: repo documents of 32"),
        ([tok, "pack.seq_lens=[64]", "pack.doc_header=" + "<file_sep>" * 70 + "{repo}\n"],
         "pack.doc_header for repo 'app' takes"),
        (["pack.holdout_repos=[web,hled]"], "pack.holdout_repos: no input repo named 'hled' (did you mean 'held'?)"),
    ]
    for i, (sets, message) in enumerate(cases):
        out = tmp_path / f"out{i}"
        proc = run_cli(out, inputs, *sets)
        assert proc.returncode == 2, proc.stderr
        assert message in proc.stderr and "Traceback" not in proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1
        assert not (out / "data").exists() and not (out / ".work").exists()


@pytest.mark.slow
def test_megatron_documents_decode_to_their_text(tmp_path, any_tokenizer_dir, sample_code):
    """The reviewer's repro: with a SentencePiece-style tokenizer (prefixes every text) each
    Megatron document decodes to exactly the doc header and its files, no added space."""
    from datagen.pack.docs import SourceRow, repo_pieces
    from datagen.pack.tokenize import load_tokenizer

    inputs = [str(p) for p in make_repos(tmp_path / "repos", sample_code)]
    out = tmp_path / "out"
    run_cpt_corpus(inputs=inputs, output=out, overrides=[
        f"pack.tokenizer={any_tokenizer_dir}", "pack.seq_lens=[100000]", "pack.formats=[megatron]"])
    tok = load_tokenizer(any_tokenizer_dir)
    idx = (out / "tokens" / "train_text_document.idx").read_bytes()
    (n,) = struct.unpack("<Q", idx[18:26])
    lengths = np.frombuffer(idx, "<i4", n, 34)
    binary = np.fromfile(out / "tokens" / "train_text_document.bin", "<u2")
    bounds = np.concatenate([[0], np.cumsum(lengths)])
    docs = [tok.decode(binary[a : b - 1]) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
    rows = text_rows(out, "train")
    expected = ["".join(repo_pieces(repo, [SourceRow(r["id"], repo, r["path"], r["lang"], r["text"])
                                           for r in rows if r["repo"] == repo],
                                    "<repo_name>{repo}\n", "<file_sep>{path}\n"))
                for repo in dict.fromkeys(r["repo"] for r in rows)]
    assert docs == expected and len(docs) == 3
