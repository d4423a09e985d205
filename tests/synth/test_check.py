"""``synth.check``: the verdict of each kind of candidate, on a real suite in the real sandbox."""

from __future__ import annotations

import pytest

from datagen.config.sandbox import EnvConfig, SandboxLimits
from datagen.sandbox.envs.python.manager import EnvManager
from datagen.sandbox.isolation.select import untrusted_sandbox
from datagen.synth.baseline import SuiteRunner, measure_baseline
from datagen.synth.check import check_changes
from tests.conftest import write_tree
from tests.synth.buildkit import CORE, FILES, SITE, TEST_CORE, make_minilib, run_build, sql

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def suite(tmp_path_factory, synth_cache):
    src = write_tree(tmp_path_factory.mktemp("check") / "src",
                     {**FILES, "minilib/core.py": CORE, "tests/test_core.py": TEST_CORE})
    sandbox = untrusted_sandbox("auto")
    limits = SandboxLimits(timeout_s=20)
    cfg = EnvConfig(cache_dir=str(synth_cache / "envs"), inherit_site_packages=[SITE],
                    test_requirements=["pytest", "coverage"])
    env = EnvManager(cfg, sandbox, limits).ensure(src)
    scratch = src.parent / "scratch"
    scratch.mkdir()
    runner = SuiteRunner("pytest", src, sandbox, limits, env, scratch)
    return runner, measure_baseline(runner, 1, True)


def covering(base, path: str, text: str, name: str) -> list[str]:
    first = next(i for i, line in enumerate(text.splitlines(), 1) if line.startswith(f"def {name}("))
    return base.tests_reaching(path, first, first + 3)


def test_baseline_maps_lines_to_tests(suite):
    _, base = suite
    assert base.reason is None and len(base.stable) == 8
    assert covering(base, "minilib/core.py", CORE, "mean") == ["tests/test_core.py::test_mean"]


def test_kept_bug(suite):
    runner, base = suite
    buggy = CORE.replace("sum(values) / len(values)", "sum(values) - len(values)")
    v = check_changes(runner, base, {"minilib/core.py": buggy},
                      covering(base, "minilib/core.py", CORE, "mean"), full_runs=2)
    assert (v.kept, v.reason, v.stage) == (True, None, "valid")
    assert v.fail_to_pass == ["tests/test_core.py::test_mean"] and len(v.pass_to_pass) == 7
    assert "test_mean" in v.failure_output


def test_no_test_breaks(suite):
    runner, base = suite
    harmless = CORE.replace('"mean of nothing"', '"no values"')
    v = check_changes(runner, base, {"minilib/core.py": harmless},
                      covering(base, "minilib/core.py", CORE, "mean"), full_runs=2)
    assert (v.kept, v.reason, v.stage) == (False, "no_test_breaks", "applied")


def test_breaks_collection(suite):
    runner, base = suite
    v = check_changes(runner, base, {"minilib/__init__.py": 'raise ImportError("minilib is broken")\n'},
                      [], full_runs=2)
    assert (v.kept, v.reason, v.stage) == (False, "breaks_collection", "applied")


def test_timeout(suite):
    runner, base = suite
    hang = CORE.replace("    return sum(values) / len(values)", "    while True:\n        pass")
    short = SuiteRunner(runner.runner, runner.src, runner.sandbox, runner.limits.model_copy(
        update={"timeout_s": 3.0}), runner.env, runner.scratch)
    v = check_changes(short, base, {"minilib/core.py": hang},
                      covering(base, "minilib/core.py", CORE, "mean"), full_runs=2)
    assert (v.kept, v.reason, v.stage) == (False, "timeout", "applied")


FLAKY_TEST = '''import os


def test_coin():
    assert os.urandom(1)[0] < 128
'''


def test_flaky_baseline_tests_are_in_no_task(tmp_path, synth_cache):
    """A test that fails at random (p = 1/2 per run): 10 baseline runs miss it with p = 2/1024.
    Three candidates (round-robin: three functions) give the tasks whose test lists must
    leave it out; validating all of minilib's adds time and proves nothing more."""
    repo = make_minilib(tmp_path / "flaky", {"tests/test_coin.py": FLAKY_TEST})
    out = tmp_path / "out"
    proc = run_build([repo], out, synth_cache, "baseline.runs=10", "synth.strategies=[py_op_change_v1]",
                     "synth.families=[procedural]", "synth.max_candidates_per_repo=3")
    assert proc.returncode == 0, proc.stderr[-3000:]
    ((flaky, tests),) = sql(out, "SELECT flaky_tests, tests FROM repo_baselines")
    assert flaky == ["tests/test_coin.py::test_coin"] and tests == 8
    rows = [line for line in (out / "tasks.jsonl").read_text().splitlines()]
    assert rows and not any("test_coin" in line for line in rows)
    assert all("tests/test_shapes.py::test_area" in line for line in rows)  # the stable tests are listed



def test_the_repos_own_coverage_settings_do_not_empty_the_coverage_map(tmp_path, synth_cache):
    """A repo's ``core = sysmon`` (humanize's pyproject) cannot switch contexts per test and
    warns from inside the first test; the suite's ``filterwarnings = error`` makes that an
    internal error: no test ran under coverage, no entity was covered, no candidate was made.
    sys.monitoring exists from Python 3.12, so the env is built on one (pytest and coverage
    from PyPI)."""
    from datagen.sandbox.envs.python.plan import interpreter_version

    python = next((p for p in ("python3.13", "python3.12") if interpreter_version(p)), None)
    if python is None:
        pytest.skip("needs a Python >= 3.12 interpreter (sys.monitoring)")
    files = {**FILES, "minilib/core.py": CORE, "tests/test_core.py": TEST_CORE,
             ".coveragerc": "[run]\nparallel = True\ncore = sysmon\n",
             "pytest.ini": "[pytest]\nfilterwarnings =\n    error\n"}
    src = write_tree(tmp_path / "src", files)
    sandbox, limits = untrusted_sandbox("auto"), SandboxLimits(timeout_s=60)
    cfg = EnvConfig(cache_dir=str(synth_cache / "envs"), pythons=[python], test_requirements=["pytest", "coverage"])
    env = EnvManager(cfg, sandbox, limits).ensure(src)
    (tmp_path / "scratch").mkdir()
    base = measure_baseline(SuiteRunner("pytest", src, sandbox, limits, env, tmp_path / "scratch"), 1, True)
    assert base.reason is None and len(base.stable) == 8
    assert covering(base, "minilib/core.py", CORE, "mean") == ["tests/test_core.py::test_mean"]


COMPILED_TEST = '''import os


def test_code_compiled_under_a_name_that_is_no_file():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    scope = {}
    exec(compile("def f():\\n    return 41 + 1\\n", os.path.join(root, "__init__"), "exec"), scope)
    assert scope["f"]() == 42
'''


def test_odd_code_and_a_module_that_does_not_collect_do_not_empty_the_map(tmp_path, synth_cache):
    """attrs compiles code under ``<repo>/__init__``, a file that does not exist: coverage's
    report stopped at it ("No source for code") and the whole map was empty. markdown has a
    module that does not collect under its warning filters: the coverage run stopped there
    ("Interrupted: 1 error during collection"), while the test runs go on past it."""
    files = {**FILES, "minilib/core.py": CORE, "tests/test_core.py": TEST_CORE, "tests/test_compiled.py": COMPILED_TEST,
             "tests/test_broken.py": "import no_such_module_anywhere\n"}
    src = write_tree(tmp_path / "src", files)
    sandbox, limits = untrusted_sandbox("auto"), SandboxLimits(timeout_s=30)
    cfg = EnvConfig(cache_dir=str(synth_cache / "envs"), inherit_site_packages=[SITE],
                    test_requirements=["pytest", "coverage"])
    env = EnvManager(cfg, sandbox, limits).ensure(src)
    (tmp_path / "scratch").mkdir()
    base = measure_baseline(SuiteRunner("pytest", src, sandbox, limits, env, tmp_path / "scratch"), 1, True)
    assert base.reason is None and len(base.stable) == 9
    assert covering(base, "minilib/core.py", CORE, "mean") == ["tests/test_core.py::test_mean"]
