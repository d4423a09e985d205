"""Statements: the leak check, the template, and coverage reports read into line -> tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from datagen.synth.baseline import Baseline, parse_coverage_json
from datagen.synth.check import stable_output
from datagen.synth.statements import (
    RepoTokens,
    first_error,
    given,
    leak,
    listed_tests,
    template_statement,
    with_names,
)

GOLDEN = Path(__file__).parent / "golden"
CLEAN = {
    "pkg/geo.py": "def area(width, height):\n    return width * height\n\n\ndef limit(x, high):\n"
                  "    return min(x, high)\n",
    "tests/test_geo.py": "from pkg.geo import area\n\n\ndef test_area():\n    assert area(3, 4) == 12\n",
}
BUGGY = {"pkg/geo.py": CLEAN["pkg/geo.py"].replace("width * height", "width + height")
         .replace("min(x, high)", "x")}
PATCH = "".join(line + "\n" for line in [
    "diff --git a/pkg/geo.py b/pkg/geo.py", "--- a/pkg/geo.py", "+++ b/pkg/geo.py", "@@ -1,6 +1,6 @@",
    " def area(width, height):", "-    return width + height", "+    return width * height", " ", " ",
    " def limit(x, high):", "-    return x", "+    return min(x, high)",
])


@pytest.fixture
def fix_only() -> set[str]:
    return RepoTokens(CLEAN).fix_only(BUGGY, PATCH)


def test_fix_only_tokens(fix_only):
    # "min" exists only in the fix; width/height/high are elsewhere in the buggy repo
    assert fix_only == {"min"}


@pytest.mark.parametrize("statement, why", [
    ("area(3, 4) should be 12 but is 7.", None),
    ("Calling area() with a width and height adds them; `limit(x, high)` ignores high.", None),
    ("The function should `return width * height` instead.", "quotes_fix_line"),
    ("It should   return\nwidth *   height, not add.", "quotes_fix_line"),  # whitespace does not hide it
    ("limit() never takes the min of its arguments.", "names_fix_token:min"),
])
def test_leak(statement, why, fix_only):
    assert leak(statement, PATCH, fix_only) == why


def test_short_added_lines_do_not_count():
    patch = "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-    return a\n+    return b\n"
    assert leak("it should return b", patch, set()) is None


def test_template_keeps_a_harmless_error_line(fix_only):
    out = "____ test_area ____\nE       assert 7 == 12\nE        +  where 7 = area(3, 4)\n"
    st = template_statement("geo", ["tests/test_geo.py::test_area"], out, PATCH, fix_only)
    assert st.style == "template"
    assert "`tests/test_geo.py::test_area`" in st.text and "assert 7 == 12" in st.text


@pytest.mark.parametrize("error", [
    "E       AssertionError: expected return width * height",  # quotes a fix line
    "E       AssertionError: min was never called",  # names a fix-only token
])
def test_template_drops_a_leaking_error_line(error, fix_only):
    st = template_statement("geo", ["tests/test_geo.py::test_area"], f"{error}\n", PATCH, fix_only)
    assert first_error(error) and first_error(error) not in st.text
    assert "tests/test_geo.py::test_area" in st.text and leak(st.text, PATCH, fix_only) is None


def test_parse_golden_coverage_json():
    lines = parse_coverage_json(GOLDEN / "coverage_minilib.json")
    shapes = lines["minilib/shapes.py"]
    assert shapes == {5: ["tests/test_shapes.py::test_area"], 9: ["tests/test_shapes.py::test_perimeter"],
                      10: ["tests/test_shapes.py::test_perimeter"], 14: ["tests/test_shapes.py::test_square"]}
    # lines run only at import time (the empty context) belong to no test
    assert 1 not in shapes and 4 not in shapes
    core = lines["minilib/core.py"]
    assert core[7] == ["tests/test_core.py::test_clamp_high", "tests/test_core.py::test_clamp_inside"]
    base = Baseline(runner="pytest", stable=["tests/test_core.py::test_clamp_high"], line_tests=lines)  # one stable
    assert base.tests_reaching("minilib/core.py", 4, 9) == ["tests/test_core.py::test_clamp_high"]


def test_parse_coverage_json_without_a_report(tmp_path):
    assert parse_coverage_json(tmp_path / "missing.json") == {}
    (tmp_path / "bad.json").write_text("{not json")
    assert parse_coverage_json(tmp_path / "bad.json") == {}


def test_failure_output_without_run_times():
    out = "F.\n1 failed, 7 passed in 0.10s\n== 2 failed, 1 error in 12.34s (0:00:12) ==\n# duration_ms 12.5\n"
    assert stable_output(out) == "F.\n1 failed, 7 passed in 0.00s\n== 2 failed, 1 error in 0.00s ==\n# duration_ms 0\n"
    assert stable_output("E   assert slept in 5s\n") == "E   assert slept in 5s\n"  # the test's own words stay


def test_test_names_with_backticks_stay_one_code_span_each():
    """vitest titles quote code (destr's "parses string 'null' as `null`"): each listed name
    is one CommonMark code span, and reading the list back gives the names and the count."""
    failing = ["t > parses string 'null' as `null`", "t > plain", "`edge`", "t > two `` ticks"]
    text = template_statement("destr", failing, "", "", set()).text
    assert "- `` t > parses string 'null' as `null` ``" in text and "- `t > plain`" in text
    assert "- `` `edge` ``" in text
    assert listed_tests(text) == failing


def test_a_statement_gives_the_names_only_the_fix_shows_once():
    st = template_statement("net", ["tests/test_ports.py::test_range"], "E   ValueError", "", set())
    named = with_names(st, ["cache_size", '"port out of range"'])
    last = named.text.rstrip().splitlines()[-1]
    assert "`cache_size`" in last and '`"port out of range"`' in last
    assert named.text.startswith(st.text.rstrip()) and named.style == st.style
    assert with_names(named, ["cache_size"]) == named  # already given: nothing added
    assert given(['"port out of range"']) == {"port", "out", "range", '"port out of range"'}
