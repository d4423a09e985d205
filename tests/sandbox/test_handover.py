"""The working copy goes back to its owner, even after a run that datagen never finished."""

from __future__ import annotations

import os

import pytest

from datagen.sandbox.isolation.bwrap import UID_BASE


def test_a_copy_left_with_a_sandbox_uid_is_handed_back_by_the_next_run(bwrap, workdir, limits):
    if os.geteuid() != 0:
        pytest.skip("only a root run hands the copy to a sandbox uid")
    (workdir / "pkg").mkdir()
    (workdir / "pkg" / "a.py").write_text("x = 1\n")
    left = UID_BASE + 7  # what a run killed between hand-over and take-back leaves behind
    for path in (workdir, workdir / "pkg", workdir / "pkg" / "a.py"):
        os.lchown(path, left, left)
    result = bwrap.run(["true"], workdir, limits)
    assert result.exit_code == 0, result.stderr
    owner = os.stat(workdir.parent)
    for path in (workdir, workdir / "pkg", workdir / "pkg" / "a.py"):
        st = os.lstat(path)
        assert (st.st_uid, st.st_gid) == (owner.st_uid, owner.st_gid), path
