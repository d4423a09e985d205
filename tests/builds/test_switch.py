"""New outputs switch in around the manifest transaction (``datagen.runtime.switch``), and
a switch killed half way is completed or undone by ``recover``, never left a mix."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys

import duckdb
import pytest

from datagen.manifest import Manifest
from datagen.runtime.switch import MARK_TABLE, journal_path, recover, switch_outputs
from tests.conftest import write_tree

OWNED = ("data/*.parquet", "README.md", "envs/**/*")
OLD = {"data/train-00000-of-00002.parquet": "old0", "data/train-00001-of-00002.parquet": "old1",
       "README.md": "old card", "envs/a.git/HEAD": "old a", "envs/gone.git/HEAD": "old gone"}
NEW = {"data/train-00000-of-00001.parquet": "new0", "README.md": "new card", "envs/a.git/HEAD": "new a",
       "envs/b.git/HEAD": "new b"}


def tree(root):
    """Every file under ``root`` but the manifest and the run's work folder, with its text,
    and every empty folder (as None)."""
    found = {}
    for p in sorted(root.rglob("*")):
        rel = str(p.relative_to(root))
        if rel.startswith((".work", "manifest.duckdb")):
            continue
        if p.is_file():
            found[rel] = p.read_text()
        elif not any(p.iterdir()):
            found[rel] = None
    return found


def listed(out):
    """What the manifest says the outputs are (table ``t``, written by the commit)."""
    con = duckdb.connect(str(out / "manifest.duckdb"), read_only=True)
    try:
        return con.execute("SELECT v FROM t").fetchone()[0]
    finally:
        con.close()


def tables(out):
    con = duckdb.connect(str(out / "manifest.duckdb"), read_only=True)
    try:
        return {t for (t,) in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
    finally:
        con.close()


def commit_of(out, value):
    """A build's manifest transaction: table ``t`` says which set is listed."""
    def commit(mark):
        with Manifest(out, tables=[]) as m:
            m.execute("BEGIN TRANSACTION")
            m.execute("CREATE OR REPLACE TABLE t AS SELECT ?::VARCHAR AS v", [value])
            mark(m)
            m.execute("COMMIT")
    return commit


@pytest.fixture
def old_and_new(tmp_path):
    out = write_tree(tmp_path / "out", OLD)
    (out / "envs" / "a.git" / "refs" / "tags").mkdir(parents=True)  # an empty folder of an env
    commit_of(out, "old")(lambda m: None)
    stage = write_tree(tmp_path / "out" / ".work" / "r" / "stage", NEW)
    (stage / "envs" / "b.git" / "objects" / "info").mkdir(parents=True)
    return out, stage, tmp_path / "out" / ".work" / "r" / "replaced"


OLD_TREE = {**OLD, "envs/a.git/refs/tags": None}


def test_old_files_stay_until_the_commit_then_go(old_and_new):
    out, stage, backup = old_and_new
    seen = {}

    def commit(mark):
        seen.update(tree(out))
        commit_of(out, "new")(mark)

    switch_outputs(stage, out, backup, OWNED, commit=commit)
    # at commit time the old manifest's files were all still there
    assert {"data/train-00000-of-00002.parquet", "data/train-00001-of-00002.parquet",
            "envs/gone.git/HEAD"} <= set(seen)
    assert tree(out) == {**NEW, "envs/b.git/objects/info": None} and listed(out) == "new"
    assert not backup.exists() and not journal_path(out).exists()


def test_a_failed_commit_puts_the_previous_output_back(old_and_new):
    out, stage, backup = old_and_new
    before = tree(out)

    def commit(mark):
        raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.raises(OSError):
        switch_outputs(stage, out, backup, OWNED, commit=commit)
    assert tree(out) == before == OLD_TREE and listed(out) == "old"
    assert not journal_path(out).exists() and MARK_TABLE not in tables(out)


KILLED = """
import sys
from pathlib import Path
from datagen.runtime.switch import switch_outputs
from tests.builds.test_switch import OWNED, commit_of
out, stage = Path(sys.argv[1]), Path(sys.argv[2])
switch_outputs(stage, out, stage.parent / "replaced", OWNED, commit_of(out, "new"))
"""


@pytest.mark.parametrize("fault, listed_after, tree_after", [
    ("switch-move#1", "old", OLD_TREE),  # one new file in place, the rest still staged
    ("switch-move#4", "old", OLD_TREE),  # every file moved, the commit not reached
    ("switch-commit", "new", {**NEW, "envs/b.git/objects/info": None}),  # committed, old files not yet gone
])
def test_a_switch_killed_half_way_is_undone_or_finished_by_recover(old_and_new, fault, listed_after, tree_after):
    out, stage, _ = old_and_new
    proc = subprocess.run([sys.executable, "-c", KILLED, str(out), str(stage)], capture_output=True, text=True,
                          env={**os.environ, "DATAGEN_FAULT": fault})
    assert proc.returncode == -9, proc.stderr  # SIGKILL at the fault point
    assert journal_path(out).is_file()
    if fault.startswith("switch-move"):
        assert tree(out) != OLD_TREE  # a mix until recovered: what recover is for
    assert recover(out) == ("finished" if listed_after == "new" else "rolled back")
    assert listed(out) == listed_after and tree(out) == tree_after
    assert not journal_path(out).exists() and not (stage.parent / "replaced").exists()
    assert MARK_TABLE not in tables(out) and recover(out) is None


def test_a_token_left_by_a_switch_killed_before_its_journal_changes_nothing(old_and_new):
    out, stage, backup = old_and_new
    with Manifest(out, tables=[]) as m:
        m.execute(f"CREATE TABLE {MARK_TABLE} AS SELECT 'stale' AS token")
    assert recover(out) is None
    switch_outputs(stage, out, backup, OWNED, commit=commit_of(out, "new"))
    assert MARK_TABLE not in tables(out) and listed(out) == "new"


def test_the_journal_names_every_file_it_moves(old_and_new):
    out, stage, backup = old_and_new
    seen = {}

    def commit(mark):
        seen.update(json.loads(journal_path(out).read_text()))
        commit_of(out, "new")(mark)

    switch_outputs(stage, out, backup, OWNED, commit=commit)
    assert seen["new"] == sorted(NEW) and seen["old"] == sorted(OLD)
