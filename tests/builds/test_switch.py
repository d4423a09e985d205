"""New outputs switch in around the manifest transaction (``datagen.builds.switch``)."""

from __future__ import annotations

import errno

import pytest

from datagen.builds.switch import switch_outputs
from tests.conftest import write_tree

OWNED = ("data/*.parquet", "README.md")


def tree(root):
    return {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def old_and_new(tmp_path):
    out = write_tree(tmp_path / "out", {"data/train-00000-of-00002.parquet": "old0",
                                         "data/train-00001-of-00002.parquet": "old1",
                                         "README.md": "old card", "manifest.duckdb": "db"})
    stage = write_tree(tmp_path / "stage", {"data/train-00000-of-00001.parquet": "new0", "README.md": "new card"})
    return out, stage, tmp_path / "backup"


def test_old_files_stay_until_the_commit_then_go(old_and_new):
    out, stage, backup = old_and_new
    seen = {}
    switch_outputs(stage, out, backup, OWNED, commit=lambda: seen.update(tree(out)))
    # at commit time the old manifest's files were all still there
    assert {"data/train-00000-of-00002.parquet", "data/train-00001-of-00002.parquet"} <= set(seen)
    assert tree(out) == {"README.md": "new card", "data/train-00000-of-00001.parquet": "new0",
                         "manifest.duckdb": "db"}
    assert not backup.exists()


def test_a_failed_commit_puts_the_previous_output_back(old_and_new):
    out, stage, backup = old_and_new
    before = tree(out)

    def commit():
        raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.raises(OSError):
        switch_outputs(stage, out, backup, OWNED, commit=commit)
    assert tree(out) == before
