"""Every repo the tasks build skips says why in one line a person can act on
(``repo_baselines.detail``): what was looked for and what was found when no test runner
claims it, and how to allow a license the policy refuses. A real build, in a subprocess."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import MIT, git, write_tree
from tests.synth.buildkit import run_build, sql

pytestmark = pytest.mark.slow

MPL = ("Mozilla Public License Version 2.0\n==================================\n\n1. Definitions\n"
       "--------------\n\n1.1. \"Contributor\" means each individual or legal entity that creates, contributes to\n"
       "the creation of, or owns Covered Software.\n")


def _repo(root: Path, files: dict[str, str]) -> Path:
    write_tree(root, files)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "init")
    return root


def test_every_skipped_repo_says_why_in_one_line(tmp_path):
    # no suite any runner knows: a script that checks by hand
    norunner = _repo(tmp_path / "norunner", {
        "LICENSE": MIT, "units.py": "def km(m):\n    return m / 1000\n",
        "scripts/check_units.py": "from units import km\nassert km(1500) == 1.5\n"})
    mpl = _repo(tmp_path / "mplrepo", {"LICENSE": MPL, "calc.py": "def add(a, b):\n    return a + b\n",
                                       "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n"
                                                             "    assert add(1, 2) == 3\n"})
    out = tmp_path / "out"
    proc = run_build([norunner, mpl], out, tmp_path / "cache")
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = {repo: (reason, detail) for repo, reason, detail in
            sql(out, "SELECT repo, reason, detail FROM repo_baselines")}
    reason, detail = rows["norunner"]
    assert reason == "no_test_runner" and "\n" not in detail
    assert "looked for pytest: Python test files (test_*.py" in detail, detail
    assert "found 3 files (2 python source files), no test-like file" in detail, detail
    reason, detail = rows["mplrepo"]
    assert reason == "license:MPL-2.0" and "\n" not in detail
    assert "MPL-2.0 is not in the license policy (permissive)" in detail and "crawl.licenses" in detail, detail
