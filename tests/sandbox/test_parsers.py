"""Parsers on golden reports (tests/sandbox/golden/) and on broken input."""

from pathlib import Path

import pytest

from datagen.sandbox.parsers import ReportError, parse_node_junit, parse_pytest_junit

GOLDEN = Path(__file__).parent / "golden"

PYTEST_EXPECTED = {
    "tests/test_broken_import.py": "error",
    "tests/pkg/test_nested.py::test_nested_ok": "pass",
    "tests/test_calc.py::test_add": "pass",
    "tests/test_calc.py::test_add_wrong": "fail",
    "tests/test_calc.py::test_uses_broken": "error",
    "tests/test_calc.py::test_skipped": "skip",
    "tests/test_calc.py::test_known_bug": "skip",
    "tests/test_calc.py::test_param[1-2-3]": "pass",
    "tests/test_calc.py::test_param[2-2-5]": "fail",
    "tests/test_calc.py::TestGroup::test_in_class": "pass",
}


def test_pytest_xunit1_gives_node_ids():
    got = parse_pytest_junit((GOLDEN / "pytest_xunit1.xml").read_text())
    assert got == PYTEST_EXPECTED


def test_pytest_xunit2_guesses_the_same_ids_without_file_attribute():
    got = parse_pytest_junit((GOLDEN / "pytest_xunit2.xml").read_text())
    assert got == PYTEST_EXPECTED


def test_node_junit_ids_are_suite_paths():
    got = parse_node_junit((GOLDEN / "node_junit.xml").read_text())
    assert got == {
        "adds": "pass",
        "fails": "fail",
        "suite > inner ok": "pass",
        "suite > skipped": "skip",
        "math > nested > deep ok": "pass",
        "math > throws": "fail",
        "math > later": "skip",
        "top level async": "pass",
    }


def test_teardown_error_after_pass_counts_as_error():
    xml = """<testsuites><testsuite>
      <testcase classname="t" name="test_a" file="t.py"/>
      <testcase classname="t" name="test_a" file="t.py"><error message="teardown"/></testcase>
    </testsuite></testsuites>"""
    assert parse_pytest_junit(xml) == {"t.py::test_a": "error"}


@pytest.mark.parametrize("text", ["", "not xml at all", "<testsuites><testsuite>"])
def test_broken_report_is_a_clear_error(text):
    with pytest.raises(ReportError):
        parse_pytest_junit(text)
    with pytest.raises(ReportError):
        parse_node_junit(text)
