"""Every profile's task replays outside datagen: a tiny repo per language, a hand-made bug
validated in the real sandbox (baseline, then ``check_changes``), the task committed, then
a fresh ``git clone`` of its sealed environment (``envs/<env_id>.git``) at ``base_commit`` +
``setup_script`` + ``eval_script`` run with plain bash: it fails, and passes once ``patch`` is
applied; no object of the fixed files is in the clone, and editing or deleting a test file
makes the eval script fail again."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from datagen.config.sandbox import EnvConfig, SandboxLimits, ValidateRecipe, ValidationConfig
from datagen.records.tasks import TaskRecord
from datagen.sandbox.harness.profiles.registry import get_profile
from datagen.sandbox.harness.protect import is_protected
from datagen.sandbox.harness.runners import ensure_env
from datagen.sandbox.harness.validate import Validator
from datagen.sandbox.isolation.select import bwrap_works, untrusted_sandbox
from datagen.synth.baseline import SuiteRunner, measure_baseline
from datagen.synth.candidates import Candidate
from datagen.synth.check import check_changes
from tests.conftest import write_tree
from tests.sealed import assert_sealed, assert_test_edits_fail, emit_sealed
from tests.sitekit import SITE

SAMPLES = Path(__file__).resolve().parents[2] / "sample_data"

PY = {
    "calc.py": "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n",
    "tests/test_calc.py": "from calc import add, mul\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
                          "def test_mul():\n    assert mul(2, 3) == 6\n",
}
NODE = {
    "package.json": '{"name": "calc", "version": "1.0.0", "scripts": {"test": "node --test"}}\n',
    "lib.js": "exports.add = (a, b) => a + b;\nexports.mul = (a, b) => a * b;\n",
    "test/lib.test.js": "const test = require('node:test');\nconst assert = require('node:assert');\n"
                        "const { add, mul } = require('../lib.js');\n\n"
                        "test('adds', () => assert.strictEqual(add(2, 3), 5));\n"
                        "test.describe('product', () => {\n"
                        "  test.it('muls', () => assert.strictEqual(mul(2, 3), 6));\n});\n",
}
GO = {
    "go.mod": "module example.com/calc\n\ngo 1.19\n",
    "calc/calc.go": "package calc\n\nfunc Add(a, b int) int { return a + b }\n\n"
                    "func Mul(a, b int) int { return a * b }\n",
    "calc/calc_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n"
                         "\t\tt.Fatal(\"add\")\n\t}\n}\n\nfunc TestMul(t *testing.T) {\n"
                         "\tt.Run(\"small\", func(t *testing.T) {\n\t\tif Mul(2, 3) != 6 {\n\t\t\tt.Fatal(\"mul\")\n"
                         "\t\t}\n\t})\n}\n",
}
RUST = {
    "Cargo.toml": "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n",
    "src/lib.rs": "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\n"
                  "pub fn mul(a: i32, b: i32) -> i32 {\n    a * b\n}\n\n"
                  "#[cfg(test)]\nmod tests {\n    #[test]\n    fn muls() {\n        assert_eq!(super::mul(2, 3), 6);\n"
                  "    }\n}\n",
    "tests/api.rs": "#[test]\nfn adds() {\n    assert_eq!(calc::add(2, 3), 5);\n}\n",
}
BUGS = {
    "pytest": ("calc.py", "return a + b", "return a - b"),
    "node": ("lib.js", "a + b", "a - b"),
    "go": ("calc/calc.go", "return a + b", "return a - b"),
    "cargo": ("src/lib.rs", "    a + b\n", "    a - b\n"),
    "vitest": ("src/interval.ts", "return i.end - i.start;", "return i.end - i.start - 1;"),
}


def _sample(name: str) -> dict[str, str]:
    root = SAMPLES / name
    return {p.relative_to(root).as_posix(): p.read_text() for p in root.rglob("*") if p.is_file()}


CASES = {"pytest": lambda: PY, "node": lambda: NODE, "go": lambda: GO, "cargo": lambda: RUST,
         "vitest": lambda: _sample("intervals-ts")}


def make_task(root: Path, runner: str, case: str = "") -> TaskRecord:
    """The task of the hand-made bug, validated and committed as ``datagen build tasks`` does."""
    case = case or runner
    src = write_tree(root / "src", CASES[case]())
    profile = get_profile(runner)
    assert profile.detect(src, [p.relative_to(src).as_posix() for p in src.rglob("*") if p.is_file()])
    sandbox, limits = untrusted_sandbox("auto"), SandboxLimits(timeout_s=120)
    cfg = EnvConfig(cache_dir=str(root / "envs"), inherit_site_packages=[SITE])
    env = ensure_env(profile, src, cfg, sandbox, limits)
    (root / "scratch").mkdir()
    suite = SuiteRunner(runner, src, sandbox, limits, env, root / "scratch")
    base = measure_baseline(suite, 1, False)
    assert base.reason is None, base.detail
    path, old, new = BUGS[case]
    text = (src / path).read_text()
    changes = {path: text.replace(old, new, 1)}
    verdict = check_changes(suite, base, changes, [], 1)
    assert verdict.kept, verdict.reason
    c = Candidate("calc", "hand_made_v1", "procedural", f"{path}::x", 0, changes)
    return emit_sealed(root, src, c, verdict, runner, base)


def pytest_task(root: Path, files: dict[str, str]) -> TaskRecord:
    """``make_task`` of the pytest case's bug (``calc.py``'s add) in the tree ``files``."""
    ok, reason = bwrap_works()
    if not ok:
        pytest.skip(f"bwrap unavailable: {reason}")
    CASES["pytest-case"], BUGS["pytest-case"] = (lambda: files), BUGS["pytest"]
    try:
        return make_task(root, "pytest", "pytest-case")
    finally:
        del CASES["pytest-case"], BUGS["pytest-case"]


def bash(script: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "DATAGEN"))}
    return subprocess.run(["bash", "-c", script], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("runner", sorted(CASES))
def test_task_replays_with_plain_bash(tmp_path, runner):
    ok, reason = bwrap_works()
    if not ok:
        pytest.skip(f"bwrap unavailable: {reason}")
    if (missing := get_profile(runner).missing_tool()) is not None:
        pytest.skip(missing.reason)
    task = make_task(tmp_path, runner)
    assert task.runner == runner and task.language == get_profile(runner).task_language(tmp_path / "src")
    assert task.FAIL_TO_PASS and task.PASS_TO_PASS
    recipe = ValidateRecipe(env=EnvConfig(cache_dir=str(tmp_path / "envs"), inherit_site_packages=[SITE]),
                            validation=ValidationConfig(reruns=1, workers=2, test_timeout_s=120))
    row = Validator(recipe, untrusted_sandbox("auto")).validate(task, tmp_path / "out")  # `datagen validate`
    assert row.status == "valid", (row.reason, row.notes)
    assert not re.search(r"^\s*(python3? -m )?datagen\b", task.setup_script + task.eval_script, re.M)
    assert_sealed(tmp_path / "out" / task.repo_path, task, tmp_path)
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(tmp_path / "out" / task.repo_path), str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "checkout", "-q", task.base_commit], check=True)
    setup = bash(task.setup_script, clone)
    assert setup.returncode == 0, setup.stdout + setup.stderr
    before = bash(task.eval_script, clone)
    assert before.returncode != 0, before.stdout + before.stderr
    assert "NOT PASSED" in before.stdout or runner == "pytest"
    subprocess.run(["git", "-C", str(clone), "apply", "-"], input=task.patch, text=True, check=True)
    after = bash(task.eval_script, clone)
    assert after.returncode == 0, after.stdout + after.stderr
    test_file = next(p for p in sorted(CASES[runner]()) if is_protected(p))
    assert_test_edits_fail(clone, task, test_file, lambda script: bash(script, clone))
    shutil.rmtree(clone / "node_modules", ignore_errors=True)


PY_OPTIONAL = {
    "pyproject.toml": '[project]\nname = "calc"\nversion = "0.1.0"\n\n[project.optional-dependencies]\n'
                      'test = ["six", "zz-no-such-dist-anywhere"]\n\n[tool.pytest.ini_options]\n'
                      'testpaths = ["tests"]\n',
    "calc.py": PY["calc.py"],
    "tests/test_calc.py": "import six\n\n" + PY["tests/test_calc.py"],
}


def test_pytest_task_replays_past_a_test_dependency_no_index_has(tmp_path):
    """The test extras name a distribution no index serves: the env installs the others one by
    one and goes on without it; the task's setup script does the same (and says so), so the
    replay has ``six`` and passes after the fix."""
    task = pytest_task(tmp_path, PY_OPTIONAL)
    assert "went on without it" in task.setup_script and "for spec in" in task.setup_script
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(tmp_path / "out" / task.repo_path), str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "checkout", "-q", task.base_commit], check=True)
    setup = bash(task.setup_script, clone)
    assert setup.returncode == 0 and "went on without zz-no-such-dist-anywhere" in setup.stderr, setup.stderr[-2000:]
    assert bash(task.eval_script, clone).returncode != 0
    subprocess.run(["git", "-C", str(clone), "apply", "-"], input=task.patch, text=True, check=True)
    after = bash(task.eval_script, clone)
    assert after.returncode == 0, after.stdout[-2000:] + after.stderr[-2000:]


PY_BUSY = {
    "calc.py": PY["calc.py"],
    "tests/test_calc.py": PY["tests/test_calc.py"] + (
        "\n\ndef test_quick():\n"
        "    # a timing test: its first run on a busy machine is over its limit (CALC_BUSY_MARK: the\n"
        "    # replay below plays that machine; no validating run sets it)\n"
        "    import os\n\n"
        "    mark = os.environ.get('CALC_BUSY_MARK')\n"
        "    if mark and not os.path.exists(mark):\n"
        "        open(mark, 'w').close()\n"
        "        raise AssertionError('took 0.3 s, over its 0.1 s limit')\n"),
}


def test_pytest_eval_script_reruns_a_test_that_fails_once_on_a_busy_machine(tmp_path):
    """mistune's near-linear timing tests passed every validating run and failed its replay on
    a loaded machine: the eval script runs the tests that failed again (``--lf``, up to
    twice), so such a test passes on a rerun, while a test the fix does not make pass fails
    every try; pytest's cache lives in a temporary folder, never in the tree."""
    task = pytest_task(tmp_path, PY_BUSY)
    assert "tests/test_calc.py::test_quick" in task.PASS_TO_PASS
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(tmp_path / "out" / task.repo_path), str(clone)], check=True)
    assert bash(task.setup_script, clone).returncode == 0
    before = bash(task.eval_script, clone)
    assert before.returncode == 1, before.stdout[-2000:]
    subprocess.run(["git", "-C", str(clone), "apply", "-"], input=task.patch, text=True, check=True)
    mark = tmp_path / "busy"
    after = bash(f"export CALC_BUSY_MARK={mark}\n" + task.eval_script, clone)
    assert mark.exists() and "1 failed, 2 passed" in after.stdout, after.stdout[-2000:]  # the first try failed
    assert after.returncode == 0, after.stdout[-2000:] + after.stderr[-2000:]
    assert not (clone / ".pytest_cache").exists()
    assert before.stdout.count("1 failed") == 3, before.stdout[-2000:]  # the broken test failed every try
    assert bash(f"export CALC_BUSY_MARK={mark}\n" + task.eval_script, clone).returncode == 0


PY_DOCTEST = {
    "pytest.ini": "[pytest]\naddopts = --doctest-modules\n",
    "calc.py": PY["calc.py"],
    # a code module's doctest that expects the message of the module's own ``assert``
    "seps.py": ('def check(seps):\n    """Only slashes.\n\n    >>> check("xyz")\n'
                "    Traceback (most recent call last):\n    ...\n    AssertionError: Invalid separators\n"
                '    """\n    assert set(seps) <= {"/"}, "Invalid separators"\n    return seps\n'),
    "tests/test_calc.py": PY["tests/test_calc.py"],
}


def test_pytest_eval_script_keeps_a_code_modules_asserts_as_python_runs_them(tmp_path):
    """zipp's ``glob.py`` doctest expects its ``assert``'s message; naming the module on
    pytest's command line makes it an initial path whose asserts pytest rewrites, so the
    doctest failed in the replay while it passed in the whole-suite runs that validated the
    task. A run that names a code module's doctest keeps plain asserts."""
    task = pytest_task(tmp_path, PY_DOCTEST)
    assert "seps.py::seps.check" in task.PASS_TO_PASS, task.PASS_TO_PASS
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(tmp_path / "out" / task.repo_path), str(clone)], check=True)
    assert bash(task.setup_script, clone).returncode == 0
    assert bash(task.eval_script, clone).returncode == 1
    subprocess.run(["git", "-C", str(clone), "apply", "-"], input=task.patch, text=True, check=True)
    after = bash(task.eval_script, clone)
    assert after.returncode == 0, after.stdout[-2000:] + after.stderr[-2000:]
