"""The packing stage end to end on real parquet text shards and real token files."""

from __future__ import annotations

import hashlib
import json
import struct
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from datagen.config.pack import PackConfig
from datagen.pack.corpus import pack_corpus
from datagen.pack.imports import import_graph
from datagen.pack.ordering import RepoOrderer, split_of
from datagen.pack.tokenize import load_tokenizer

from .test_imports import GO, JAVA, JS, PY, RUST, C

LANG_OF = {".py": "python", ".ts": "typescript", ".tsx": "typescript", ".mjs": "javascript",
           ".js": "javascript", ".go": "go", ".rs": "rust", ".java": "java", ".h": "c", ".c": "c",
           ".cpp": "cpp", ".mod": "text", ".toml": "toml"}


def repo_rows(repo: str, tree: dict[str, str]) -> list[dict]:
    rows = []
    for path, text in sorted(tree.items()):
        ext = "." + path.rsplit(".", 1)[-1]
        rows.append({"id": hashlib.sha1(f"{repo}/{path}".encode()).hexdigest()[:16], "repo": repo,
                     "path": path, "lang": LANG_OF[ext], "license": "MIT", "text": text})
    return rows


@pytest.fixture(scope="module")
def repos(sample_code) -> dict[str, dict[str, str]]:
    big = {f"pkg/mod_{i:03d}.py": f"from pkg import mod_{i + 1:03d}\n" + t
           for i, t in enumerate(sample_code(150))}
    big["pkg/__init__.py"] = ""
    big["pkg/mod_150.py"] = "LAST = True\n"
    return {"acme-py": PY, "acme-js": JS, "acme-go": GO, "acme-rs": RUST, "acme-java": JAVA,
            "acme-c": C, "big": big}


def write_text(folder: Path, repos: dict, cfg: PackConfig) -> dict[str, list[Path]]:
    """What the corpus writer does: repos by name, files in repo order, one shard per split."""
    orderer = RepoOrderer(cfg)
    by_split: dict[str, list[dict]] = {}
    for repo in sorted(repos):
        by_split.setdefault(split_of(repo, cfg), []).extend(orderer(repo_rows(repo, repos[repo])))
    folder.mkdir(parents=True, exist_ok=True)
    shards = {}
    for split, rows in by_split.items():
        # two shards so a repo can straddle a shard boundary
        half = len(rows) // 2
        paths = []
        for i, chunk in enumerate((rows[:half], rows[half:])):
            path = folder / f"{split}-{i:05d}-of-00002.parquet"
            pq.write_table(pa.Table.from_pylist(chunk), path)
            paths.append(path)
        shards[split] = paths
    return shards


def build(tmp: Path, repos: dict, tokenizer: Path, **kw) -> tuple[Path, PackConfig, object]:
    cfg = PackConfig(tokenizer=str(tokenizer), seq_lens=[32, 128], doc_max_tokens=512, **kw)
    shards = write_text(tmp / "data", repos, cfg)
    return tmp, cfg, pack_corpus(tmp, cfg, "run1", shards)


def read_tokens(folder: Path, split: str) -> pa.Table:
    return pq.read_table(sorted(folder.glob(f"{split}-*.parquet")))


def test_sequences_exact_padding_small_and_imports_first(tmp_path, repos, tokenizer_dir):
    out, cfg, result = build(tmp_path, repos, tokenizer_dir)
    tok = load_tokenizer(tokenizer_dir)
    for S in cfg.seq_lens:
        table = read_tokens(out / "tokens" / str(S), "train")
        ids = table.column("input_ids").to_pylist()
        assert ids and all(len(x) == S for x in ids)
        assert all(len(m) == S for m in table.column("loss_mask").to_pylist())
        row = next(r for r in result.outputs if r.seq_len == S and r.split == "train")
        assert row.sequences == len(ids) and row.tokens == S * len(ids)
        assert row.padding_tokens <= 0.005 * row.tokens
        # the decoded stream shows every imported file before its importer
        mask = np.array(table.column("loss_mask").to_pylist()).reshape(-1).astype(bool)
        stream = tok.decode(np.array(ids).reshape(-1)[mask])
        checked = 0
        for repo, tree in repos.items():
            deps, _ = import_graph(repo_rows(repo, tree))
            start = stream.index(f"<repo_name>{repo}\n")
            pos = {p: stream.index(f"<file_sep>{p}\n", start) for p in tree}
            for src, dsts in deps.items():
                for dst in dsts:
                    assert pos[dst] < pos[src], (repo, dst, src)
                    checked += 1
        assert checked > 150


def test_token_counts_add_up_and_documents_decode(tmp_path, repos, tokenizer_dir):
    out, cfg, result = build(tmp_path, repos, tokenizer_dir)
    tok = load_tokenizer(tokenizer_dir)
    counted = sum(r.tokens for r in result.token_counts if r.split == "train")
    row = next(r for r in result.outputs if r.seq_len == 32 and r.split == "train")
    assert counted == row.tokens - row.padding_tokens
    langs = {r.lang for r in result.token_counts}
    assert {"python", "typescript", "go", "rust", "java", "c", ""} <= langs
    files = sum(r.files for r in result.token_counts if r.lang)
    assert files == sum(len(t) for t in repos.values())
    # Megatron: parse the .idx, read each document back from the .bin, decode it
    idx = (out / "tokens" / "train_text_document.idx").read_bytes()
    assert idx[:9] == b"MMIDIDX\x00\x00"
    version, code, n_seq, n_doc = struct.unpack("<QBQQ", idx[9:34])
    assert (version, code, n_doc) == (1, 8, n_seq + 1)
    lengths = np.frombuffer(idx, "<i4", n_seq, 34)
    pointers = np.frombuffer(idx, "<i8", n_seq, 34 + 4 * n_seq)
    doc_index = np.frombuffer(idx, "<i8", n_seq + 1, 34 + 12 * n_seq)
    assert len(idx) == 34 + 12 * n_seq + 8 * (n_seq + 1)
    assert doc_index.tolist() == list(range(n_seq + 1)) and n_seq == row.documents
    binary = np.fromfile(out / "tokens" / "train_text_document.bin", "<u2")
    assert binary.size == lengths.sum() == counted
    texts = []
    for length, ptr in zip(lengths, pointers, strict=True):
        doc = binary[ptr // 2 : ptr // 2 + length]
        assert doc[-1] == tok.eos_id
        texts.append(tok.decode(doc[:-1]))
    assert texts[0].startswith("<repo_name>acme-c\n<file_sep>include/lib/types.h\ntypedef int t;\n")
    # a big repo is cut into documents along the order, each starting with the repo header
    assert sum(t.startswith("<repo_name>big\n") for t in texts) > 3


def test_deterministic_bytes(tmp_path, repos, tokenizer_dir):
    digests = []
    for run in ("a", "b"):
        out, _, _ = build(tmp_path / run, repos, tokenizer_dir)
        files = sorted(p for p in (out / "tokens").rglob("*") if p.is_file())
        digests.append({str(p.relative_to(out)): hashlib.sha256(p.read_bytes()).hexdigest()
                        for p in files})
    assert digests[0] == digests[1] and len(digests[0]) >= 12


def test_datatrove_files_match_parquet_and_datatrove_reads_them(tmp_path, repos, tokenizer_dir):
    out, cfg, result = build(tmp_path, repos, tokenizer_dir)
    S = 32
    folder = out / "tokens" / str(S)
    table = read_tokens(folder, "train")
    ids = np.array(table.column("input_ids").to_pylist())
    ds = folder / "train_00000_unshuffled.ds"
    assert np.array_equal(np.fromfile(ds, "<u2").reshape(-1, S), ids)
    loss = np.fromfile(f"{ds}.loss", np.uint8).reshape(-1, S)
    assert np.array_equal(loss, np.array(table.column("loss_mask").to_pylist()))
    ends = np.fromfile(f"{ds}.index", "<u8")
    (row,) = [r for r in result.outputs if r.split == "train" and r.seq_len == S]
    assert row.padding_tokens > 0  # the last sequence is padded: its pad run is no document
    assert len(ends) == row.documents and ends[-1] == ids.size - row.padding_tokens
    assert np.all(np.diff(ends.astype(np.int64)) > 0) and loss.reshape(-1)[int(ends[-1]):].sum() == 0
    meta = Path(f"{ds}.metadata").read_text().split("\n")
    assert meta[0] == f"{tokenizer_dir}|2" and int(meta[1]) == ids.size
    positions = np.array(table.column("position_ids").to_pylist())
    torch = pytest.importorskip("torch")
    from datatrove.utils.dataset import DatatroveFolderDataset

    # datatrove reads seq_len + 1 tokens per sample: ask for S - 1 to get our sequences
    dataset = DatatroveFolderDataset(str(folder), seq_len=S - 1, filename_pattern="train_*.ds",
                                     return_positions=True)
    assert len(dataset) == len(ids)
    for k in (0, 1, len(ids) // 2, len(ids) - 1):
        item = dataset[k]
        assert torch.equal(item["input_ids"], torch.as_tensor(ids[k], dtype=torch.long))
        assert item["positions"].tolist() == positions[k].tolist()


def test_holdout_repos_go_to_validation(tmp_path, repos, tokenizer_dir):
    out, cfg, result = build(tmp_path, repos, tokenizer_dir, holdout_repos=["acme-java"])
    assert {r.split for r in result.outputs} == {"train", "validation"}
    val = read_tokens(out / "tokens" / "32", "validation")
    assert val.num_rows > 0
    assert {r.repo for r in result.token_counts if r.split == "validation"} == {"acme-java"}
    assert "acme-java" not in {r.repo for r in result.token_counts if r.split == "train"}
    assert (out / "tokens" / "validation_text_document.bin").stat().st_size > 0
    frac = PackConfig(holdout_fraction=0.5, holdout_seed=3)
    names = [f"r{i}" for i in range(200)]
    held = [n for n in names if split_of(n, frac) == "validation"]
    assert 60 < len(held) < 140 and held == [n for n in names if split_of(n, frac) == "validation"]
    assert json.dumps(held) != json.dumps([n for n in names if split_of(n, PackConfig(
        holdout_fraction=0.5, holdout_seed=4)) == "validation"])


def test_orderer_by_path_and_by_imports(repos):
    rows = repo_rows("acme-js", JS)
    by_path = RepoOrderer(PackConfig(order="path"))
    assert [r["path"] for r in by_path(list(reversed(rows)))] == sorted(JS)
    assert by_path.rows[0].edges == 0
    by_imports = RepoOrderer(PackConfig())
    ordered = [r["path"] for r in by_imports(rows)]
    assert ordered.index("src/lib/a.ts") < ordered.index("src/index.ts")
    assert by_imports.rows[0].edges == 6 and by_imports.rows[0].unresolved == 1


@pytest.mark.slow
@pytest.mark.parametrize("chunk_files", [1, 256])  # 1: every repo parsed in many tasks
def test_parallel_ordering_gives_the_same_rows_and_stats(repos, chunk_files, monkeypatch):
    monkeypatch.setattr("datagen.pack.ordering.CHUNK_FILES", chunk_files)
    stream = [(name, repo_rows(name, tree)) for name, tree in sorted(repos.items())]
    one, two = RepoOrderer(PackConfig()), RepoOrderer(PackConfig(), workers=2)
    assert list(one.stream(iter(stream))) == list(two.stream(iter(stream)))
    assert one.rows == two.rows and len(one.rows) == len(repos)
