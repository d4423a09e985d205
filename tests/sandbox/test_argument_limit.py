"""Every runner's test selection fits the kernel's argument limit, in datagen's runs and in
the eval scripts (``profiles/base.py``: ``ARGS_BUDGET``, ``fitting``, ``ids_file``).

A vitest task's eval script named 1,700+ tests on one command line and failed outside datagen
with "Argument list too long" (Linux refuses any single argument or environment variable over
128 KiB, and all of them together over ARG_MAX). The rule: a selection too long for one
command line runs wider (whole files, or the whole suite) and is read per id; the ids a
check reads are a here-document in the checkout, never an argument or a variable."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from datagen.sandbox.harness.profiles.base import ARGS_BUDGET, ProfileEnv, args_bytes, chunks, fitting
from datagen.sandbox.harness.profiles.registry import get_profile, profile_names
from datagen.sandbox.harness.runners import run_profile
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


MANY_MOCHA_TESTS = (
    "const assert = require('assert');\n\ndescribe('records', function () {\n"
    "  for (let i = 0; i < 1800; i++) {\n"
    "    it(`reads record ${String(i).padStart(4, '0')} ` + 'of the long list of records'.repeat(3), function () {\n"
    "      assert.notStrictEqual(i, Number(process.env.BREAK || -1));\n    });\n  }\n});\n"
)


@pytest.mark.slow
def test_a_mocha_selection_of_1800_tests_runs_in_the_sandbox_and_replays(tmp_path):
    """mocha's ``--grep`` of 1,800 long titles is one argument over 128 KiB: the run goes wide
    (the whole suite), in datagen's sandboxed run and in the eval script, and is read per id.
    Real mocha from the npm registry."""
    from datagen.sandbox.isolation.select import bwrap_works
    from tests.sandbox.test_js_package_managers import _env, _registry

    tools.skip_unless("npm")
    if not _registry():
        pytest.skip("the npm registry is unreachable from here")
    if not bwrap_works()[0]:
        pytest.skip(f"bwrap unavailable: {bwrap_works()[1]}")
    src = tmp_path / "records"
    (src / "test").mkdir(parents=True)
    (src / "package.json").write_text(json.dumps({"name": "records", "version": "1.0.0", "scripts": {"test": "mocha"},
                                                  "devDependencies": {"mocha": "10.8.2"}}))
    (src / "test" / "records.test.js").write_text(MANY_MOCHA_TESTS)
    profile, sandbox, limits, env = _env(src, tmp_path, "mocha")
    title = "of the long list of records" * 3
    ids = [f"test/records.test.js > records reads record {i:04d} {title}" for i in range(1800)]
    work = tmp_path / "work"
    shutil.copytree(src, work)
    run = run_profile(profile, env, sandbox, work, limits, ids)
    assert run.results == dict.fromkeys(ids, "pass"), run.run.stderr[-1500:]
    (work / "node_modules").rename(work / "links")  # the eval script's checkout has its own install
    shutil.copytree(env.path / "node_modules", work / "node_modules", symlinks=True)
    (work / "eval.sh").write_text(profile.eval_script(env.plan, ids))
    ok = subprocess.run(["bash", "eval.sh"], cwd=work, capture_output=True, text=True, timeout=300)
    assert ok.returncode == 0 and "all tests passed" in ok.stdout, ok.stdout[-2000:]
    broken = subprocess.run(["bash", "eval.sh"], cwd=work, capture_output=True, text=True, timeout=300,
                            env={**os.environ, "BREAK": "77"})
    assert broken.returncode == 1 and broken.stdout.count("NOT PASSED") == 1 and ids[77] in broken.stdout
