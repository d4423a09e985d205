"""The text shard writer streams repos in windows (same bytes whatever the window size)
within the recipe's memory budget."""

from __future__ import annotations

import hashlib
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from rich.console import Console

from datagen.builds.cpt_corpus.build import duckdb_config, window_bytes
from datagen.builds.cpt_corpus.shards import repo_windows, write_text_shards
from datagen.config.base import validate
from datagen.config.cpt import CptCorpusRecipe, ShardsConfig
from datagen.errors import UserError

# (repo, path, text, decision): repos of different sizes, one dropped file, unsorted input
FILES = [
    ("zeta", "b.py", "z = 2\n" * 40, "kept"),
    ("alpha", "m.py", "import os\n" * 30, "kept"),
    ("alpha", "a.py", "a = 1\n" * 10, "kept"),
    ("mid", "x.py", "x\n" * 500, "kept"),
    ("mid", "dup.py", "x\n" * 500, "dropped"),
    ("beta", "only.py", "b = 3\n", "kept"),
    ("zeta", "a.py", "z = 1\n" * 5, "kept"),
    ("alpha", "\u00e9t\u00e9.py", "e = 1\n", "kept"),  # code point order is UTF-8 byte order
    ("alpha", "Z.py", "Z = 1\n", "kept"),
    ("alpha", "\U0001f600/x.py", "s = 1\n", "kept"),
]


def _decisions(folder: Path) -> tuple[duckdb.DuckDBPyConnection, list[str]]:
    """A crawl parquet and the ``files`` table the build makes from it."""
    folder.mkdir(parents=True, exist_ok=True)
    crawl = folder / "00000.parquet"
    pq.write_table(pa.Table.from_pylist([
        {"file_id": f"{r}/{p}", "repo": r, "path": p, "lang": "python", "license": "MIT", "text": t,
         "imports": None, "bytes": len(t), "decision": d} for r, p, t, d in FILES]), crawl, row_group_size=2)
    con = duckdb.connect(str(folder / "decisions.duckdb"))
    con.execute("CREATE TABLE files AS SELECT * EXCLUDE (text, imports) FROM read_parquet(?) ORDER BY repo, path",
                [[str(crawl)]])
    return con, [str(crawl)]


def _write(folder: Path, window: int) -> tuple[dict[str, str], list[tuple]]:
    con, crawl = _decisions(folder)
    cfg = ShardsConfig(max_bytes=400, row_group_rows=2)
    write_text_shards(con, crawl, folder / "out" / "data", folder / "tmp", cfg, Console(quiet=True),
                      window_bytes=window)
    shards = {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
              for p in sorted((folder / "out" / "data").glob("*.parquet"))}
    return shards, con.execute("SELECT * FROM shard_of ORDER BY file_id").fetchall()


def test_windows_cover_every_kept_repo_once_in_order(tmp_path):
    con, _ = _decisions(tmp_path)
    assert list(repo_windows(con, 1)) == [(r, r) for r in ("alpha", "beta", "mid", "zeta")]
    assert list(repo_windows(con, 1 << 30)) == [("alpha", "zeta")]
    # a window closes before the repo that would take it past the size
    assert list(repo_windows(con, 1000)) == [("alpha", "beta"), ("mid", "mid"), ("zeta", "zeta")]
    assert list(repo_windows(con, 1, repos=["zeta", "beta"])) == [("beta", "beta"), ("zeta", "zeta")]


def test_window_size_changes_no_byte(tmp_path):
    small, small_assign = _write(tmp_path / "small", 1)
    whole, whole_assign = _write(tmp_path / "whole", 1 << 30)
    assert small == whole and len(whole) > 1
    assert small_assign == whole_assign
    assert [f for f, _ in whole_assign] == sorted(f"{r}/{p}" for r, p, _, d in FILES if d == "kept")
    rows = pq.read_table(sorted((tmp_path / "whole" / "out" / "data").glob("*.parquet"))).to_pylist()
    con, _ = _decisions(tmp_path / "again")
    assert [(r["repo"], r["path"]) for r in rows] == con.execute(
        "SELECT repo, path FROM files WHERE decision = 'kept' ORDER BY repo, path").fetchall()


def test_duckdb_of_the_build_gets_the_recipe_budget(tmp_path):
    """``memory_mb`` bounds DuckDB (a quarter of it; past that it spills to the work
    folder) and sets the window of repos sorted at a time."""
    cfg = CptCorpusRecipe(memory_mb=2048, workers=3)
    con = duckdb.connect(config=duckdb_config(cfg, tmp_path))
    limit, threads, temp = con.execute("SELECT current_setting('memory_limit'), current_setting('threads'), "
                                       "current_setting('temp_directory')").fetchone()
    assert (limit, threads, temp) == ("488.2 MiB", 3, str(tmp_path / "duckdb.tmp"))  # 512 MB
    assert window_bytes(cfg) == 64 << 20
    with pytest.raises(UserError, match="memory_mb"):
        validate(CptCorpusRecipe, {"memory_mb": 100}, "test")
