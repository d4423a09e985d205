"""A tiny Python package with a pytest suite, written into a git repo, and helpers to run
``datagen build tasks`` on it (in process, or as a subprocess for the kill tests).

The package ``minilib`` has two modules (so ``combine`` finds bugs in distinct files) and
two commits: the second fixes ``clamp`` together with a new test (what ``history`` mines).
It has no dependency files, so its environment is a bare venv that inherits the test
tools from this interpreter's site-packages (``env.inherit_site_packages``): no network.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import MIT, git, write_tree
from tests.sitekit import SITE

ROOT = Path(__file__).resolve().parents[2]

CORE_V1 = '''"""Number and text helpers."""


def clamp(value, low, high):
    if value < low:
        return low
    if value > high:
        return value
    return value


def mean(values):
    if not values:
        raise ValueError("mean of nothing")
    return sum(values) / len(values)


def count_words(text):
    counts = {}
    for word in text.lower().split():
        counts[word] = counts.get(word, 0) + 1
    return counts
'''
CORE = CORE_V1.replace("        return value\n    return value", "        return high\n    return value")
SHAPES = '''"""Rectangles."""


def area(width, height):
    return width * height


def perimeter(width, height):
    total = width + height
    return 2 * total


def is_square(width, height):
    return width == height and width > 0
'''
TEST_CORE_V1 = '''from minilib.core import clamp, count_words, mean


def test_clamp_low():
    assert clamp(-5, 0, 10) == 0


def test_clamp_inside():
    assert clamp(5, 0, 10) == 5


def test_mean():
    assert mean([1, 2, 3, 6]) == 3


def test_count_words():
    assert count_words("a b A c") == {"a": 2, "b": 1, "c": 1}
'''
TEST_CORE = TEST_CORE_V1 + '''

def test_clamp_high():
    assert clamp(50, 0, 10) == 10
'''
TEST_SHAPES = '''from minilib.shapes import area, is_square, perimeter


def test_area():
    assert area(3, 4) == 12


def test_perimeter():
    assert perimeter(3, 4) == 14


def test_square():
    assert is_square(2, 2)
    assert not is_square(2, 3)
    assert not is_square(0, 0)
'''
FILES = {"LICENSE": MIT, "minilib/__init__.py": '"""minilib."""\n', "minilib/core.py": CORE_V1,
         "minilib/shapes.py": SHAPES, "tests/test_core.py": TEST_CORE_V1, "tests/test_shapes.py": TEST_SHAPES}

# The recipe of every build here: two procedural strategies, no teacher, a few combines.
BASE_SETS = (
    f"env.inherit_site_packages=[{SITE}]",
    "synth.strategies=[py_op_change_v1,py_compare_change_v1]",
    "synth.families=[procedural,history,combine]",
    "synth.combine_share=0.2",
    "validation.test_timeout_s=60",
)


def make_minilib(root: Path, extra: dict[str, str] | None = None) -> Path:
    """The git repo: the buggy clamp, then the fix with its test (plus ``extra`` files)."""
    write_tree(root, {**FILES, **(extra or {})})
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "first version")
    write_tree(root, {"minilib/core.py": CORE, "tests/test_core.py": TEST_CORE})
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "clamp: values above high give high")
    return root


def build_args(inputs: list[Path], out: Path, cache: Path, *sets: str) -> list[str]:
    args = ["build", "tasks", "-o", str(out), *map(str, inputs), "--set", f"env.cache_dir={cache / 'envs'}"]
    for s in (*BASE_SETS, *sets):
        args += ["--set", s]
    return args


def build_env(cache: Path) -> dict[str, str]:
    return {**os.environ, "DATAGEN_CACHE": str(cache), "PYTHONPATH": str(ROOT)}


def run_build(inputs: list[Path], out: Path, cache: Path, *sets: str, timeout: float = 600
              ) -> subprocess.CompletedProcess:
    """The build as a separate process (the datagen CLI of this checkout)."""
    cmd = [sys.executable, "-c", "from datagen.cli.app import main; main()", *build_args(inputs, out, cache, *sets)]
    return subprocess.run(cmd, capture_output=True, text=True, env=build_env(cache), timeout=timeout, cwd=ROOT)


def start_build(inputs: list[Path], out: Path, cache: Path, *sets: str) -> subprocess.Popen:
    cmd = [sys.executable, "-c", "from datagen.cli.app import main; main()", *build_args(inputs, out, cache, *sets)]
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=build_env(cache),
                            cwd=ROOT)


def read_tasks(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "tasks.jsonl").read_text().splitlines()]


def sql(out: Path, query: str) -> list[tuple]:
    import duckdb

    con = duckdb.connect(str(out / "manifest.duckdb"), read_only=True)
    try:
        return con.execute(query).fetchall()
    finally:
        con.close()
