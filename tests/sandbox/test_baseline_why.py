"""A baseline that yields nothing says why, in the runner's own words, for every profile.

Each case is a tiny repo whose suite cannot load something it needs (a module, a gem, a
header, a function); its baseline runs for real in the sandbox with the profile's own
tool, and ``repo_baselines.detail`` must name the missing thing (not just "no report
written" or "1 failing"). A case skips where its toolchain is missing."""

from __future__ import annotations

import shutil

import pytest

from datagen.config.sandbox import EnvConfig, SandboxLimits
from datagen.errors import SkipItem
from datagen.sandbox.harness.parsers import runner_words
from datagen.sandbox.harness.profiles.registry import get_profile
from datagen.sandbox.harness.runners import ensure_env
from datagen.sandbox.isolation.select import bwrap_works, untrusted_sandbox
from datagen.synth.baseline import SuiteRunner, measure_baseline
from tests.conftest import write_tree
from tests.sitekit import SITE

MISSING = "zz_helper_nowhere"

CASES: dict[str, dict[str, str]] = {
    "pytest": {
        "calc.py": "def add(a, b):\n    return a + b\n",
        "tests/test_calc.py": f"import {MISSING}\nfrom calc import add\n\n\n"
                              "def test_add():\n    assert add(2, 3) == 5\n",
    },
    "node": {
        "package.json": '{"name": "calc", "version": "1.0.0", "scripts": {"test": "node --test"}}\n',
        "lib.js": "exports.add = (a, b) => a + b;\n",
        "test/lib.test.js": f"const test = require('node:test');\nrequire('{MISSING}');\n"
                            "test('adds', () => {});\n",
    },
    "go": {
        "go.mod": "module example.com/calc\n\ngo 1.19\n",
        "calc/calc.go": "package calc\n\nfunc Add(a, b int) int { return a + b }\n",
        "calc/calc_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n"
                             f"\tif Add(2, 3) != {MISSING}() {{\n\t\tt.Fatal(\"add\")\n\t}}\n}}\n",
    },
    "cargo": {
        "Cargo.toml": "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n",
        "src/lib.rs": "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n",
        "tests/api.rs": f"#[test]\nfn adds() {{\n    assert_eq!(calc::add(2, 3), calc::{MISSING}());\n}}\n",
    },
    "rspec": {
        "lib/calc.rb": "module Calc\n  def self.add(a, b) = a + b\nend\n",
        "spec/calc_spec.rb": f"require \"{MISSING}\"\nrequire_relative \"../lib/calc\"\n\n"
                             "RSpec.describe Calc do\n  it \"adds\" do\n    expect(Calc.add(2, 3)).to eq(5)\n"
                             "  end\nend\n",
    },
    "minitest": {
        "lib/calc.rb": "module Calc\n  def self.add(a, b) = a + b\nend\n",
        "test/calc_test.rb": f"require \"minitest/autorun\"\nrequire \"{MISSING}\"\nrequire \"calc\"\n\n"
                             "class CalcTest < Minitest::Test\n  def test_add\n    assert_equal 5, Calc.add(2, 3)\n"
                             "  end\nend\n",
    },
    "phpunit": {
        "phpunit.xml": '<?xml version="1.0"?>\n<phpunit>\n  <testsuites>\n'
                       '    <testsuite name="all"><directory>tests</directory></testsuite>\n  </testsuites>\n'
                       '</phpunit>\n',
        "src/Calc.php": "<?php\nfunction add(int $a, int $b): int { return $a + $b; }\n",
        "tests/CalcTest.php": f"<?php\nrequire __DIR__ . '/../src/{MISSING}.php';\n\n"
                              "use PHPUnit\\Framework\\TestCase;\n\nfinal class CalcTest extends TestCase\n{\n"
                              "    public function testAdd(): void { $this->assertSame(5, add(2, 3)); }\n}\n",
    },
    "ctest": {
        "CMakeLists.txt": "cmake_minimum_required(VERSION 3.16)\nproject(calc LANGUAGES C)\nenable_testing()\n"
                          "add_executable(t t.c)\nadd_test(NAME calc.add COMMAND t)\n",
        "t.c": f"#include \"{MISSING}.h\"\nint main(void) {{ return 0; }}\n",
    },
    # a find_package whose library is not installed (FindGTest's way): CMake's own words name it
    "ctest_find_package": {
        "CMakeLists.txt": "cmake_minimum_required(VERSION 3.16)\nproject(calc LANGUAGES C)\n"
                          "list(APPEND CMAKE_MODULE_PATH ${CMAKE_CURRENT_SOURCE_DIR}/cmake)\n"
                          f"option(CALC_BUILD_TESTS \"tests\" OFF)\nif(CALC_BUILD_TESTS)\n  enable_testing()\n"
                          f"  find_package({MISSING} 1.8 REQUIRED)\n  add_executable(t t.c)\n"
                          "  add_test(NAME calc.add COMMAND t)\nendif()\n",
        f"cmake/Find{MISSING}.cmake": f"find_library({MISSING.upper()}_LIBRARY NAMES {MISSING})\n"
                                      "include(FindPackageHandleStandardArgs)\n"
                                      f"find_package_handle_standard_args({MISSING} "
                                      f"REQUIRED_VARS {MISSING.upper()}_LIBRARY)\n",
        "t.c": "int main(void) { return 0; }\n",
    },
    "make": {
        "Makefile": "CC ?= cc\ntests/%: tests/%.c\n\t$(CC) -o $@ $^\n\ncheck: tests/test_add\n\t./tests/test_add\n"
                    ".PHONY: check\n",
        "tests/test_add.c": f"#include \"{MISSING}.h\"\nint main(void) {{ return 0; }}\n",
    },
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_baseline_that_yields_nothing_says_why_in_the_runners_words(tmp_path, case):
    runner = case.partition("_")[0]  # the profile; "ctest_find_package" is a second ctest case
    ok, reason = bwrap_works()
    if not ok:
        pytest.skip(f"bwrap unavailable: {reason}")
    profile = get_profile(runner)
    if (missing := profile.missing_tool()) is not None:
        pytest.skip(missing.reason)
    if runner == "ctest" and shutil.which("cc") is None:
        pytest.skip("no C compiler")
    src = write_tree(tmp_path / "src", CASES[case])
    assert profile.detect(src, [p.relative_to(src).as_posix() for p in src.rglob("*") if p.is_file()])
    sandbox, limits = untrusted_sandbox("auto"), SandboxLimits(timeout_s=180, processes=256)
    try:
        env = ensure_env(profile, src, EnvConfig(cache_dir=str(tmp_path / "envs"), inherit_site_packages=[SITE]),
                         sandbox, limits)
    except SkipItem as exc:  # a project that does not build fails at its env step (CMake): so the build says
        reason, detail = exc.reason, str(exc)
    else:
        (tmp_path / "scratch").mkdir()
        base = measure_baseline(SuiteRunner(runner, src, sandbox, limits, env, tmp_path / "scratch"), 1, False)
        reason, detail = base.reason, base.detail
        assert str(tmp_path / "scratch") not in detail  # no path of a random working copy
    assert reason in ("no_tests", "no_passing_tests", "env_setup_failed"), (reason, detail)
    assert MISSING in detail, detail
    if case == "ctest_find_package":  # the option that builds the tests was on, and CMake's message is kept
        assert f"Could NOT find {MISSING} (missing: {MISSING.upper()}_LIBRARY)" in detail, detail


def test_runner_words_keep_the_error_and_the_last_lines_not_the_stack():
    vite = ("\x1b[31mfailed to load config from ./vitest.config.js\x1b[39m\n\n"
            "Error: ENOENT: no such file or directory, mkdir './node_modules/.vite-temp'\n"
            "    at async Object.mkdir (node:internal/fs/promises:856:10)\n"
            "    at async loadConfigFromBundledFile (file:///x/config.js:35900:4) {\n"
            "  errno: -2,\n  code: 'ENOENT',\n  syscall: 'mkdir',\n  path: './node_modules/.vite-temp'\n}\n\n")
    words = runner_words(vite)
    assert words.startswith("failed to load config from ./vitest.config.js | Error: ENOENT: no such file")
    assert "last lines: errno: -2, | code: 'ENOENT', | syscall: 'mkdir', | path: './node_modules/.vite-temp'" in words
    assert "at async" not in words and not words.endswith("}")
    collection = ("==================================== ERRORS ====================================\n"
                  "_____________________ ERROR collecting tests/test_sort.py ______________________\n"
                  "tests/test_sort.py:3: in <module>\n    import pytest_mock\n"
                  "E   ModuleNotFoundError: No module named 'pytest_mock'\n"
                  "=========================== short test summary info ============================\n"
                  "ERROR tests/test_sort.py\n"
                  "!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!\n"
                  "=============================== 1 error in 0.12s ===============================\n")
    words = runner_words(collection)
    assert "E   ModuleNotFoundError: No module named 'pytest_mock'" in words
    assert words.index("ERROR collecting tests/test_sort.py") < words.index("last lines:")
    assert runner_words("") == "" and runner_words("}\n\n----\n") == ""
    assert len(runner_words("Error: x\n" * 5 + "y" * 5000)) <= 1500
