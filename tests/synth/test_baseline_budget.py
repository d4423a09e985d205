"""A suite longer than its budget is not a wall: the baseline keeps the test files the
cut-off run had finished (``Baseline.subset``), measures them again, and candidates are
checked with that subset; only a suite of which not one file fits is ``suite_timeout``."""

from __future__ import annotations

import pytest

from datagen.config.sandbox import EnvConfig, SandboxLimits
from datagen.sandbox.harness.profiles.registry import get_profile
from datagen.sandbox.harness.runners import ensure_env
from datagen.sandbox.isolation.select import bwrap_works, untrusted_sandbox
from datagen.synth.baseline import SuiteRunner, measure_baseline
from datagen.synth.check import check_changes
from tests.conftest import write_tree
from tests.sitekit import SITE

CALC = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n"
SLOW = "import time\n\n\ndef test_a_long_one():\n    time.sleep(60)\n"


def _suite(tmp_path, files: dict[str, str], timeout_s: float) -> SuiteRunner:
    ok, reason = bwrap_works()
    if not ok:
        pytest.skip(f"bwrap unavailable: {reason}")
    src = write_tree(tmp_path / "src", files)
    sandbox, limits = untrusted_sandbox("auto"), SandboxLimits(timeout_s=timeout_s)
    env = ensure_env(get_profile("pytest"), src, EnvConfig(cache_dir=str(tmp_path / "envs"),
                                                            inherit_site_packages=[SITE]), sandbox, limits)
    (tmp_path / "scratch").mkdir()
    return SuiteRunner("pytest", src, sandbox, limits, env, tmp_path / "scratch")


def test_a_suite_over_its_budget_becomes_the_files_that_fit(tmp_path):
    suite = _suite(tmp_path, {
        "calc.py": CALC,
        "tests/test_add.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
        "tests/test_mul.py": "from calc import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n",
        "tests/test_zz_slow.py": SLOW,  # runs last (pytest's file order) and never ends in time
    }, timeout_s=20)
    base = measure_baseline(suite, 2, True)
    assert base.reason is None, base.detail
    assert base.subset == ["tests/test_add.py", "tests/test_mul.py"]
    assert "over 20 s" in base.detail and "first 2 test files" in base.detail
    assert base.stable == ["tests/test_add.py::test_add", "tests/test_mul.py::test_mul"]
    assert base.line_tests == {}  # the subset checks every candidate whole
    verdict = check_changes(suite, base, {"calc.py": CALC.replace("a * b", "a + b")}, [], 1)
    assert verdict.kept, verdict.reason
    assert verdict.fail_to_pass == ["tests/test_mul.py::test_mul"]


def test_a_suite_whose_first_file_does_not_fit_is_a_recorded_timeout(tmp_path):
    suite = _suite(tmp_path, {"calc.py": CALC, "tests/test_a_slow.py": SLOW,
                              "tests/test_b.py": "def test_b():\n    pass\n"}, timeout_s=10)
    base = measure_baseline(suite, 1, False)
    assert base.reason == "suite_timeout" and base.detail.startswith("over 10 s") and base.subset == []
    # where the inherited site has Hypothesis or pytest-benchmark, the lighter run was tried first
    assert ("it runs with" in base.detail) == bool(base.budget)


HYPOTHESIS_SLOW = ("import time\n\nfrom hypothesis import given, settings, strategies as st\n\n\n"
                   "@settings(deadline=None)\n@given(st.integers())\ndef test_many_examples(x):\n    time.sleep(0.4)\n")


def test_a_hypothesis_suite_over_its_budget_runs_with_fewer_examples(tmp_path):
    """cattrs' suite (Hypothesis in most files) ran past its budget whole and as its first
    files: with 100 examples a property here takes 40 s, over the 25 s budget; with the
    budget's 10 examples the whole suite fits, and the task's eval script runs it that way."""
    import subprocess
    import sys

    from datagen.sandbox.harness.profiles.pytest import BUDGET_EXAMPLES, HYPOTHESIS_EXAMPLES

    suite = _suite(tmp_path, {"calc.py": CALC, "tests/test_prop.py": HYPOTHESIS_SLOW,
                              "tests/test_add.py": "from calc import add\n\n\ndef test_add():\n"
                                                   "    assert add(2, 3) == 5\n"}, timeout_s=25)
    base = measure_baseline(suite, 1, False)
    assert base.reason is None, base.detail
    assert base.budget[HYPOTHESIS_EXAMPLES] == str(BUDGET_EXAMPLES) and base.subset == []
    assert f"over 25 s: it runs with {HYPOTHESIS_EXAMPLES}=10" in base.detail
    assert base.stable == ["tests/test_add.py::test_add", "tests/test_prop.py::test_many_examples"]
    assert base.plan["env"][HYPOTHESIS_EXAMPLES] == "10"  # what the tasks' scripts are written from
    from datagen.records.env import EnvPlan

    profile = get_profile("pytest")
    script = profile.eval_script(EnvPlan.model_validate(base.plan), base.stable)
    assert f"export {HYPOTHESIS_EXAMPLES}=10" in script
    work = write_tree(tmp_path / "replay", {"calc.py": CALC, "tests/test_prop.py": HYPOTHESIS_SLOW})
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python").symlink_to(sys.executable)  # an interpreter with pytest and hypothesis
    run = subprocess.run(["bash", "-c", script.replace("tests/test_add.py::test_add", "")], cwd=work,
                         capture_output=True, text=True, timeout=60, env={"PATH": f"{bin_dir}:/usr/bin:/bin"})
    assert run.returncode == 0 and "1 passed" in run.stdout, run.stdout + run.stderr


@pytest.mark.parametrize(("specs", "expected"), [
    ([], {}),
    (["hypothesis>=6.135.26", "pytest"], {"HYPOTHESIS_MAX_EXAMPLES": "10"}),
    (["pytest-benchmark>=5.1.0", "hypothesis-jsonschema"], {"PYTEST_ADDOPTS": "--benchmark-disable"}),
    (["Hypothesis", "pytest_benchmark"], {"HYPOTHESIS_MAX_EXAMPLES": "10", "PYTEST_ADDOPTS": "--benchmark-disable"}),
])
def test_the_budget_follows_what_the_plan_installs(specs, expected):
    """cattrs' test group: Hypothesis and pytest-benchmark (its bench/ files, collected first)."""
    from datagen.records.env import EnvPlan, InstallStep
    from datagen.sandbox.harness.profiles.base import ProfileEnv

    plan = EnvPlan(profile="pytest", install=[InstallStep(name="t", kind="requirements", args=specs, origin="x")])
    assert get_profile("pytest").budget_vars(ProfileEnv("pytest", plan)) == expected
    assert get_profile("pytest").budget_vars(ProfileEnv("pytest", plan.model_copy(update={"env": expected}))) == {}


def test_a_subset_over_the_budget_too_is_halved(tmp_path):
    """cattrs on a busy machine: its first 29 files, finished within the whole run, ran over
    the budget again on their own. Here ``test_b`` is slow exactly when ``test_c`` is not in
    the session (the subset's run): the subset [a, b] is cut to its first half, [a]."""
    slow_alone = ("import time\n\n\ndef test_b(request):\n"
                  "    if not any('test_c' in i.nodeid for i in request.session.items):\n        time.sleep(60)\n")
    suite = _suite(tmp_path, {"calc.py": CALC, "tests/test_a.py": "def test_a():\n    pass\n",
                              "tests/test_b.py": slow_alone, "tests/test_c.py": SLOW}, timeout_s=15)
    base = measure_baseline(suite, 1, False)
    assert base.reason is None, base.detail
    assert base.subset == ["tests/test_a.py"] and base.stable == ["tests/test_a.py::test_a"]
    assert "first 2 test files" in base.detail and "they too: the first 1" in base.detail
