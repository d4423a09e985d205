"""Test-log parsers: pure functions from a runner's report text to ``{test_id: status}``.

Statuses are ``pass``, ``fail``, ``error`` (setup/collection broke) and ``skip``.
pytest ids are node ids (``tests/test_x.py::TestA::test_b[1]``), built from the
``file`` attribute of JUnit XML written with ``junit_family=xunit1``. Node's test runner
ids are the suite path joined with `` > `` (its JUnit report names no file).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from datagen.records.tasks import TestStatus

TestResults = dict[str, TestStatus]

# The worse status wins when one id appears twice (pytest reports a teardown error as
# a second testcase with the same name).
_RANK: dict[str, int] = {"skip": 0, "pass": 1, "fail": 2, "error": 3}


class ReportError(ValueError):
    """The report is missing or not the format the parser reads."""


def _status(case: ET.Element) -> TestStatus:
    tags = {child.tag for child in case}
    if "error" in tags:
        return "error"
    if "failure" in tags:
        return "fail"
    if "skipped" in tags:
        return "skip"
    return "pass"


def _merge(results: TestResults, test_id: str, status: TestStatus) -> None:
    old = results.get(test_id)
    if old is None or _RANK[status] > _RANK[old]:
        results[test_id] = status


def _parse_xml(text: str) -> ET.Element:
    try:
        return ET.fromstring(text)
    except ET.ParseError as exc:
        raise ReportError(f"not JUnit XML: {exc}") from None


def _pytest_id(case: ET.Element) -> str:
    name = case.get("name", "")
    classname = case.get("classname", "")
    file = case.get("file")
    if not classname:  # a collection error: pytest names the module in `name`
        return file or name.replace(".", "/") + ".py"
    if file:
        module = file[:-3].replace("/", ".") if file.endswith(".py") else file
        rest = classname[len(module) + 1:] if classname.startswith(module + ".") else ""
        parts = [file, *filter(None, rest.split(".")), name]
        return "::".join(parts)
    # xunit2 (no file attribute): the module path is a guess up to the first CapWord
    dotted = classname.split(".")
    split = next((i for i, p in enumerate(dotted) if p[:1].isupper()), len(dotted))
    path = "/".join(dotted[:split]) + ".py"
    return "::".join([path, *dotted[split:], name])


def parse_pytest_junit(text: str) -> TestResults:
    """Per-test results from pytest's ``--junitxml`` report."""
    root = _parse_xml(text)
    results: TestResults = {}
    for case in root.iter("testcase"):
        _merge(results, _pytest_id(case), _status(case))
    return results


def parse_node_junit(text: str) -> TestResults:
    """Per-test results from ``node --test --test-reporter=junit``."""
    root = _parse_xml(text)
    results: TestResults = {}

    def walk(node: ET.Element, prefix: list[str]) -> None:
        for child in node:
            if child.tag == "testsuite":
                walk(child, [*prefix, child.get("name", "")])
            elif child.tag == "testcase":
                _merge(results, " > ".join([*prefix, child.get("name", "")]), _status(child))

    walk(root, [])
    return results


PARSERS = {"pytest": parse_pytest_junit, "node": parse_node_junit}
