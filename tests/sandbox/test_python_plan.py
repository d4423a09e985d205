"""The rules that derive a Python repo's EnvPlan from its files (pure: no sandbox, no network)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from datagen.builds.tasks.output import outcome_of, repo_env_row, why_no_tasks
from datagen.config.sandbox import EnvConfig, SandboxLimits
from datagen.records.env import EnvPlan
from datagen.records.tasks import CandidateRow, RepoBaselineRow
from datagen.sandbox.envs.python.manager import EnvManager
from datagen.sandbox.envs.python.plan import interpreter_version, python_plan
from datagen.sandbox.envs.python.sources import is_test_name, setup_py_calls
from datagen.sandbox.harness.profiles.registry import get_profile

PYPROJECT = '''[project]
name = "demo-pkg"
requires-python = ">=3.10"
dependencies = ["attrs>=21", "demo-pkg[fast]"]
classifiers = ["Programming Language :: Python :: 3.10", "Programming Language :: Python :: 3.11"]
[project.optional-dependencies]
fast = ["orjson"]
tests = ["pytest-mock", "demo-pkg[fast]"]
docs = ["sphinx"]
[dependency-groups]
lint = ["ruff"]
test = ["freezegun", {include-group = "typing"}]
typing = ["mypy"]
[tool.pytest.ini_options]
testpaths = ["tests"]
addopts = "--cov=demo -n 2"
asyncio_mode = "auto"
'''
TOX = '''[testenv]
deps =
    -rrequirements/test.txt
    py310: tomli
    coverage
extras = tests
setenv =
    TZ = UTC
    HOME = {envtmpdir}
commands = pytest tests {posargs}
'''
SETUP_PY = '''from setuptools import setup
BASE = ["six>=1.10", "idna"]
setup(name="legacy", install_requires=BASE + ["chardet"], extras_require={"testing": ["nose", "pytest"]},
      tests_require=["mock"], python_requires=">=3.11")
'''


def _tree(root: Path, files: dict[str, str]) -> Path:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    return root


def test_pep621_groups_tox_and_implied_plugins(tmp_path):
    src = _tree(tmp_path, {"pyproject.toml": PYPROJECT, "tox.ini": TOX,
                           "requirements/test.txt": "hypothesis>=6\n-e .\n",
                           "requirements/docs.txt": "sphinx\n", "tests/test_a.py": "import freezegun\nimport yaml\n",
                           "demo/__init__.py": ""})
    plan = python_plan(src, pythons=[sys.executable], test_requirements=["pytest", "coverage"])
    steps = {s.origin: s for s in plan.install}
    assert steps["pyproject.toml [project] dependencies"].args == ["attrs>=21"]  # the self-extra left out
    assert steps["pyproject.toml [project.optional-dependencies] tests"].args == ["pytest-mock", "orjson"]
    assert steps["pyproject.toml [dependency-groups] test"].args == ["freezegun", "mypy"]
    assert not any("lint" in o or "docs" in o for o in steps)
    assert "hypothesis>=6" in steps["requirements/test.txt"].args
    implied = steps["pytest options and test-file imports"].args
    assert {"pytest-cov", "pytest-xdist", "pytest-asyncio", "PyYAML"} <= set(implied)
    assert "freezegun" not in implied  # declared already
    # every test tool, though tox names coverage: an optional step may fail to install it
    assert plan.install[-1].origin == "env.test_requirements" and plan.install[-1].args == ["pytest", "coverage"]
    assert [s.kind for s in plan.install][:2] == ["requirements", "project"] and plan.install[1].optional
    assert plan.test_paths == ["tests"] and plan.test_command == ["python", "-m", "pytest", "tests"]
    assert plan.env == {"TZ": "UTC"} and plan.toolchain_request == ">=3.10"


def test_setup_py_is_read_not_run(tmp_path):
    src = _tree(tmp_path, {"setup.py": SETUP_PY + "raise SystemExit('ran!')\n", "test_x.py": "import mock\n"})
    calls = setup_py_calls(src / "setup.py")
    assert calls["install_requires"] == ["six>=1.10", "idna", "chardet"]
    plan = python_plan(src, pythons=[sys.executable])
    origins = [s.origin for s in plan.install]
    assert "setup.py install_requires" in origins and "setup.py extras_require testing" in origins
    assert any(s.args == ["mock"] for s in plan.install)  # tests_require


def test_setup_cfg_poetry_pipfile_and_nox(tmp_path):
    cfg = "[options]\ninstall_requires =\n    click>=8\n[options.extras_require]\ntest =\n    pytest-timeout\n"
    poetry = '[tool.poetry]\nname = "p"\n[tool.poetry.dependencies]\npython = "^3.9"\nrequests = "^2.28"\n' \
             '[tool.poetry.group.test.dependencies]\nrespx = "0.20.1"\n'
    nox = "import nox\n@nox.session\ndef tests(session):\n    session.install('pytest-randomly', '.[test]')\n"
    a = python_plan(_tree(tmp_path / "a", {"setup.cfg": cfg, "noxfile.py": nox}), pythons=[sys.executable])
    assert a.install[0].args == ["click>=8"]
    nox_step = next(s for s in a.install if s.origin == "noxfile.py session tests")
    assert nox_step.args == ["pytest-randomly"]  # its .[test] extra is declared already (setup.cfg)
    b = python_plan(_tree(tmp_path / "b", {"pyproject.toml": poetry}), pythons=[sys.executable])
    assert b.install[0].args == ["requests>=2.28"] and b.toolchain_request == "^3.9"
    assert any(s.args == ["respx==0.20.1"] for s in b.install)
    c = python_plan(_tree(tmp_path / "c", {"Pipfile": '[packages]\nflask = "*"\n[dev-packages]\npytest = ">=7"\n'}),
                    pythons=[sys.executable])
    assert c.install[0].args == ["flask"] and any(s.args == ["pytest>=7"] for s in c.install)


def test_unittest_named_files_and_test_names(tmp_path):
    plan = python_plan(_tree(tmp_path, {"tests/test.py": "import unittest\n"}), pythons=[sys.executable])
    assert "python_files=" in plan.env["PYTEST_ADDOPTS"]
    assert all(is_test_name(n) for n in ("test", "tests", "testing", "dev", "test-extra", "unit_tests"))
    assert not any(is_test_name(n) for n in ("docs", "all", "lint", "contest"))


def test_interpreter_choice_and_mismatch(tmp_path):
    here = f"{sys.version_info[0]}.{sys.version_info[1]}"
    fits = python_plan(_tree(tmp_path / "a", {"pyproject.toml": f'[project]\nrequires-python = ">={here}"\n'}),
                       pythons=["no-such-python", sys.executable])
    assert fits.toolchain == sys.executable and fits.toolchain_mismatch is None
    assert interpreter_version(sys.executable) == sys.version_info[:2]
    far = python_plan(_tree(tmp_path / "b", {"pyproject.toml": '[project]\nrequires-python = ">=3.99"\n'}),
                      pythons=[sys.executable])
    assert far.toolchain == sys.executable and "none of" in far.toolchain_mismatch


def test_user_plan_wins_and_renders_as_dockerfile(tmp_path):
    src = _tree(tmp_path / "repo", {"pyproject.toml": PYPROJECT})
    user = EnvPlan(profile="pytest", toolchain="python3.11", install=[], env={"TZ": "UTC"},
                   test_command=["python", "-m", "pytest", "tests"])
    user_file = tmp_path / "plan.json"
    user_file.write_text(user.model_dump_json())
    cfg = EnvConfig(cache_dir=str(tmp_path / "envs"), overrides={"repo": str(user_file)})
    manager = EnvManager(cfg, None, SandboxLimits())
    assert manager.plan(src).env == {"TZ": "UTC"} and manager.plan(src).install == []
    rules = EnvManager(EnvConfig(cache_dir=str(tmp_path / "envs")), None, SandboxLimits()).plan(src)
    assert rules.install and all(s.source == "rule" for s in rules.install)
    docker = get_profile("pytest").dockerfile(rules, "repo")
    assert "FROM python:" in docker and "pip install 'attrs>=21'" in docker and docker.rstrip().endswith(
        json.dumps(rules.test_command))


def test_repo_env_rows_say_why_a_repo_yields_nothing(tmp_path):
    (tmp_path / "envs").mkdir()
    (tmp_path / "envs" / "r.json").write_text(json.dumps({
        "env_key": "k1", "outcome": "failed", "failed_step": "dependencies (requirements.txt)", "log_tail": "boom",
        "seconds": 2.5, "installer": "uv", "plan": {"profile": "pytest", "install": [
            {"name": "dependencies", "origin": "requirements.txt", "source": "rule"}]}}))
    base = RepoBaselineRow(run_id="x", repo="r", runner="pytest", status="skipped", reason="env_setup_failed")
    row = repo_env_row("x", base, 0, tmp_path)
    assert (row.outcome, row.failed_step, row.log_tail, row.env_key, row.plan_source) == (
        "env_failed", "dependencies (requirements.txt)", "boom", "k1", "rule")
    assert outcome_of(base.model_copy(update={"reason": "no_passing_tests"}), 0) == "no_passing_tests"
    assert outcome_of(base.model_copy(update={"status": "ok", "reason": None}), 3) == "yielded"


def test_a_repo_whose_suite_ran_but_gave_no_task_says_why():
    ok = RepoBaselineRow(run_id="x", repo="r", runner="pytest", status="ok", tests=764, entities=38,
                         covered_entities=0, failing_tests=2)
    none = why_no_tasks(ok, [], 0)
    assert (none.reason, none.detail) == ("no_candidates", "38 entities, 0 reached by its 764 passing tests; "
                                          "2 tests fail in every run")
    cand = dict(run_id="x", repo="r", strategy="s", family="procedural", entity="a.py::f", seed=0,
                status="dropped", stage="applied")
    rows = [CandidateRow(candidate_id=str(i), reason=reason, **cand)
            for i, reason in enumerate(["no_test_breaks", "breaks_collection", "no_test_breaks"])]
    rows.append(CandidateRow(candidate_id="other", reason="no_test_breaks", **{**cand, "repo": "q"}))
    dropped = why_no_tasks(ok, rows, 0)
    assert (dropped.reason, dropped.detail) == (
        "no_valid_candidates", "3 candidates: no_test_breaks 2, breaks_collection 1; 2 tests fail in every run")
    assert why_no_tasks(ok, rows, 1) == ok  # it yielded: nothing to explain
    # a repo asking for another toolchain: the likely cause of its failing tests is said beside them
    old_ruby = ok.model_copy(update={"toolchain_mismatch": "the gemspec asks Ruby >= 3.3; 3.1.2 here"})
    assert why_no_tasks(old_ruby, rows, 0).detail.endswith(
        "2 tests fail in every run (the gemspec asks Ruby >= 3.3; 3.1.2 here)")
    skipped = ok.model_copy(update={"status": "skipped", "reason": "env_setup_failed"})
    assert why_no_tasks(skipped, [], 0) == skipped  # its own reason stands


def test_both_installers_build_and_record_the_attempt(tmp_path):
    from datagen.sandbox.isolation.select import untrusted_sandbox
    from tests.synth.buildkit import SITE

    src = _tree(tmp_path / "repo", {"tests/test_a.py": "def test_a():\n    assert True\n"})
    for installer in ("uv", "pip"):
        cfg = EnvConfig(cache_dir=str(tmp_path / installer), installer=installer, inherit_site_packages=[SITE])
        manager = EnvManager(cfg, untrusted_sandbox("auto"), SandboxLimits(timeout_s=60))
        env = manager.ensure(src)
        attempt = manager.attempt_of(src)
        assert attempt["installer"] == installer and attempt["outcome"] == "ok"
        assert [s["name"] for s in attempt["steps"]][:2] == ["venv", "inherit"]
        assert Path(env.python).exists()


def test_a_pure_python_tox_variant_gives_its_variables(tmp_path):
    """datagen builds no C extension in place, so the tox env that tests the Python
    fallback (wcwidth's ``py314-python``) is the one whose variables the plan takes."""
    tox = ("[testenv]\nsetenv = TERM=\n    TZ = UTC\ncommands = pytest tests\n"
           "[testenv:py{39,312}]\ncommands_pre = {envpython} setup.py build_ext --inplace\n"
           "[testenv:py39-python]\nsetenv = TZ = UTC\n    FASTLIB_PYTHON = 1\n"
           "[testenv:lint]\nsetenv = LINT_STRICT = 1\n")
    plan = python_plan(_tree(tmp_path, {"tox.ini": tox, "tests/test_a.py": ""}), pythons=[sys.executable])
    assert plan.env == {"TERM": "", "TZ": "UTC", "FASTLIB_PYTHON": "1"}


HYPERLINK_TOX = """[tox]
envlist =
    flake8, mypy
    test-py{26,27,34,35,36,37,38,py2,py3}
    docs

[default]
deps =
    idna==2.9
setenv =
    PY_MODULE=hyperlink

[testenv]
deps =
    {[default]deps}
    py{26,27,34,py2}: pytest==4.6.11  # rq.filter: <5
    py{35,36,37,38,39,py3}: pytest==5.2.4
    py{PY}: exactly-this-python
    !py27: not-py27
    test-py{PY}: test-factor-and-this-python
    lint: flake8-only
    git+https://example.invalid/x.git#egg=x
setenv =
    {[default]setenv}
commands =
    pytest --doctest-modules {posargs:src/{env:PY_MODULE}}
"""


def test_tox_factor_lines_apply_only_to_the_chosen_interpreter(tmp_path):
    """hyperlink's tox.ini pins pytest 4.6 for Python 2 and 5.2 for 3.5-3.9: both were
    installed, pytest 5.2 stayed and cannot start on 3.11+ (no report, no tests). Only the
    lines whose factors hold for the chosen interpreter apply; pytest itself comes from the
    test tools; the tox command's ``{posargs:src/{env:PY_MODULE}}`` is the test folder."""
    major, minor = sys.version_info[:2]
    tox = HYPERLINK_TOX.replace("{PY}", f"{major}{minor}")
    src = _tree(tmp_path, {"tox.ini": tox, "setup.py": "from setuptools import setup\nsetup(name='hyperlink')\n",
                           "src/hyperlink/__init__.py": "", "src/hyperlink/test/__init__.py": "",
                           "src/hyperlink/test/test_url.py": "def test_a():\n    pass\n"})
    plan = python_plan(src, pythons=[sys.executable], test_requirements=["pytest", "coverage"])
    tox_step = next(s for s in plan.install if s.origin == "tox.ini [testenv] deps")
    assert "idna==2.9" in tox_step.args  # the {[default]deps} reference
    assert not any(a.startswith("pytest") for a in tox_step.args)
    assert {"exactly-this-python", "not-py27", "test-factor-and-this-python"} <= set(tox_step.args)
    assert "flake8-only" not in tox_step.args
    assert plan.install[-1].args == ["pytest", "coverage"]
    assert plan.env.get("PY_MODULE") == "hyperlink"
    assert plan.test_paths == ["src/hyperlink"]


def test_a_tox_command_over_several_lines_with_posargs_defaults(tmp_path):
    """cssselect's tox.ini: a backslash-continued command whose last line is
    ``{posargs: cssselect tests docs}`` (once read as a factor condition with an unclosed
    brace, which expanded forever). The command is one line and its default paths count."""
    import threading

    tox = ("[tox]\nenvlist = pylint,py,docs\n\n[testenv]\ndeps =\n    pytest>=5.4\ncommands =\n"
           "    pytest --cov=pkg \\\n        --cov-report=xml \\\n        {posargs: pkg tests}\n")
    src = _tree(tmp_path, {"tox.ini": tox, "pkg/__init__.py": "", "tests/test_a.py": ""})
    out: list = []
    worker = threading.Thread(target=lambda: out.append(python_plan(src, pythons=[sys.executable])), daemon=True)
    worker.start()
    worker.join(timeout=60)
    assert out, "python_plan did not return"
    assert out[0].test_paths == ["pkg", "tests"]


def test_the_value_of_a_tox_pytest_option_is_not_a_test_path(tmp_path):
    """tabulate's tox command, ``pytest -v --doctest-modules --ignore benchmark {posargs}``:
    ``benchmark`` is the folder not to collect (read once as the suite's only path, so the
    suite ran no test); the command names no path, so pytest's own discovery stands."""
    tox = ("[testenv]\ndeps =\n    pytest\ncommands = pytest -v --doctest-modules --ignore benchmark {posargs}\n\n"
           "[testenv:k]\ncommands = pytest -k slow -p no:cacheprovider test\n")
    src = _tree(tmp_path, {"tox.ini": tox, "tab/__init__.py": "", "benchmark/benchmark.py": "",
                           "test/test_a.py": "def test_a():\n    pass\n"})
    assert python_plan(src, pythons=[sys.executable]).test_paths == []
    (src / "tox.ini").write_text("[testenv]\ncommands = pytest -k slow --ignore=benchmark -m 'not net' test\n")
    assert python_plan(src, pythons=[sys.executable]).test_paths == ["test"]


def test_a_tox_command_that_runs_only_documents_is_not_the_suite(tmp_path):
    """natsort 8.4.0's tox.ini: ``pytest README.rst docs/examples.rst`` (their doctests) comes
    first, the suite's ``pytest --hypothesis-profile=slow-tests ... {posargs:}`` last. The
    documents were once taken as the suite's paths (1 "test", failing); the suite is the
    repo's own discovery, with the tox deps (pytest-mock, hypothesis) installed."""
    tox = ("[testenv]\ndeps =\n    pytest\n    pytest-mock\n    hypothesis\ncommands =\n"
           "    pytest README.rst docs/examples.rst\n    pytest --doctest-modules {envsitepackagesdir}/natsort\n"
           "    pytest --hypothesis-profile=slow-tests --tb=short {posargs:}\n")
    src = _tree(tmp_path, {"tox.ini": tox, "README.rst": "Natsort\n", "docs/examples.rst": ">>> 1\n1\n",
                           "natsort/__init__.py": "", "tests/test_a.py": "def test_a():\n    pass\n"})
    plan = python_plan(src, pythons=[sys.executable])
    assert plan.test_paths == [] and plan.test_command == ["python", "-m", "pytest"]
    tox_step = next(s for s in plan.install if s.origin == "tox.ini [testenv] deps")
    assert {"pytest-mock", "hypothesis"} <= set(tox_step.args)
    (src / "tox.ini").write_text(tox.replace("README.rst docs/examples.rst", "tests/test_a.py README.rst"))
    assert python_plan(src, pythons=[sys.executable]).test_paths == ["tests/test_a.py"]


def test_tests_the_repo_marks_flaky_are_found(tmp_path):
    """zipp's big-O timing tests carry ``@pytest.mark.flaky``: one failed a replay on a busy
    machine after passing every datagen run; the baseline counts them flaky (no task uses them)."""
    from datagen.sandbox.harness.profiles.registry import get_profile

    src = _tree(tmp_path, {"tests/test_c.py": (
        "import pytest\n\n\nclass TestComplexity:\n    @pytest.mark.flaky\n    def test_implied_dirs(self):\n"
        "        pass\n\n    def test_other(self):\n        pass\n\n\n@pytest.mark.flaky(reruns=2)\n"
        "@pytest.mark.parametrize('n', [1, 2])\ndef test_timed(n):\n    pass\n\n\n@pytest.mark.flaky\n"
        "class TestAll:\n    def test_x(self):\n        pass\n\n\ndef test_plain():\n    pass\n"),
        "tests/test_broken.py": "def (:\n"})
    ids = ["tests/test_c.py::TestComplexity::test_implied_dirs", "tests/test_c.py::TestComplexity::test_other",
           "tests/test_c.py::test_timed[1]", "tests/test_c.py::test_timed[2]", "tests/test_c.py::TestAll::test_x",
           "tests/test_c.py::test_plain", "tests/test_broken.py::test_a", "tests/test_missing.py::test_b"]
    assert get_profile("pytest").marked_flaky(src, ids) == {
        "tests/test_c.py::TestComplexity::test_implied_dirs", "tests/test_c.py::test_timed[1]",
        "tests/test_c.py::test_timed[2]", "tests/test_c.py::TestAll::test_x"}
