"""Every runner's test selection fits the kernel's argument limit, in datagen's runs and in
the eval scripts (``profiles/base.py``: ``ARGS_BUDGET``, ``fitting``, ``ids_file``).

A vitest task's eval script named 1,700+ tests on one command line and failed outside datagen
with "Argument list too long" (Linux refuses any single argument or environment variable over
128 KiB, and all of them together over ARG_MAX). The rule: a selection too long for one
command line runs wider (whole files, or the whole suite) and is read per id; the ids a
check reads are a here-document in the checkout, never an argument or a variable."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from datagen.sandbox.harness.profiles.base import ARGS_BUDGET, ProfileEnv, args_bytes, chunks, fitting
from datagen.sandbox.harness.profiles.registry import get_profile, profile_names
from tests import tools

MAX_ARG_STRLEN = 128 * 1024  # Linux: the most bytes of one argument or one environment string


def many_ids(n: int = 3000) -> list[str]:
    """Ids in every profile's shapes at once (file, ``::``, ``#``, `` > ``), 40 files, long names."""
    return [f"tests/test_{i % 40}.py::Case{i % 40}#test_{'x' * 70}_{i} > when {i}" for i in range(n)]


def test_fitting_takes_the_narrowest_selection_that_fits():
    small, big = ["-t", "a|b"], ["-t", "x" * ARGS_BUDGET]
    assert fitting(small, ["file"], []) == small
    assert fitting(big, ["file"], []) == ["file"]
    assert fitting(big, ["y" * ARGS_BUDGET], []) == []
    assert args_bytes(["ab", "c"]) == 5
    parts = chunks([f"id{i:03d}" for i in range(100)], 60)
    assert [len(p) for p in parts] == [10] * 10 and sum(parts, []) == [f"id{i:03d}" for i in range(100)]


@pytest.mark.parametrize("name", profile_names())
def test_every_profile_selects_many_tests_within_the_limit(name, tmp_path):
    profile = get_profile(name)
    ids = many_ids()
    argv = profile.test_command(ProfileEnv(name, profile.plan_stub()), tmp_path, ids)
    assert max(len(a.encode()) for a in argv) < MAX_ARG_STRLEN and args_bytes(argv) < 2 * ARGS_BUDGET
    script = profile.eval_script(profile.plan_stub(), ids)
    assert max(len(line.encode()) for line in script.splitlines()) < MAX_ARG_STRLEN
    exported = re.findall(r"^export [^\n]*", script, re.M)
    assert all(len(line) < 4096 for line in exported), "ids in an environment variable"


# node's own runner, no dependency: 1,800 tests with long names, all in one file
MANY_NODE_TESTS = (
    "const test = require('node:test');\nconst assert = require('node:assert');\n"
    "for (let i = 0; i < 1800; i++) {\n"
    "  test(`reads record ${String(i).padStart(4, '0')} ` + 'of the long list of records'.repeat(3), () => {\n"
    "    assert.notStrictEqual(i, Number(process.env.BREAK ?? -1));\n  });\n}\n"
)


@pytest.mark.slow
@tools.needs("node")
def test_an_eval_script_of_1800_tests_runs_and_checks_each(tmp_path):
    (tmp_path / "test").mkdir()
    (tmp_path / "test" / "records.test.js").write_text(MANY_NODE_TESTS)
    (tmp_path / "package.json").write_text('{"name": "records", "scripts": {"test": "node --test"}}\n')
    title = "of the long list of records" * 3
    ids = [f"reads record {i:04d} {title}" for i in range(1800)]
    profile = get_profile("node")
    script = profile.eval_script(profile.plan(tmp_path), ids)
    assert len("\n".join(ids).encode()) > MAX_ARG_STRLEN  # as one variable, no command could start
    (tmp_path / "eval.sh").write_text(script)

    def run(**env: str) -> subprocess.CompletedProcess:
        return subprocess.run(["bash", "eval.sh"], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                              env={"PATH": "/usr/bin:/bin", **env})

    ok = run()
    assert ok.returncode == 0 and "all tests passed" in ok.stdout, ok.stdout[-2000:] + ok.stderr[-2000:]
    broken = run(BREAK="1234")
    assert broken.returncode == 1 and f"NOT PASSED: {ids[1234]} (fail)" in broken.stdout, broken.stdout[-2000:]
    assert broken.stdout.count("NOT PASSED") == 1 and Path(tmp_path / ".datagen-eval-ids").is_file()
