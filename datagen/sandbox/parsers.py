"""Test-log parsers: pure functions from a runner's report text to ``{test_id: status}``.

Statuses are ``pass``, ``fail``, ``error`` (setup/collection broke) and ``skip``.
pytest ids are node ids (``tests/test_x.py::TestA::test_b[1]``), built from the
``file`` attribute of JUnit XML written with ``junit_family=xunit1``. Node's test runner
ids are the suite path joined with `` > `` (its JUnit report names no file).

The other ecosystems (each written for a profile of ``datagen/sandbox/profiles/``):

- jest and vitest (``--json`` / ``--reporter=json``, the same shape): ``file > describe > title``;
  a file that failed to run is ``file`` with ``error``;
- mocha (``--reporter json``): ``file > full title`` (mocha joins the titles with spaces);
- ava (``--tap``): the TAP title, ``file › title`` (ava names the file when it runs several);
- go (``go test -json``): ``<package import path>::<Test>[/<subtest>]``;
- cargo (libtest's stable text output, cargo's ``Running`` lines): ``<target file>::<test path>``.

``root`` (the working copy's absolute path plus ``/``) is cut from the file names the JS
reports give as absolute paths.
"""

from __future__ import annotations

import json
import re
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
        if not file.endswith(".py"):  # a text file's doctests (--doctest-glob='*.rst')
            return f"{file}::{name}"
        if classname == module or classname.startswith(module + "."):
            rest = classname[len(module) + 1:]
            return "::".join([file, *filter(None, rest.split(".")), name])
        # a test method inherited from another file's class (asttokens' TestAstroid runs
        # TestMarkTokens' methods): `file` is where the method is defined, `classname` the
        # module and class that collected it, and the node id is the latter's
    # xunit2 (no file attribute) and inherited methods: the module path is a guess up to
    # the first CapWord of the classname
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


def _json(text: str, what: str) -> object:
    try:
        return json.loads(text)
    except ValueError as exc:
        raise ReportError(f"not a {what} JSON report: {exc}") from None


def _rel(path: str, root: str) -> str:
    return path[len(root):] if root and path.startswith(root) else path


_JEST_STATUS: dict[str, TestStatus] = {"passed": "pass", "failed": "fail", "pending": "skip", "skipped": "skip",
                                       "todo": "skip", "disabled": "skip", "focused": "pass"}


def parse_jest_json(text: str, root: str = "") -> TestResults:
    """Per-test results from jest's ``--json --outputFile`` (vitest's ``--reporter=json`` too)."""
    data = _json(text, "jest")
    if not isinstance(data, dict) or not isinstance(data.get("testResults"), list):
        raise ReportError("not a jest JSON report: no testResults")
    results: TestResults = {}
    for suite in data["testResults"]:
        file = _rel(str(suite.get("name", "")), root)
        cases = suite.get("assertionResults") or []
        for case in cases:
            test_id = " > ".join([file, *case.get("ancestorTitles", []), case.get("title", "")])
            _merge(results, test_id, _JEST_STATUS.get(case.get("status", ""), "error"))
        if not cases and suite.get("status") == "failed":  # the file did not load
            _merge(results, file, "error")
    return results


def parse_mocha_json(text: str, root: str = "") -> TestResults:
    """Per-test results from mocha's ``--reporter json`` (failed hooks are ``error``)."""
    data = _json(text, "mocha")
    if not isinstance(data, dict) or "stats" not in data:
        raise ReportError("not a mocha JSON report: no stats")
    results: TestResults = {}

    def key(t: dict) -> str:
        return f"{_rel(str(t.get('file') or ''), root)} > {t.get('fullTitle', t.get('title', ''))}"

    for t in data.get("passes", []):
        _merge(results, key(t), "pass")
    for t in data.get("pending", []):
        _merge(results, key(t), "skip")
    for t in data.get("failures", []):
        hook = '" hook' in str(t.get("title", ""))
        _merge(results, key(t), "error" if hook else "fail")
    return results


_TAP_LINE = re.compile(r"^(not ok|ok)\s+\d+\s*(?:-\s*)?(.*?)(?:\s+#\s*(SKIP|TODO)\b.*)?$", re.I)


def parse_tap(text: str, root: str = "") -> TestResults:
    """Per-test results from a TAP 13 stream (ava's ``--tap``): ``# SKIP`` and ``# TODO`` are skips."""
    results: TestResults = {}
    seen_tap = False
    for line in text.splitlines():
        if line.startswith(("TAP version", "1..")):
            seen_tap = True
        m = _TAP_LINE.match(line)
        if not m:
            continue
        seen_tap = True
        done, title, directive = m.group(1).lower(), _rel(m.group(2).strip(), root), (m.group(3) or "").upper()
        status: TestStatus = "skip" if directive else ("pass" if done == "ok" else "fail")
        _merge(results, title, status)
    if not seen_tap:
        raise ReportError("not a TAP stream")
    return results


def parse_go_json(text: str) -> TestResults:
    """Per-test results from ``go test -json`` (lines that are not JSON, such as build errors
    printed by the go command, are skipped; a test that started and never ended is ``error``)."""
    results: TestResults = {}
    started: set[str] = set()
    events = 0
    for line in text.splitlines():
        if not line.startswith("{"):
            continue
        try:
            event = json.loads(line)
        except ValueError:
            continue
        events += 1
        test, action = event.get("Test"), event.get("Action")
        if not test:
            continue
        test_id = f"{event.get('Package', '')}::{test}"
        if action == "run":
            started.add(test_id)
        elif action in ("pass", "fail", "skip"):
            _merge(results, test_id, {"pass": "pass", "fail": "fail", "skip": "skip"}[action])
    if not events and not text.strip():
        raise ReportError("empty go test -json output")
    for test_id in started - set(results):
        results[test_id] = "error"
    return results


def go_output(text: str) -> str:
    """The human-readable output of a ``go test -json`` stream (what ``go test -v`` prints),
    with the lines that are not JSON (build errors) kept as they are."""
    out = []
    for line in text.splitlines():
        if not line.startswith("{"):
            out.append(line + "\n")
            continue
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if event.get("Action") == "output":
            out.append(str(event.get("Output", "")))
    return "".join(out)


_CARGO_RUNNING = re.compile(r"^\s*Running (?:unittests )?(\S+)")
_LIBTEST_LINE = re.compile(r"^test (.+?)(?: - should panic)? \.\.\. (ok|FAILED|ignored)(?:, .*)?$")


def parse_cargo_test(text: str) -> TestResults:
    """Per-test results from ``cargo test`` (stdout and stderr together): each libtest line
    ``test <path> ... ok|FAILED|ignored`` under the ``Running <target file>`` line before it."""
    results: TestResults = {}
    target = ""
    for line in text.splitlines():
        if m := _CARGO_RUNNING.match(line):
            target = m.group(1)
            continue
        if line.startswith("   Doc-tests "):
            target = "doc:" + line.split()[-1]
            continue
        if m := _LIBTEST_LINE.match(line):
            status: TestStatus = {"ok": "pass", "FAILED": "fail", "ignored": "skip"}[m.group(2)]
            _merge(results, f"{target}::{m.group(1)}" if target else m.group(1), status)
    if not results and "running " not in text and "Running" not in text:
        raise ReportError("no cargo test output")
    return results

