"""docs/contributing.md, "Adding a mutation family", kept true: a family written in a module
of its own (``tests/synth/toy_family.py``: one ``Family`` and its proposer, registered on
import) turned on by the recipe (``synth.families``) makes tasks in a real ``datagen build
tasks``: its candidates are validated in the sandbox, kept, and written as task rows.

The build runs as a process that imports the module first, as a built-in family's module
is imported by the registry (``families/registry.py``: ``_BUILTIN_MODULES``)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import MIT, git, write_tree
from tests.sitekit import SITE
from tests.synth.buildkit import ROOT, build_env, read_tasks, sql

pytestmark = pytest.mark.slow  # a real build: its env, baseline and validation in the sandbox

SHAPES = '''def area(width, height):
    total = width * height
    return total


def perimeter(width, height):
    total = width + height
    return 2 * total
'''
TESTS = '''from shapes import area, perimeter


def test_area():
    assert area(3, 4) == 12


def test_perimeter():
    assert perimeter(3, 4) == 14
'''


def test_a_family_from_its_own_module_makes_tasks_in_a_real_build(tmp_path):
    repo = tmp_path / "shapes"
    write_tree(repo, {"LICENSE": MIT, "shapes.py": SHAPES, "tests/test_shapes.py": TESTS})
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "shapes")
    out, cache = tmp_path / "out", tmp_path / "cache"
    sets = [f"env.cache_dir={cache / 'envs'}", f"env.inherit_site_packages=[{SITE}]", "synth.families=[toy]",
            "synth.max_candidates_per_repo=10", "validation.test_timeout_s=60", "baseline.runs=1",
            "validation.full_runs=1"]
    cmd = [sys.executable, "-c", "import tests.synth.toy_family; from datagen.cli.app import main; main()",
           "build", "tasks", "-o", str(out), str(repo), *(a for s in sets for a in ("--set", s))]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=build_env(cache), cwd=ROOT, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]

    # a fifth of the budget of 10: the toy's two candidates, one per function, both proving a task
    assert sorted(sql(out, "SELECT family, strategy, entity, status FROM candidates")) == [
        ("toy", "toy_v1", "shapes.py::area", "kept"), ("toy", "toy_v1", "shapes.py::perimeter", "kept")]
    tasks = read_tasks(out)
    assert sorted(t["strategy"] for t in tasks) == ["toy_v1", "toy_v1"]
    assert {tuple(t["FAIL_TO_PASS"]) for t in tasks} == {("tests/test_shapes.py::test_area",),
                                                         ("tests/test_shapes.py::test_perimeter",)}
    assert all("+    total = " in t["patch"] for t in tasks)  # the fix puts the commented line back
