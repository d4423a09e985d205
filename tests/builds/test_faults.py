"""The corpus build under faults: odd file names, Ctrl-C, two writers, full disk, kills.

The signal, lock and disk cases run the real CLI in a subprocess, as a user would.
"""

from __future__ import annotations

import os

import duckdb
import pyarrow.parquet as pq

from datagen.builds.cpt_corpus import run_cpt_corpus
from tests.conftest import MIT, git


def _odd_tree(root):
    """A repo whose one Python file has a name with the byte 0xff (not UTF-8)."""
    os.makedirs(root)
    (root / "LICENSE").write_text(MIT)
    with open(os.path.join(os.fsencode(root), b"a\xff.py"), "wb") as fh:
        fh.write(f"x = 1\ny = 2\nprint('{root.name}', x + y)\n".encode())
    return root


def test_a_file_name_that_is_not_utf8_is_read_and_kept_losslessly(tmp_path):
    plain = _odd_tree(tmp_path / "plain")
    tree = _odd_tree(tmp_path / "tree")
    git(tree, "init", "-q", "-b", "main")
    git(tree, "add", "-A")
    git(tree, "commit", "-q", "-m", "init")
    out = tmp_path / "out"
    result = run_cpt_corpus(inputs=[str(plain), str(tree)], output=out)
    assert result.kept == 2
    con = duckdb.connect(str(out / "manifest.duckdb"), read_only=True)
    rows = con.execute("SELECT repo, path, path_raw, decision FROM files WHERE path LIKE 'a%' "
                       "ORDER BY repo").fetchall()
    con.close()
    assert rows == [(r, "a\\xff.py", b"a\xff.py".hex(), "kept") for r in ("plain", "tree")]
    assert bytes.fromhex(rows[0][2]) == b"a\xff.py"  # the name as the file system knows it
    texts = pq.read_table(next((out / "data").glob("*.parquet"))).column("text").to_pylist()
    assert sorted(t for t in texts if t.startswith("x = 1")) == [
        f"x = 1\ny = 2\nprint('{r}', x + y)\n" for r in ("plain", "tree")]
