"""A file the suite reports tests from is test code, whatever its name (jsonpointer keeps its
suite in a root ``tests.py``): no task changes it, since every grader refuses a patch that
edits a task's test files, and the gold patch of such a task could never be graded resolved.
A module whose doctests the suite runs is still code: its doctests do not make it a test file."""

from __future__ import annotations

import pytest

from tests.conftest import MIT, git, write_tree
from tests.synth.buildkit import read_tasks, run_build

pytestmark = pytest.mark.slow

ROOTLIB = '''"""Small helpers."""


def double(x):
    """Twice ``x``.

    >>> double(21)
    42
    """
    return 2 * x


def clip(x, low, high):
    if x < low:
        return low
    if x > high:
        return high
    return x


def initials(name):
    return "".join(part[0].upper() for part in name.split())
'''
SUITE = '''import unittest

import rootlib


def spaced(parts, sep=" "):
    """A helper of the suite that only one test uses: a break in it fails that test alone."""
    out = ""
    for i, part in enumerate(parts):
        if i > 0:
            out = out + sep
        out = out + part
    return out


class Helpers(unittest.TestCase):
    def check(self, got, want):
        self.assertEqual(got, want)

    def test_double(self):
        self.check(rootlib.double(3), 6)

    def test_clip(self):
        self.check(rootlib.clip(5, 0, 3), 3)
        self.check(rootlib.clip(-1, 0, 3), 0)

    def test_initials(self):
        self.check(rootlib.initials(spaced(["ada", "lovelace"])), "AL")
'''


def test_no_task_changes_a_test_file_named_like_code(tmp_path):
    repo = write_tree(tmp_path / "rootlib", {"LICENSE": MIT, "rootlib.py": ROOTLIB, "tests.py": SUITE,
                                             "pytest.ini": "[pytest]\npython_files = tests.py\n"
                                                                           "addopts = --doctest-modules\n"})
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init")
    out = tmp_path / "out"
    proc = run_build([repo], out, tmp_path / "cache", "synth.max_candidates_per_repo=24")
    assert proc.returncode == 0, proc.stderr[-3000:]
    tasks = read_tasks(out)
    assert tasks, "rootlib.py gives tasks, though the suite reports its doctest from it"
    assert any("rootlib.py::rootlib.double" in task["PASS_TO_PASS"] + task["FAIL_TO_PASS"] for task in tasks)
    for task in tasks:
        assert "tests.py" not in task["patch"], task["instance_id"]
        assert all(t.startswith(("tests.py::", "rootlib.py::")) for t in task["FAIL_TO_PASS"])
