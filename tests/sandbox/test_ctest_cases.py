"""C/C++ suites graded by the cases their executables report (``parsers.case_lines``).

The golden report is a real ``ctest --output-junit`` run of the sample executables in
``golden/sources/ctest_cases/`` (Unity-style, GoogleTest-style, TAP and plain ``[pass]``
check lines, written for datagen); the eval scripts' awk check must read it exactly as the
parser does. The last test validates and replays a task whose executable holds several
cases: FAIL_TO_PASS names the broken case, PASS_TO_PASS its siblings in the same executable."""

from __future__ import annotations

from pathlib import Path

import pytest

from datagen.sandbox.harness.checks import awk_program
from datagen.sandbox.harness.parsers import case_lines, parse_ctest_junit
from datagen.sandbox.harness.profiles.cmake import (
    CMakeProfile,
    configure_options,
    ctest_argv,
    ctest_names,
    plan_options,
)
from tests.sandbox.checkrun import run_awk
from tests.sandbox.test_profiles_replay_more import _write, needs, replay_validated

GOLDEN = Path(__file__).parent / "golden"
CASES = {
    "unit_style::adds_small_numbers": "pass", "unit_style::adds_negative_numbers": "fail",
    "unit_style::adds_large_numbers": "skip", "unit_style::subtracts": "pass",
    "gtest_style::Vec.Adds": "pass", "gtest_style::Vec.Scales": "fail",
    "gtest_style::Param/Vec.Norm/0": "pass", "gtest_style::Vec.Later": "skip",
    # aborted inside its third case: that case is an error, the fourth never reported
    "gtest_crash::Vec.Adds": "pass", "gtest_crash::Vec.Scales": "fail", "gtest_crash::Param/Vec.Norm/0": "error",
    # a repeated check name is numbered; the [expected][found] values are not part of a name
    "checks::Element test": "pass", "checks::Element test (2)": "fail", 'checks::Reads <b> & "q"': "pass",
    "tap::parses empty input": "pass", "tap::parses nested input": "fail", "tap::reads files": "skip",
    # every case passed and the executable failed: its own name is a failed test too
    "leaks::Element test": "pass", "leaks": "fail",
}
WHOLE = {  # executables that report no cases keep one id each (golden/ctest_junit.xml)
    "math.adds": "pass", "math.adds_wrong": "fail", "math.crashes": "fail", "math.skipped": "skip",
    "math.disabled": "skip", "math.missing_exe": "error", "math.slow": "fail",
}


def test_cases_of_each_executable_are_tests():
    assert parse_ctest_junit((GOLDEN / "ctest_cases_junit.xml").read_text()) == CASES
    assert parse_ctest_junit((GOLDEN / "ctest_junit.xml").read_text()) == WHOLE


LINE_SHAPES = [
    ("", {}),
    ("ok\nall good\n", {}),
    ("t.c:9:test_a:PASS\nt.c:10:test_b:FAIL:Expected 1 Was 2\n", {"test_a": "pass", "test_b": "fail"}),
    ("t.c:9:test_a:PASSED\n", {}),  # not Unity's word
    ("[pass] x [1][1]\n[PASS] x [1][1]\n[fail] y\n", {"x": "pass", "x (2)": "pass", "y": "fail"}),
    ("[pass] read.  [a <b> & c][a <b> & c]\n", {"read.": "pass"}),  # xmltest's name ends in a space
    # an end line without the time (print_time off) ends the case that runs; gtest's summary
    # line (no time, the case long ended) is no second result
    ("[ RUN      ] A.b\n[  FAILED  ] A.b\n", {"A.b": "fail"}),
    ("[ RUN      ] A.b\n[  FAILED  ] A.b (1 ms)\n[  FAILED  ] A.b\n", {"A.b": "fail"}),
    ("[ RUN      ] A.b\n[       OK ] A.b\n[ RUN      ] A.c\n[  SKIPPED ] A.c\n", {"A.b": "pass", "A.c": "skip"}),
    # the end line after text the case printed without a newline
    ("[ RUN      ] A.b\nsaid hi[       OK ] A.b (0 ms)\n", {"A.b": "pass"}),
    ("[ RUN      ] A.b\n[ RUN      ] A.c\n", {"A.b": "error", "A.c": "error"}),  # died in it (the exe failed)
    ("not ok 1 - a # TODO later\nok 2 b\n", {"a": "skip", "b": "pass"}),
    # jsontest: "Testing <name>: " before the case runs, its status after; one cut off is an error
    ("Testing A/b: OK\nTesting A/c: FAILED\nTesting A/d: ", {"A/b": "pass", "A/c": "fail", "A/d": "error"}),
    ("Testing A/b: OK\nTesting A/c: it printed\nOK\nTesting a: b: OK\n",
     {"A/b": "pass", "A/c": "error", "a: b": "pass"}),
    ("Testing ports: 3 found\n", {}),  # no end line anywhere: not jsontest's output
]


@pytest.mark.parametrize(("output", "expected"), LINE_SHAPES)
def test_case_lines(output, expected):
    assert case_lines(output) == expected


@pytest.mark.parametrize(("output", "expected"), LINE_SHAPES)
def test_eval_check_reads_each_line_shape_as_the_parser(output, expected):
    """Each shape in a one-test report ctest's way (escaped, the first line on the tag's)."""
    from xml.sax.saxutils import escape

    text = ('<?xml version="1.0" encoding="UTF-8"?>\n<testsuite name="x" tests="1">\n'
            '\t<testcase name="exe" classname="exe" time="0" status="run">\n'
            f'\t\t<system-out>{escape(output)}</system-out>\n\t</testcase>\n</testsuite>\n')
    results = parse_ctest_junit(text)
    # the executable passed: a case it started and never ended is no case (its end line was lost)
    shown = case_lines(output, passed=True)
    assert shown == {k: v for k, v in expected.items() if v != "error"}
    assert results == ({f"exe::{k}": v for k, v in shown.items()} or {"exe": "pass"})
    passing = [t for t, v in results.items() if v == "pass"]
    others = sorted(t for t, v in results.items() if v != "pass")
    assert _awk(text, passing) == (0, [])
    assert _awk(text, [*passing, *others]) == (1 if others else 0, others)


def _awk(text: str, ids: list[str]) -> tuple[int, list[str]]:
    rc, missed = run_awk(awk_program("ctest_cases"), text, IDS=ids)
    return rc, sorted(missed)


@pytest.mark.parametrize(("report", "expected"), [("ctest_cases_junit.xml", CASES), ("ctest_junit.xml", WHOLE)])
def test_eval_check_agrees_with_the_parser(report, expected):
    text = (GOLDEN / report).read_text()
    passing = [t for t, s in expected.items() if s == "pass"]
    assert _awk(text, passing) == (0, [])
    others = sorted([t for t, s in expected.items() if s != "pass"] + ["unit_style", "no_such::case"])
    assert _awk(text, [*passing, *others]) == (1, others)


def test_a_case_id_runs_its_executable():
    assert ctest_names(["unit::a", "unit::b", "other"]) == ["other", "unit", "unit::a", "unit::b"]
    argv = ctest_argv("r.xml", ["unit::a"])
    assert argv[-2:] == ["-R", "^(unit|unit::a)$"] and "--test-output-size-passed" in argv


CASES_FIXTURE = {
    "CMakeLists.txt": "cmake_minimum_required(VERSION 3.16)\nproject(rangex LANGUAGES C)\nenable_testing()\n"
                      "add_library(rangex range.c)\nadd_executable(test_range tests/test_range.c)\n"
                      "target_link_libraries(test_range rangex)\nadd_test(NAME test_range COMMAND test_range)\n",
    "range.h": "int clamp(int v, int lo, int hi);\nint span(int lo, int hi);\n",
    "range.c": "#include \"range.h\"\nint clamp(int v, int lo, int hi) {\n    if (v < lo) return lo;\n"
               "    if (v > hi) return hi;\n    return v;\n}\nint span(int lo, int hi) {\n    return hi - lo;\n}\n",
    # one executable, four cases, each reported as file:line:name:PASS|FAIL
    "tests/test_range.c": "#include <stdio.h>\n#include \"../range.h\"\nstatic int failed;\n"
                          "#define CASE(name, cond) do { int ok_ = (cond); failed += !ok_; printf(\"%s:%d:%s:%s\\n\", "
                          "__FILE__, __LINE__, #name, ok_ ? \"PASS\" : \"FAIL\"); } while (0)\n"
                          "int main(void) {\n    CASE(clamps_low, clamp(-5, 0, 9) == 0);\n"
                          "    CASE(clamps_high, clamp(12, 0, 9) == 9);\n    CASE(keeps_middle, clamp(4, 0, 9) == 4);\n"
                          "    CASE(measures_span, span(2, 7) == 5);\n    return failed != 0;\n}\n",
}


@pytest.mark.slow
@needs("cmake", "ctest", "cc", "make")
def test_a_task_is_judged_by_the_cases_of_one_executable(tmp_path):
    src = _write(tmp_path / "fixture" / "rangex", CASES_FIXTURE)
    bug = ("range.c", "if (v > hi) return hi;", "if (v >= hi) return v;")
    task = replay_validated(tmp_path, "ctest", src, bug, {"test_range::clamps_high"})
    assert task.FAIL_TO_PASS == ["test_range::clamps_high"]
    assert set(task.PASS_TO_PASS) == {"test_range::clamps_low", "test_range::keeps_middle",
                                      "test_range::measures_span"}


@pytest.mark.parametrize(("output", "expected"), LINE_SHAPES)
def test_make_report_and_its_check_read_each_line_shape(output, expected):
    """The make profile's report: ``id<TAB>status`` and the executable's output lines, a TAB
    before each; its eval check reads it as its parser does."""
    from datagen.sandbox.harness.profiles.make import parse_make_tsv

    text = "tests/other\terror\ntests/exe\tpass\n" + "".join(f"\t{line}\n" for line in output.splitlines())
    results = parse_make_tsv(text)
    shown = case_lines(output, passed=True)  # the executable passed: no case it never ended
    assert results == {"tests/other": "error", **({f"tests/exe::{k}": v for k, v in shown.items()}
                                                  or {"tests/exe": "pass"})}
    passing = [t for t, v in results.items() if v == "pass"]
    others = sorted(t for t, v in results.items() if v != "pass")
    rc, missed = run_awk(awk_program("make_cases"), text, IDS=[*passing, *others])
    assert sorted(missed) == others and rc == 1


MAKE_CASES_FIXTURE = {
    "Makefile": "CC ?= cc\ntests/test_range: tests/test_range.c range.c\n\t$(CC) -o $@ $^\n\n"
                "check: tests/test_range\n\t./tests/test_range\n.PHONY: check\n",
    "range.h": CASES_FIXTURE["range.h"], "range.c": CASES_FIXTURE["range.c"],
    "tests/test_range.c": CASES_FIXTURE["tests/test_range.c"],
}


@pytest.mark.slow
@needs("make", "cc")
def test_a_make_task_is_judged_by_the_cases_of_one_executable(tmp_path):
    src = _write(tmp_path / "fixture" / "rangex", MAKE_CASES_FIXTURE)
    bug = ("range.c", "    return hi - lo;", "    return lo - hi;")
    task = replay_validated(tmp_path, "make", src, bug, {"tests/test_range::measures_span"})
    assert task.FAIL_TO_PASS == ["tests/test_range::measures_span"]
    assert set(task.PASS_TO_PASS) == {"tests/test_range::clamps_low", "tests/test_range::clamps_high",
                                      "tests/test_range::keeps_middle"}


OPTIONS = [  # (top CMakeLists.txt, the -D flags a user who wants the tests would pass)
    ('option(FOO_BUILD_TESTS "Build tests" OFF)\noption(FOO_BUILD_DOCS "Docs (Doxygen)" ON)\n'
     'option(FOO_BUILD_FUZZERS "Fuzzers" OFF)\noption(FOO_INSTALL_TESTS "Install them" OFF)\n',
     ["-DFOO_BUILD_TESTS=ON", "-DFOO_BUILD_DOCS=OFF"]),
    ('option(BAR_WITH_TESTS "Compile the tests" ON)\n'
     'option(BAR_WITH_POST_BUILD_UNITTEST "Run the unit tests as a post build step" ON)\n',
     ["-DBAR_WITH_POST_BUILD_UNITTEST=OFF"]),
    ('option(BAZ_TESTS "tests")\noption(BAZ_ENABLE_TESTING\n  "multi-line" ${DEFAULT})\n'
     '# option(OLD_BUILD_TESTS "commented out" OFF)\noption(BAZ_DISABLE_TESTS "" OFF)\n',
     ["-DBAZ_TESTS=ON", "-DBAZ_ENABLE_TESTING=ON"]),
    ('include(CTest)\nif(BUILD_TESTING)\n  add_subdirectory(tests)\nendif()\n', ["-DBUILD_TESTING=ON"]),
    ('option(BUILD_TESTING "tests" OFF)\n', ["-DBUILD_TESTING=ON"]),
    ('enable_testing()\nadd_test(NAME t COMMAND t)\n', []),
    # a negative option: OFF by default keeps the tests; ON by default must be turned off
    ('option(QUX_WITHOUT_TESTS "Don\'t build tests" OFF)\noption(QUX_DISABLE_UNIT_TESTS "" ON)\n',
     ["-DQUX_DISABLE_UNIT_TESTS=OFF"]),
    # cmake_dependent_option: the default holds in a top-level build
    ('cmake_dependent_option(QUUX_BUILD_TESTS\n  "Build tests" OFF\n  "CMAKE_SOURCE_DIR STREQUAL PROJECT_SOURCE_DIR" OFF)\n'
     'cmake_dependent_option(QUUX_STATIC_CRT "static CRT" OFF "MSVC" OFF)\n', ["-DQUUX_BUILD_TESTS=ON"]),
]


@pytest.mark.parametrize(("text", "flags"), OPTIONS)
def test_configure_options_build_the_tests_and_do_not_run_them_at_build_time(text, flags):
    assert [flag for flag, _ in configure_options(text)] == flags


def test_the_plan_carries_the_options_to_every_run_and_both_scripts(tmp_path):
    (tmp_path / "CMakeLists.txt").write_text(OPTIONS[1][0] + OPTIONS[0][0] + "enable_testing()\n")
    profile = CMakeProfile()
    plan = profile.plan(tmp_path)
    flags = ["-DBAR_WITH_POST_BUILD_UNITTEST=OFF", "-DFOO_BUILD_TESTS=ON", "-DFOO_BUILD_DOCS=OFF"]
    assert plan_options(plan) == flags
    assert any("FOO_BUILD_TESTS=ON" in n and "builds the tests" in n for n in plan.notes)
    for script in (profile.setup_script(plan), profile.eval_script(plan, ["t::a"])):
        assert all(flag in script for flag in flags)
    # a plan a user edited configures the way it says
    edited = plan.model_copy(deep=True)
    edited.install[0].args[2] = edited.install[0].args[2].replace("-DFOO_BUILD_DOCS=OFF", "-DFOO_X=1")
    assert plan_options(edited) == [*flags[:2], "-DFOO_X=1"]


# An option gates the test executable (off by default), another runs it after every build
# (on by default: a failing case would fail the build), a third wants Doxygen; the executable
# reports its cases jsontest's way.
GATED_FIXTURE = {
    "CMakeLists.txt": "cmake_minimum_required(VERSION 3.16)\nproject(ringx LANGUAGES CXX)\n"
                      'option(RINGX_BUILD_TESTS "Build the unit tests" OFF)\n'
                      'option(RINGX_WITH_POST_BUILD_UNITTEST "Run the unit tests after building them" ON)\n'
                      'option(RINGX_BUILD_DOCS "API documentation (needs Doxygen)" ON)\n'
                      "add_library(ringx ring.cpp)\n"
                      "if(RINGX_BUILD_DOCS)\n  find_package(Doxygen REQUIRED)\nendif()\n"
                      "if(RINGX_BUILD_TESTS)\n  enable_testing()\n  add_executable(ring_test tests/ring_test.cpp)\n"
                      "  target_link_libraries(ring_test ringx)\n  add_test(NAME ring_test COMMAND ring_test)\n"
                      "  if(RINGX_WITH_POST_BUILD_UNITTEST)\n"
                      "    add_custom_command(TARGET ring_test POST_BUILD COMMAND ring_test)\n  endif()\nendif()\n",
    "ring.hpp": "int wrap(int i, int n);\nint next_slot(int i, int n);\n",
    "ring.cpp": "#include \"ring.hpp\"\nint wrap(int i, int n) {\n    int r = i % n;\n"
                "    return r < 0 ? r + n : r;\n}\nint next_slot(int i, int n) {\n    return wrap(i + 1, n);\n}\n",
    "tests/ring_test.cpp": "#include <cstdio>\n#include \"../ring.hpp\"\nstatic int failed;\n"
                           "static void check(const char* name, bool ok) {\n"
                           "    std::printf(\"Testing %s: \", name);\n    std::fflush(stdout);\n"
                           "    std::printf(\"%s\\n\", ok ? \"OK\" : \"FAILED\");\n    failed += !ok;\n}\n"
                           "int main() {\n    check(\"Ring/wrapsPositive\", wrap(7, 5) == 2);\n"
                           "    check(\"Ring/wrapsNegative\", wrap(-1, 5) == 4);\n"
                           "    check(\"Ring/nextSlotWraps\", next_slot(4, 5) == 0);\n    return failed != 0;\n}\n",
}


@pytest.mark.slow
@needs("cmake", "ctest", "c++", "make")
def test_a_task_of_an_option_gated_suite_replays_configured_as_validated(tmp_path):
    src = _write(tmp_path / "fixture" / "ringx", GATED_FIXTURE)
    bug = ("ring.cpp", "return r < 0 ? r + n : r;", "return r;")
    task = replay_validated(tmp_path, "ctest", src, bug, {"ring_test::Ring/wrapsNegative"})
    assert task.FAIL_TO_PASS == ["ring_test::Ring/wrapsNegative"]
    assert set(task.PASS_TO_PASS) == {"ring_test::Ring/wrapsPositive", "ring_test::Ring/nextSlotWraps"}
    for script in (task.setup_script, task.eval_script):
        assert "-DRINGX_BUILD_TESTS=ON" in script and "-DRINGX_WITH_POST_BUILD_UNITTEST=OFF" in script


@pytest.mark.parametrize(("path", "test"), [
    ("src/test_lib_json/jsontest.h", True), ("unit-tests/check.c", True), ("test/FourSuite.cpp", True),
    ("src/lib_json/json_reader.cpp", False), ("src/jsontestrunner/main.cpp", False), ("latest/x.c", False),
])
def test_a_folder_named_by_a_test_word_holds_test_code(path, test):
    assert CMakeProfile().is_test_file(path) is test


def test_the_tests_find_package_libraries_are_named_and_installed_in_the_image(tmp_path):
    (tmp_path / "CMakeLists.txt").write_text("enable_testing()\nfind_package(GTest 1.8.0 REQUIRED)\n"
                                             "# find_package(Boost)\nadd_subdirectory(runner)\n")
    (tmp_path / "runner").mkdir()
    (tmp_path / "runner" / "CMakeLists.txt").write_text("find_package(Python3 COMPONENTS Interpreter)\n"
                                                        "find_package(PythonInterp 3)\nfind_package(Nothing)\n")
    profile = CMakeProfile()
    plan = profile.plan(tmp_path)
    assert [n for n in plan.notes if n.startswith("Debian")] == [
        "Debian packages: libgtest-dev (find_package(GTest) in CMakeLists.txt); "
        "python3 (find_package(Python3) in runner/CMakeLists.txt)"]
    (line,) = profile.image_tools(plan)
    assert "install -y --no-install-recommends cmake libgtest-dev python3 &&" in line
