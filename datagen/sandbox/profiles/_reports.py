"""Report parsers of the JVM, C/C++, Ruby and PHP profiles: pure functions from a report's
text to ``{test_id: status}`` (golden reports from real runs in ``tests/sandbox/golden/``).

Test ids, by runner:

- Surefire / Gradle (JUnit XML): ``pkg.Class#method`` (nested classes ``pkg.Outer$Inner#m``,
  parameterized cases keep their index: ``pkg.Class#m(int)[2]``); an error before any test of
  a class ran (a broken ``@BeforeAll``) is the class id ``pkg.Class``.
- CTest (``--output-junit``): the ctest test name; a test whose executable was never built
  is ``error`` (the build broke), not skipped.
- RSpec (``--format json``): ``spec/file_spec.rb::Full description``; a file that failed to
  load is ``spec/file_spec.rb`` with status ``error``.
- minitest (``--verbose``): ``Class#test_name``.
- PHPUnit (``--log-junit``): ``Ns\\Class::method`` (data sets: ``Ns\\Class::method with data
  set "name"``); a risky test (no assertion) passes, as PHPUnit itself counts it.

Several XML documents in one text (the per-class files of Surefire, concatenated) are read
one after the other.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

from datagen.sandbox.parsers import ReportError, TestResults, _merge, _status

_XML_DECL = re.compile(r"<\?xml[^>]*\?>")


def xml_documents(text: str) -> list[ET.Element]:
    """Every XML document in ``text`` (documents separated by their ``<?xml ...?>``
    declarations); ReportError when one does not parse or there are none."""
    chunks = [c for c in _XML_DECL.split(text) if c.strip()]
    if not chunks:
        raise ReportError("empty report")
    roots = []
    for chunk in chunks:
        try:
            roots.append(ET.fromstring(chunk))
        except ET.ParseError as exc:
            raise ReportError(f"not JUnit XML: {exc}") from None
    return roots


def _cases(text: str) -> list[ET.Element]:
    return [case for root in xml_documents(text) for case in root.iter("testcase")]


def _jvm_name(name: str) -> str:
    # Gradle writes JUnit 5 methods as `m()` and `m(int)[1]`; Surefire as `m` and `m(int)[1]`
    return name[:-2] if name.endswith("()") else name


def parse_jvm_junit(text: str) -> TestResults:
    """Surefire's ``TEST-*.xml`` or Gradle's ``build/test-results`` reports -> ``Class#method``."""
    results: TestResults = {}
    for case in _cases(text):
        cls, name = case.get("classname", ""), _jvm_name(case.get("name", ""))
        if not cls:
            continue
        _merge(results, f"{cls}#{name}" if name else cls, _status(case))
    return results


def parse_ctest_junit(text: str) -> TestResults:
    """``ctest --output-junit`` -> ``{test name: status}``; a missing executable is an error."""
    results: TestResults = {}
    for case in _cases(text):
        status = "skip" if case.get("status") == "disabled" else _status(case)
        skipped = case.find("skipped")
        if skipped is not None and "Unable to find executable" in (skipped.get("message") or ""):
            status = "error"
        _merge(results, case.get("name", ""), status)
    return results


_RSPEC_STATUS = {"passed": "pass", "pending": "skip"}
_LOAD_ERROR = re.compile(r"error occurred while loading (\S+?)\.?\s*\n")
_EXPECTATION = ("RSpec::Expectations::ExpectationNotMetError", "RSpec::Expectations::MultipleExpectationsNotMetError")


def rspec_id(example: dict) -> str:
    path = str(example.get("file_path", "")).removeprefix("./")
    return f"{path}::{example.get('full_description', '')}"


def parse_rspec_json(text: str) -> TestResults:
    """``rspec --format json`` -> ``{file::full description: status}``; an exception other than
    a failed expectation is ``error``; a spec file that failed to load is an ``error`` entry."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ReportError(f"not RSpec JSON: {exc}") from None
    if not isinstance(data, dict) or "examples" not in data:
        raise ReportError("not RSpec JSON: no 'examples'")
    results: TestResults = {}
    for example in data["examples"]:
        status = _RSPEC_STATUS.get(example.get("status"), "fail")
        if status == "fail" and example.get("exception", {}).get("class") not in (*_EXPECTATION, None):
            status = "error"
        _merge(results, rspec_id(example), status)
    for message in data.get("messages", []):
        for path in _LOAD_ERROR.findall(message):
            _merge(results, path.removeprefix("./"), "error")
    return results


_MINITEST_LINE = re.compile(r"^(?P<id>\S.*?#\S.*?) = \d+\.\d+ s = (?P<mark>[.FES])$", re.M)
_MINITEST_MARK = {".": "pass", "F": "fail", "E": "error", "S": "skip"}


def parse_minitest_verbose(text: str) -> TestResults:
    """minitest's ``--verbose`` lines (``Class#test_x = 0.00 s = .``) -> ``{Class#test_x: status}``."""
    results: TestResults = {}
    for m in _MINITEST_LINE.finditer(text):
        _merge(results, m["id"], _MINITEST_MARK[m["mark"]])
    if not results and "# Running:" not in text:
        raise ReportError("no minitest run in the output")
    return results


def parse_phpunit_junit(text: str) -> TestResults:
    """PHPUnit's ``--log-junit`` -> ``{Class::method: status}`` (risky tests pass)."""
    results: TestResults = {}
    for case in _cases(text):
        cls = case.get("class") or case.get("classname", "").replace(".", "\\")
        status = _status(case)
        error = case.find("error")
        if status == "error" and error is not None and error.get("type", "").endswith("RiskyTestError"):
            status = "pass"
        _merge(results, f"{cls}::{case.get('name', '')}", status)
    return results
