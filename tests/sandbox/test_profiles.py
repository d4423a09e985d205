"""Ecosystem profiles without running a suite: parsers on golden reports of the real tools,
detection from the repo's files, plans (toolchain requests and mismatches), subset commands,
and the registry."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from datagen.errors import UserError
from datagen.sandbox.harness.parsers import (
    ReportError,
    parse_cargo_test,
    parse_go_json,
    parse_jest_json,
    parse_mocha_json,
    parse_tap,
)
from datagen.sandbox.harness.profiles.base import Profile, ProfileEnv, ToolchainMissing
from datagen.sandbox.harness.profiles.go import go_test_argv
from datagen.sandbox.harness.profiles.node import js_runner, satisfies
from datagen.sandbox.harness.profiles.registry import detect_profile, get_profile, profile_names, profiles
from tests import tools
from tests.conftest import write_tree

GOLDEN = Path(__file__).parent / "golden"
ROOT = "/work/golden/"
JS_EXPECTED = {
    "test/broken.test.js": "error",
    "test/calc.test.js > adds": "pass",
    "test/calc.test.js > adds wrong": "fail",
    "test/calc.test.js > group > inner > deep ok": "pass",
    "test/calc.test.js > group > shallow fail": "fail",
    "test/calc.test.js > later": "skip",
    "test/calc.test.js > skipped": "skip",
}


def test_jest_and_vitest_reports_give_the_same_ids():
    assert parse_jest_json((GOLDEN / "jest.json").read_text(), ROOT) == JS_EXPECTED
    assert parse_jest_json((GOLDEN / "vitest.json").read_text(), ROOT) == JS_EXPECTED


def test_mocha_report_ids_are_file_and_full_title():
    assert parse_mocha_json((GOLDEN / "mocha.json").read_text(), ROOT) == {
        "test/calc.spec.js > adds": "pass", "test/calc.spec.js > adds wrong": "fail",
        "test/calc.spec.js > group inner deep ok": "pass", "test/calc.spec.js > group shallow fail": "fail",
        "test/calc.spec.js > skipped": "skip"}


def test_ava_tap_titles_skips_and_todos():
    assert parse_tap((GOLDEN / "ava.tap").read_text()) == {
        "other › other ok": "pass", "other › throws": "fail", "calc › skipped": "skip", "calc › later": "skip",
        "calc › adds": "pass", "calc › adds wrong": "fail"}


def test_go_json_tests_and_subtests_by_package():
    assert parse_go_json((GOLDEN / "go_test.json").read_text()) == {
        "example.com/golden/calc::TestAdd": "pass", "example.com/golden/calc::TestAddWrong": "fail",
        "example.com/golden/calc::TestSkipped": "skip", "example.com/golden/calc::TestTable": "fail",
        "example.com/golden/calc::TestTable/one_plus_one": "pass", "example.com/golden/calc::TestTable/bad": "fail"}


def test_go_test_that_never_ended_is_an_error():
    text = '{"Action":"run","Package":"p","Test":"TestHang"}\n{"Action":"run","Package":"p","Test":"TestOk"}\n' \
           '{"Action":"pass","Package":"p","Test":"TestOk"}\n'
    assert parse_go_json(text) == {"p::TestHang": "error", "p::TestOk": "pass"}


def test_cargo_output_ids_carry_their_target():
    assert parse_cargo_test((GOLDEN / "cargo_test.txt").read_text()) == {
        "src/lib.rs::tests::adds": "pass", "src/lib.rs::tests::adds_wrong": "fail",
        "src/lib.rs::tests::nested::inner_ok": "pass", "src/lib.rs::tests::panics": "pass",
        "src/lib.rs::tests::remote": "skip", "src/lib.rs::tests::slow": "skip",
        "tests/api.rs::from_outside": "pass", "tests/api.rs::prints_then_fails": "fail"}


@pytest.mark.parametrize("parse", [parse_jest_json, parse_mocha_json, parse_tap, parse_go_json, parse_cargo_test])
def test_broken_reports_are_report_errors(parse):
    with pytest.raises(ReportError):
        parse("")


@pytest.mark.parametrize(("package", "runner"), [
    ({"scripts": {"test": "jest --coverage"}}, "jest"),
    ({"scripts": {"test": "vitest run"}, "devDependencies": {"jest": "1"}}, "vitest"),
    ({"scripts": {"test": "tsc && mocha 'test/**/*.spec.js'"}}, "mocha"),
    ({"scripts": {"test": "ava --verbose"}}, "ava"),
    ({"scripts": {"test": "node --test test/"}}, "node"),
    ({"scripts": {"test": "echo no tests"}, "devDependencies": {"mocha": "10", "ava": "6"}}, "mocha"),
    ({"scripts": {"test": "ts-mocha"}}, None),
    ({"name": "x"}, None),
])
def test_js_runner_is_read_from_package_json(tmp_path, package, runner):
    (tmp_path / "package.json").write_text(json.dumps(package))
    assert js_runner(tmp_path) == runner


def test_detection_follows_priority_then_registry_order(tmp_path):
    src = write_tree(tmp_path, {"go.mod": "module x\n\ngo 1.19\n", "a_test.go": "package x\n",
                                "scripts/tool.py": "print(1)\n"})
    assert detect_profile(src, ["go.mod", "a_test.go", "scripts/tool.py"]).name == "go"
    (src / "tests").mkdir()
    (src / "tests" / "test_tool.py").write_text("def test_x(): pass\n")
    assert detect_profile(src, ["go.mod", "a_test.go", "tests/test_tool.py"]).name == "pytest"
    assert detect_profile(tmp_path / "nothing", []) is None
    assert [p.priority for p in profiles()] == sorted(p.priority for p in profiles())


def test_python_tool_in_a_c_repos_tests_folder_is_not_a_pytest_suite(tmp_path):
    """cJSON vendors Unity's ``tests/unity/auto/*.py`` scripts: the repo is a CTest one."""
    files = {"CMakeLists.txt": "enable_testing()\nadd_test(NAME t COMMAND t)\n", "cJSON.c": "int x;\n",
             "tests/unity/auto/unity_test_summary.py": "print(1)\n"}
    src = write_tree(tmp_path, files)
    assert detect_profile(src, sorted(files)).name == "ctest"
    assert detect_profile(src, [*sorted(files), "tests/unity/auto/test_summary.py"]).name == "pytest"


def test_unittest_style_test_py_makes_a_pytest_repo(tmp_path):
    """decorator's sdist keeps its whole suite in ``tests/test.py``."""
    files = {"setup.py": "from setuptools import setup\nsetup()\n", "src/deco.py": "x = 1\n",
             "tests/test.py": "import unittest\n"}
    src = write_tree(tmp_path, files)
    assert detect_profile(src, sorted(files)).name == "pytest"


def test_go_plan_records_a_toolchain_mismatch(tmp_path):
    (tmp_path / "go.mod").write_text("module x\n\ngo 1.99\n\ntoolchain go1.99.3\n")
    plan = get_profile("go").plan(tmp_path)
    assert plan.toolchain_request == "go1.99.3"
    if plan.toolchain != "go":  # go is installed: its version cannot fit 1.99
        assert plan.toolchain_mismatch and "go1.99.3" in plan.toolchain_mismatch
    (tmp_path / "go.mod").write_text("module x\n\ngo 1.1\n")
    assert get_profile("go").plan(tmp_path).toolchain_mismatch is None


def test_node_engines_ranges():
    assert satisfies("20.1.0", ">=18") and satisfies("20.1.0", "^20.0.0") and satisfies("20.1.0", "18 || 20")
    assert satisfies("20.1.0", ">=22") is False and satisfies("20.1.0", "18.x") is False
    assert satisfies("20.1.0", ">=16 <18") is False and satisfies("20.1.0", "whatever") is None


@tools.needs("node")  # the engines check asks node for its version
def test_js_plan_installs_with_the_lock_files_manager(tmp_path):
    (tmp_path / "package.json").write_text(json.dumps({"scripts": {"test": "jest"}, "devDependencies": {"jest": "1"},
                                                       "engines": {"node": ">=99"}}))
    plan = get_profile("jest").plan(tmp_path)
    step = plan.install[0]  # the project's own lifecycle scripts off, the dependencies' rebuilt
    assert step.name == "npm install" and plan.toolchain_mismatch
    assert step.args[:2] == ["sh", "-c"] and step.args[2].startswith("npm install ")
    assert "--ignore-scripts" in step.args[2] and step.args[2].endswith("&& npm rebuild")
    (tmp_path / "yarn.lock").write_text("")
    step = get_profile("jest").plan(tmp_path).install[0]  # corepack first, else yarn from the npm registry
    assert step.name == "yarn install" and step.args[:2] == ["sh", "-c"] and "corepack yarn@1 install" in step.args[2]


def test_subset_commands_name_the_chosen_tests():
    argv = go_test_argv(["example.com/x/a::TestB/sub", "example.com/x/a::TestA", "example.com/x/c::TestC"])
    assert argv[-3:] == ["^(TestA|TestB|TestC)$", "example.com/x/a", "example.com/x/c"]
    jest = get_profile("jest").test_command(ProfileEnv("jest", get_profile("jest").plan_stub()), Path("."),
                                            ["test/a.test.js > group > adds (x)"])
    assert "--runTestsByPath" in jest and "test/a.test.js" in jest and r"^(group\ adds\ \(x\))$" in jest
    cargo = get_profile("cargo").test_command(ProfileEnv("cargo", get_profile("cargo").plan_stub()), Path("."),
                                              ["tests/api.rs::adds"])
    assert "--exact adds" in cargo[-1]


def test_registry_names_and_unknown_runner():
    assert {"pytest", "node", "jest", "vitest", "mocha", "ava", "go", "cargo"} <= set(profile_names())
    with pytest.raises(UserError, match="valid runners"):
        get_profile("nope")
    assert all(p.language and p.tools for p in profiles())


def test_a_missing_tool_is_recorded_with_its_debian_package():
    class Fake(Profile):
        name, language, tools = "fake", "fake", {"surely-not-a-tool-xyz": "fake-pkg"}

    missing = Fake().missing_tool()
    assert isinstance(missing, ToolchainMissing)
    assert missing.reason == "toolchain_missing: surely-not-a-tool-xyz (Debian package fake-pkg)"


def test_eval_scripts_are_valid_bash():
    tests = {"pytest": ["tests/t.py::test_a[x y]"], "node": ["suite > it's ok"], "jest": ["t.test.js > a"],
             "vitest": ["t.test.ts > a"], "mocha": ["t.spec.js > a b"], "ava": ["a › b"], "go": ["m/p::TestA"],
             "cargo": ["src/lib.rs::tests::a"]}
    for name, ids in tests.items():
        profile = get_profile(name)
        for script in (profile.setup_script(profile.plan_stub()), profile.eval_script(profile.plan_stub(), ids)):
            assert script.startswith("#!/bin/bash")
            assert subprocess.run(["bash", "-n"], input=script, text=True).returncode == 0, (name, script)


def test_failure_output_of_go_and_cargo_reads_the_same_in_every_run():
    from datagen.sandbox.harness.parsers import go_output
    from datagen.synth.check import stable_output

    go = go_output((GOLDEN / "go_test.json").read_text())
    assert "--- FAIL: TestAddWrong" in go and "Add(2, 2) = 4, want 5" in go
    assert stable_output(go) == stable_output(go.replace("0.011s", "0.734s").replace("(0.00s)", "(1.25s)"))
    cargo = (GOLDEN / "cargo_test.txt").read_text()
    other = cargo.replace("golden-542856034b6809b6", "golden-0123456789abcdef")
    assert stable_output(cargo) == stable_output(other.replace("(1) panicked", "(77) panicked"))


def test_coverage_run_keeps_its_tracer_alone_when_the_repo_turns_on_pytest_cov_or_xdist(tmp_path):
    from datagen.records.env import EnvPlan
    from datagen.sandbox.harness.profiles.base import ProfileEnv
    from datagen.sandbox.harness.profiles.pytest import _single_tracer

    env = ProfileEnv("pytest", EnvPlan(profile="pytest"), path=tmp_path)
    assert _single_tracer(env) == []
    site = tmp_path / "venv" / "lib" / "python3.11" / "site-packages"
    (site / "pytest_cov").mkdir(parents=True)
    assert _single_tracer(env) == ["--no-cov"]
    (site / "xdist").mkdir()
    assert _single_tracer(env) == ["--no-cov", "-n", "0"]


def test_pytest_setup_finds_the_plans_python_behind_a_pyenv_shim(tmp_path):
    """``python3.12`` on PATH can be a pyenv shim that refuses to run (that version is not
    selected): the setup script then takes pyenv's own install of it, not the shim."""
    import os
    import sys

    from datagen.records.env import EnvPlan

    bin_dir, root = tmp_path / "bin", tmp_path / "pyenv"
    (root / "versions" / "3.12.9" / "bin").mkdir(parents=True)
    bin_dir.mkdir()
    real = root / "versions" / "3.12.9" / "bin" / "python3.12"
    real.symlink_to(sys.executable)
    shim = bin_dir / "python3.12"
    shim.write_text("#!/bin/sh\necho 'pyenv: python3.12: command not found' >&2\nexit 127\n")
    pyenv = bin_dir / "pyenv"
    pyenv.write_text(f"#!/bin/sh\ncase \"$1\" in root) echo {root};; versions) echo 3.12.9;; esac\n")
    for f in (shim, pyenv):
        f.chmod(0o755)
    lines = get_profile("pytest").setup_commands(EnvPlan(profile="pytest", toolchain="python3.12"))
    head = "\n".join(lines[:lines.index(next(x for x in lines if x.startswith("if command -v uv")))])
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(tmp_path)}
    out = subprocess.run(["bash", "-c", head + '\necho "$PY"'], capture_output=True, text=True, env=env)
    assert out.stdout.strip() == str(real), out.stderr
    given = subprocess.run(["bash", "-c", head + '\necho "$PY"'], capture_output=True, text=True,
                           env={**env, "PYTHON": "/opt/mine/python"})
    assert given.stdout.strip() == "/opt/mine/python"  # $PYTHON wins
    os.unlink(pyenv)
    fallback = subprocess.run(["bash", "-c", head + '\necho "$PY"'], capture_output=True, text=True, env=env)
    assert fallback.stdout.strip().endswith("python3")  # no pyenv: python3 from PATH


MANY_TESTS = '''import os

import pytest


@pytest.mark.parametrize("i", range(75), ids=lambda i: f"case-{i:05d}-" + "x" * 70)
def test_value(i):
    assert i != int(os.environ.get("BREAK", "-1"))
'''


@pytest.mark.slow
def test_a_pytest_eval_script_with_more_ids_than_one_command_line_holds(tmp_path, monkeypatch):
    """packaging's 64 000 node ids made a 6 MB command line ("Argument list too long"): the
    eval script runs them in parts, and still exits 0 only when every one passed. (The
    budget is made small here: 30 000 real ids take pytest minutes to match; three parts
    prove the cut as well as twelve, each part being a pytest start.)"""
    import os
    import sys

    from datagen.sandbox.harness.profiles import pytest as pytest_profile

    write_tree(tmp_path, {"tests/test_many.py": MANY_TESTS})
    ids = [f"tests/test_many.py::test_value[case-{i:05d}-{'x' * 70}]" for i in range(75)]
    monkeypatch.setattr(pytest_profile, "EVAL_ARGS_BYTES", 3000)
    profile = get_profile("pytest")
    script = profile.eval_script(profile.plan_stub(), ids)
    runs = len([line for line in script.splitlines() if line.startswith("tries ")])
    assert runs == 3  # 75 quoted ids of 116 bytes, 25 a part
    assert max(len(line) for line in script.splitlines()) < 3200
    # this venv's plugins (xdist, hypothesis, ...) take seconds to load at each pytest start,
    # and the script names none
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
           "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    env.pop("PYTEST_ADDOPTS", None)
    (tmp_path / "eval.sh").write_text(script)
    ok = subprocess.run(["bash", "eval.sh"], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert ok.returncode == 0, ok.stdout[-2000:] + ok.stderr[-2000:]
    assert ok.stdout.count("25 passed") == runs  # every id ran, each once
    broken = subprocess.run(["bash", "eval.sh"], cwd=tmp_path, capture_output=True, text=True,
                            env={**env, "BREAK": "37"})  # one id in the middle part
    # the failed id ran 3 times (2 reruns of its part's failures), the other parts' ids once
    assert broken.returncode == 1 and broken.stdout.count("1 failed") == 3 and broken.stdout.count("24 passed") == 1


def test_pytest_eval_script_runs_ids_in_the_suites_testpaths_order(tmp_path):
    """semver (``testpaths = tests docs``): its docs doctests use names a ``tests/`` autouse
    fixture puts into the session's ``doctest_namespace``; sorted by name, ``docs/`` ran
    first and every doctest failed outside datagen."""
    import os
    import sys

    from datagen.records.env import EnvPlan

    write_tree(tmp_path, {
        "pytest.ini": "[pytest]\ntestpaths = tests docs\naddopts = --doctest-glob=*.rst\n",
        "tests/conftest.py": "import pytest\n\n\n@pytest.fixture(autouse=True)\ndef add(doctest_namespace):\n"
                             "    doctest_namespace['answer'] = 42\n",
        "tests/test_a.py": "def test_a():\n    pass\n",
        "docs/use.rst": ">>> answer\n42\n"})
    ids = ["docs/use.rst::use.rst", "tests/test_a.py::test_a"]
    plan = EnvPlan(profile="pytest", test_paths=["tests", "docs"])
    script = get_profile("pytest").eval_script(plan, ids)
    assert script.index("tests/test_a.py") < script.index("docs/use.rst")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    env.pop("PYTEST_ADDOPTS", None)
    (tmp_path / "eval.sh").write_text(script)
    run = subprocess.run(["bash", "eval.sh"], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stdout[-2000:]
