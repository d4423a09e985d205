"""Parsers on golden reports (tests/sandbox/golden/) and on broken input."""

from pathlib import Path

import pytest

from datagen.sandbox.harness.parsers import ReportError, parse_node_junit, parse_pytest_junit

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


def test_linter_plugin_items_are_not_tests():
    """pytest-ruff and pytest-mypy (turned on by pytest-enabler when installed) add an item per
    file, code files included: a style check, not a test, and its file is no test file."""
    xml = """<testsuites><testsuite>
      <testcase classname="pkg.glob" name="mypy" file="pkg/glob.py"/>
      <testcase classname="pkg.glob" name="ruff" file="pkg/glob.py"><failure message="F401"/></testcase>
      <testcase classname="pkg.glob.ruff" name="format" file="pkg/glob.py"/>
      <testcase classname="" name="mypy-status"/>
      <testcase classname="tests.test_glob" name="test_ruff" file="tests/test_glob.py"/>
      <testcase classname="tests.test_glob" name="test_match" file="tests/test_glob.py">
        <failure message="x"/></testcase>
    </testsuite></testsuites>"""
    assert parse_pytest_junit(xml) == {"tests/test_glob.py::test_ruff": "pass",
                                       "tests/test_glob.py::test_match": "fail"}


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


def test_pytest_ids_of_methods_inherited_from_another_files_class_are_pytests_own(tmp_path):
    """asttokens' ``TestAstroid`` (test_astroid.py) inherits ``TestMarkTokens``'
    (test_mark_tokens.py) methods; xunit1 names the defining file, so the ids once came
    out as ``tests/test_mark_tokens.py::test_splat``, a test pytest cannot find."""
    import subprocess
    import sys

    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "__init__.py").write_text("")
    (tmp_path / "tests" / "test_base.py").write_text(
        "import unittest\n\n\nclass TestBase(unittest.TestCase):\n    def test_shared(self):\n        pass\n\n\n"
        "def test_plain():\n    pass\n")
    (tmp_path / "tests" / "use.rst").write_text(">>> 1 + 1\n2\n")  # semver's docs doctests
    (tmp_path / "tests" / "test_child.py").write_text(
        "from tests import test_base\n\n\nclass TestChild(test_base.TestBase):\n    def test_own(self):\n"
        "        pass\n")
    base = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-o", "junit_family=xunit1",
            "--doctest-glob=*.rst", "tests"]
    listed = subprocess.run([*base, "--collect-only", "-q"], cwd=tmp_path, capture_output=True, text=True)
    ids = {line for line in listed.stdout.splitlines() if "::" in line}
    assert {"tests/test_child.py::TestChild::test_shared", "tests/use.rst::use.rst"} <= ids
    subprocess.run([*base, "-q", "--junitxml=r.xml"], cwd=tmp_path, capture_output=True, check=True)
    got = parse_pytest_junit((tmp_path / "r.xml").read_text())
    assert set(got) == ids and set(got.values()) == {"pass"}
