"""pytest finds a suite the way pytest does (in-package test folders, ``python_files``,
tox's test paths), and when it collects nothing or writes no report, the run says why
in pytest's own words. Real pytest in the real sandbox, on this interpreter's venv."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from datagen.config.sandbox import SandboxLimits
from datagen.records.env import EnvPlan
from datagen.sandbox.envs.python.manager import env_at
from datagen.sandbox.envs.python.plan import python_plan
from datagen.sandbox.harness.profiles.registry import get_profile
from datagen.sandbox.harness.protect import is_protected
from datagen.sandbox.harness.runners import as_profile_env, run_profile
from datagen.sandbox.isolation.select import get_sandbox

LIMITS = SandboxLimits(timeout_s=120, cpu_s=120, memory_mb=2048, processes=64)


def _tree(root: Path, files: dict[str, str]) -> Path:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    return root


def _run(src: Path, tmp_path: Path, plan: EnvPlan | None = None):
    """The whole suite of ``src`` (a fresh copy), by the pytest profile, in this venv."""
    env = env_at(Path(sys.prefix))
    work = tmp_path / "work"
    shutil.copytree(src, work)
    profile_env = as_profile_env("pytest", env, plan or python_plan(src, pythons=[sys.executable]))
    return run_profile(get_profile("pytest"), profile_env, get_sandbox("auto", warn=False), work, LIMITS)


@pytest.fixture(autouse=True)
def _needs_a_venv():
    if sys.prefix == sys.base_prefix:
        pytest.skip("the tests run pytest from this interpreter's venv")


def test_an_in_package_suite_with_a_pytest_ini_is_found_and_run(tmp_path):
    """hyperlink's shape: ``src/<pkg>/test/test_*.py``, a pytest.ini with no testpaths, a
    tox command ``pytest {posargs:src/{env:PY_MODULE}}``."""
    src = _tree(tmp_path / "repo", {
        "pytest.ini": "[pytest]\ndoctest_optionflags = ALLOW_UNICODE\n",
        "tox.ini": "[testenv]\nsetenv =\n    PY_MODULE=shapes\ncommands = pytest {posargs:src/{env:PY_MODULE}}\n",
        "src/shapes/__init__.py": "def area(w, h):\n    return w * h\n",
        "src/shapes/test/__init__.py": "",
        "src/shapes/test/test_area.py": "from shapes import area\n\n\ndef test_area():\n    assert area(2, 3) == 6\n",
        "benchmarks/test_slow.py": "def test_never_collected():\n    raise AssertionError('outside the suite')\n",
    })
    plan = python_plan(src, pythons=[sys.executable])
    assert plan.test_paths == ["src/shapes"]
    assert get_profile("pytest").detect(src, ["src/shapes/test/test_area.py"])
    run = _run(src, tmp_path, plan)
    assert run.report_error is None
    assert run.results == {"src/shapes/test/test_area.py::test_area": "pass"}


def test_python_files_from_the_config_decide_detection_and_collection(tmp_path):
    src = _tree(tmp_path / "repo", {
        "setup.cfg": "[tool:pytest]\npython_files = check_*.py\n",
        "calc.py": "def add(a, b):\n    return a + b\n",
        "checks/check_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
    })
    profile = get_profile("pytest")
    assert profile.detect(src, ["calc.py", "checks/check_calc.py"])
    assert not profile.detect(tmp_path, ["calc.py", "checks/check_calc.py"])  # no config: not pytest's
    assert _run(src, tmp_path).results == {"checks/check_calc.py::test_add": "pass"}


def test_a_python_files_pattern_with_a_folder_matches_the_path_as_pytest_does(tmp_path):
    """``python_files = src/tests/test_*.py`` (a path, not a name): pytest matches it against
    the file's path; the profile must claim the repo and pytest must run its tests."""
    src = _tree(tmp_path / "repo", {
        "setup.cfg": "[tool:pytest]\npython_files = src/tests/test_*.py\n",
        "src/calc/__init__.py": "def add(a, b):\n    return a + b\n",
        "src/tests/__init__.py": "",
        "src/tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
        "src/tests/helpers_test_data.py": "X = 1\n",
    })
    profile = get_profile("pytest")
    assert profile.detect(src, ["src/calc/__init__.py", "src/tests/test_calc.py"])
    assert not profile.detect(src, ["src/calc/__init__.py", "other/test_calc.py"])


def test_no_report_is_said_in_pytests_own_words(tmp_path):
    """A conftest that fails to import stops pytest before any report: the reason names
    the error, not just 'no report written'."""
    src = _tree(tmp_path / "repo", {
        "conftest.py": "raise RuntimeError('the fixture server is not configured')\n",
        "test_a.py": "def test_a():\n    pass\n",
    })
    run = _run(src, tmp_path)
    assert run.results == {}
    assert run.report_error.startswith("no report written: ")
    assert "the fixture server is not configured" in run.report_error


def test_a_suite_that_collects_nothing_says_so_in_pytests_words(tmp_path):
    src = _tree(tmp_path / "repo", {
        "pytest.ini": "[pytest]\ntestpaths = tests\n",
        "tests/test_a.py": "import unittest\n",  # a test module with no tests in it
    })
    run = _run(src, tmp_path)
    assert run.results == {}
    assert run.report_error.startswith("the runner reported no tests: ")
    assert "no tests ran" in run.report_error


def _suite_and_replay(src: Path, tmp_path: Path) -> dict[str, str]:
    """The repo's whole suite by the profile (the plan's variables on, as a build sets them),
    then the plan's eval script over the ids it reported: it must pass outside datagen too."""
    plan = python_plan(src, pythons=[sys.executable])
    env = env_at(Path(sys.prefix))
    work = tmp_path / "work"
    shutil.copytree(src, work)
    run = run_profile(get_profile("pytest"), as_profile_env("pytest", env, plan), get_sandbox("auto", warn=False),
                      work, LIMITS, extra_env=plan.env)
    script = get_profile("pytest").eval_script(plan, sorted(run.results))
    replay = subprocess.run(["bash", "-c", script], cwd=src, capture_output=True, text=True, timeout=120,
                            env={**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"})
    assert replay.returncode == 0, replay.stdout[-2000:] + replay.stderr[-2000:]
    return run.results


def test_unittest_files_named_without_an_underscore_are_a_pytest_suite(tmp_path):
    """``pkg/tests/testfoo.py``: unittest discovery runs it, pytest's default names miss it."""
    src = _tree(tmp_path / "repo", {
        "pyproject.toml": '[project]\nname = "wrapx"\nversion = "1.0"\n',
        "wrapx/__init__.py": "def wrap(s, n):\n    return [s[i:i + n] for i in range(0, len(s), n)]\n",
        "wrapx/tests/__init__.py": "",
        "wrapx/tests/testwrap.py": "import unittest\n\nfrom wrapx import wrap\n\n\nclass Wrap(unittest.TestCase):\n"
                                   "    def test_chunks(self):\n"
                                   "        self.assertEqual(wrap('abcde', 2), ['ab', 'cd', 'e'])\n",
        "wrapx/tests/helpers_for_tests.py": "X = 1\n",
    })
    paths = [p.relative_to(src).as_posix() for p in src.rglob("*") if p.is_file()]
    assert get_profile("pytest").detect(src, paths)
    assert python_plan(src, pythons=[sys.executable]).env["PYTEST_ADDOPTS"] == '-o "python_files=test*.py *_test.py"'
    assert _suite_and_replay(src, tmp_path) == {"wrapx/tests/testwrap.py::Wrap::test_chunks": "pass"}
    assert is_protected("wrapx/tests/testwrap.py") and is_protected("wrapx/testwrap.py")


def test_a_suite_folder_with_its_own_conftest_and_config_is_found_and_run(tmp_path):
    """``src/tests/`` holds the suite, its conftest.py and its own pytest.ini (file names only
    that config collects): the folder is the test path, ids stay relative to the repo."""
    src = _tree(tmp_path / "repo", {
        "src/padx/__init__.py": "def pad(s, n):\n    return s.rjust(n)\n",
        "src/tests/pytest.ini": "[pytest]\npython_files = check_*.py\n",
        "src/tests/conftest.py": "import sys\nfrom pathlib import Path\n\nimport pytest\n\n"
                                 "sys.path.insert(0, str(Path(__file__).parents[1]))\n\n\n"
                                 "@pytest.fixture\ndef width():\n    return 4\n",
        "src/tests/check_pad.py": "from padx import pad\n\n\ndef test_pad(width):\n"
                                  "    assert pad('ab', width) == '  ab'\n",
    })
    paths = [p.relative_to(src).as_posix() for p in src.rglob("*") if p.is_file()]
    assert get_profile("pytest").detect(src, paths)
    plan = python_plan(src, pythons=[sys.executable])
    assert plan.test_paths == ["src/tests"] and "--rootdir=." in plan.env["PYTEST_ADDOPTS"]
    assert _suite_and_replay(src, tmp_path) == {"src/tests/check_pad.py::test_pad": "pass"}


def test_test_modules_that_call_unittest_main_at_import_are_collected(tmp_path):
    """``unittest.main()`` at module level, unguarded (a suite run as ``python testcalc.py``):
    it would parse pytest's arguments and exit during collection; pytest starts with it a no-op."""
    src = _tree(tmp_path / "repo", {
        "calcx.py": "def add(a, b):\n    return a + b\n",
        "test/testcalc.py": "import unittest\n\nfrom calcx import add\n\n\nclass Add(unittest.TestCase):\n"
                            "    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n\n\nunittest.main()\n",
    })
    plan = python_plan(src, pythons=[sys.executable])
    assert plan.env["UNITTEST_MAIN_AT_IMPORT"] == "skip" and "test/testcalc.py" in " ".join(plan.notes)
    assert _suite_and_replay(src, tmp_path) == {"test/testcalc.py::Add::test_add": "pass"}
