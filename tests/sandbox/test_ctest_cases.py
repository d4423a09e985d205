"""C/C++ suites graded by the cases their executables report (``parsers.case_lines``).

The golden report is a real ``ctest --output-junit`` run of the sample executables in
``golden/sources/ctest_cases/`` (Unity-style, GoogleTest-style, TAP and plain ``[pass]``
check lines, written for datagen); the eval scripts' awk check must read it exactly as the
parser does. The last test validates and replays a task whose executable holds several
cases: FAIL_TO_PASS names the broken case, PASS_TO_PASS its siblings in the same executable."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from datagen.sandbox.harness.parsers import case_lines, parse_ctest_junit
from datagen.sandbox.harness.profiles._replay import CTEST_CASES_AWK
from datagen.sandbox.harness.profiles.cmake import ctest_argv, ctest_names
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
    ("[ RUN      ] A.b\n[  FAILED  ] A.b\n", {"A.b": "error"}),  # gtest's summary line has no time
    ("not ok 1 - a # TODO later\nok 2 b\n", {"a": "skip", "b": "pass"}),
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
    assert results == ({f"exe::{k}": v for k, v in expected.items()} or {"exe": "pass"})
    passing = [t for t, v in results.items() if v == "pass"]
    others = sorted(t for t, v in results.items() if v != "pass")
    assert _awk(text, passing) == (0, [])
    assert _awk(text, [*passing, *others]) == (1 if others else 0, others)


def _awk(text: str, ids: list[str]) -> tuple[int, list[str]]:
    proc = subprocess.run(["awk", CTEST_CASES_AWK], input=text, capture_output=True, text=True,
                          env={**os.environ, "IDS": "\n".join(ids)})
    return proc.returncode, sorted(m.strip() for m in proc.stdout.split("NOT PASSED: ")[1:])


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
    from datagen.sandbox.harness.profiles._replay import MAKE_CASES_AWK
    from datagen.sandbox.harness.profiles.make import parse_make_tsv

    text = "tests/other\terror\ntests/exe\tpass\n" + "".join(f"\t{line}\n" for line in output.splitlines())
    results = parse_make_tsv(text)
    assert results == {"tests/other": "error", **({f"tests/exe::{k}": v for k, v in expected.items()}
                                                  or {"tests/exe": "pass"})}
    passing = [t for t, v in results.items() if v == "pass"]
    others = sorted(t for t, v in results.items() if v != "pass")
    proc = subprocess.run(["awk", MAKE_CASES_AWK], input=text, capture_output=True, text=True,
                          env={**os.environ, "IDS": "\n".join([*passing, *others])})
    assert sorted(m.strip() for m in proc.stdout.split("NOT PASSED: ")[1:]) == others and proc.returncode == 1


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
