"""Test-log parsers: pure functions from a runner's report text to ``{test_id: status}``.

Statuses are ``pass``, ``fail``, ``error`` (setup/collection broke) and ``skip``.
pytest ids are node ids (``tests/test_x.py::TestA::test_b[1]``), built from the
``file`` attribute of JUnit XML written with ``junit_family=xunit1``. Node's test runner
ids are the suite path joined with `` > `` (its JUnit report names no file).

The other ecosystems (each written for a profile of ``datagen/sandbox/harness/profiles/``):

- jest and vitest (``--json`` / ``--reporter=json``, the same shape): ``file > describe > title``;
  a file that failed to run is ``file`` with ``error``;
- mocha (``--reporter json``): ``file > full title`` (mocha joins the titles with spaces);
- ava (``--tap``): the TAP title, ``file › title`` (ava names the file when it runs several);
- go (``go test -json``): ``<package import path>::<Test>[/<subtest>]``;
- cargo (libtest's stable text output, cargo's ``Running`` lines): ``<target file>::<test path>``.

``root`` (the working copy's absolute path plus ``/``) is cut from the file names the JS
reports give as absolute paths.

The JVM, C/C++, Ruby and PHP profiles' reports (golden reports from real runs in
``tests/sandbox/golden/``):

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


# Items that linter and type-checker plugins add for each file (pytest-ruff, pytest-mypy,
# pytest-black, pytest-isort, pytest-flake8, pytest-pylint, pytest-pycodestyle, ...), often
# turned on by the mere install (jaraco's pytest-enabler). They check style, not behaviour:
# they are not tests, and a file they name is not a test file.
LINT_ITEMS = frozenset({"ruff", "ruff::format", "mypy", "mypy-status", "black", "isort", "flake8",
                        "flake-8::FLAKE8", "pylint", "PYLINT", "codestyle", "pycodestyle", "pydocstyle"})


def is_lint_item(test_id: str) -> bool:
    """Whether a pytest id is a linter plugin's item (``zipp/glob.py::ruff::format``)."""
    return test_id in LINT_ITEMS or test_id.partition("::")[2] in LINT_ITEMS


def parse_pytest_junit(text: str) -> TestResults:
    """Per-test results from pytest's ``--junitxml`` report (less linter plugins' items)."""
    root = _parse_xml(text)
    results: TestResults = {}
    for case in root.iter("testcase"):
        test_id = _pytest_id(case)
        session_item = not case.get("classname") and case.get("name", "") in LINT_ITEMS  # mypy-status
        if not is_lint_item(test_id) and not session_item:
            _merge(results, test_id, _status(case))
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


# The JVM, C/C++, Ruby and PHP profiles' reports.

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


# The cases a test executable reports itself, one line each (``case_lines``):
# Unity's ``file:line:name:PASS|FAIL[: msg]|IGNORE``; GoogleTest's ``[       OK ] Suite.name (0 ms)``
# (a ``[ RUN      ]`` without its end line is an error when the executable failed: it died in
# it; an end line without the time (``print_time`` off), or after text the case printed without
# a newline, ends the case that is running); TAP's
# ``ok 1 - name`` / ``not ok 2 - name``; and plain ``[pass] name`` / ``[fail] name`` checks
# (tinyxml2's xmltest), whose trailing ``[expected][found]`` values are not part of the name;
# and ``Testing <name>: OK|FAILED`` (jsoncpp's jsontest: ``Testing <name>: `` is printed before
# the case runs, so where the output has such end lines, a started case without one is an error).
_UNITY_CASE = re.compile(r"^[^:\n]+:\d+:(?P<name>[A-Za-z_]\w*):(?P<mark>PASS|FAIL|IGNORE)\b")
_GTEST_END = re.compile(r"^\[ +(?P<mark>OK|FAILED|SKIPPED) +\] (?P<name>\S+) \(\d+ ms\)$")
_GTEST_RUN = re.compile(r"^\[ RUN +\] (?P<name>\S+)$")
_GTEST_TAIL = re.compile(r"\[ +(?P<mark>OK|FAILED|SKIPPED) +\] (?P<name>\S+)(?: \(\d+ ms\))?$")
_TAP_CASE = re.compile(r"^(?P<mark>not ok|ok) \d+(?: -)? (?P<name>.+?)(?: # (?P<skip>SKIP|TODO)\b.*)?$", re.I)
_CHECK_CASE = re.compile(r"^\[(?P<mark>pass|fail)\] (?P<name>.+)$", re.I)
_CHECK_VALUES = re.compile(r"^(?P<name>.*?\S)[ \t]+\[.*\]\[.*\]$")
_TESTING_END = re.compile(r"^Testing (?P<name>[^ \t].*?): (?P<mark>OK|FAILED)$")
_TESTING_START = re.compile(r"^Testing (?P<name>[^ \t:][^:]*?): ")
_CASE_MARK: dict[str, TestStatus] = {"pass": "pass", "ok": "pass", "fail": "fail", "failed": "fail",
                                     "not ok": "fail", "ignore": "skip", "skipped": "skip"}
CASE_SEP = "::"  # between the ctest test's name and a case it reported


def case_lines(output: str, passed: bool = False) -> TestResults:
    """The cases one test executable reported in its ``output`` -> ``{case: status}`` ({} when
    it reports none this way). A name seen again is ``name (2)``, ``name (3)``, ... (xmltest
    repeats its check names). Only what the output says is a case: one that started and never
    ended is an error where the executable did not pass (it died in it), and no case where it
    ``passed`` (its end line was lost, the case did not fail)."""
    results: TestResults = {}
    seen: dict[str, int] = {}
    running: list[str] = []
    started: list[str] = []  # jsontest's ``Testing <name>: `` without its end
    ended = False
    for line in output.splitlines():
        line = line.rstrip("\r")
        if m := _GTEST_RUN.match(line):
            running.append(m["name"])
            continue
        m = (_UNITY_CASE.match(line) or _GTEST_END.match(line) or _TAP_CASE.match(line) or _CHECK_CASE.match(line)
             or _TESTING_END.match(line) or _running_end(line, running))
        if m is None:
            if s := _TESTING_START.match(line):
                started.append(s["name"].strip())
            continue
        name = m["name"].strip()
        if m.re is _CHECK_CASE and (v := _CHECK_VALUES.match(name)):
            name = v["name"]
        if m.re in (_GTEST_END, _GTEST_TAIL) and name in running:
            running.remove(name)
        ended = ended or m.re is _TESTING_END
        status = "skip" if m.re is _TAP_CASE and m["skip"] else _CASE_MARK[m["mark"].lower()]
        seen[name] = seen.get(name, 0) + 1
        results[name if seen[name] == 1 else f"{name} ({seen[name]})"] = status
    if not passed:
        for name in running + (started if ended else []):  # started, never finished: it crashed or hung in it
            results.setdefault(name, "error")
    return results


def _running_end(line: str, running: list[str]) -> re.Match[str] | None:
    """A GoogleTest end line of a case that is running, without the time (``print_time`` off)
    or after text the case printed without a newline (None when ``line`` is none)."""
    m = _GTEST_TAIL.search(line) if running else None
    return m if m is not None and m["name"] in running else None


def parse_ctest_junit(text: str) -> TestResults:
    """``ctest --output-junit`` -> ``{test name: status}``; a missing executable is an error.

    A test whose output reports its own cases (``case_lines``) gives one id per case,
    ``<test name>::<case>``, instead of its name; it gives its name too, as ``fail``, when it
    failed while every case it reported passed (a crash after the last case, a leak check)."""
    results: TestResults = {}
    for case in _cases(text):
        status = "skip" if case.get("status") == "disabled" else _status(case)
        skipped = case.find("skipped")
        if skipped is not None and "Unable to find executable" in (skipped.get("message") or ""):
            status = "error"
        add_cases(results, case.get("name", ""), status, case.findtext("system-out") or "")
    return results


def add_cases(results: TestResults, name: str, status: TestStatus, output: str) -> None:
    """Test ``name`` (its own ``status``) into ``results``: one ``<name>::<case>`` id per case
    its ``output`` reports (``case_lines``; none for a skipped test), and ``name`` itself where
    it reports none, or failed while every case it reported passed."""
    cases = case_lines(output, passed=status == "pass") if status != "skip" else {}
    for sub, sub_status in cases.items():
        _merge(results, f"{name}{CASE_SEP}{sub}", sub_status)
    if not cases or status in ("fail", "error") and all(s in ("pass", "skip") for s in cases.values()):
        _merge(results, name, status)


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
        if (m := _RUBY_LOAD_ERROR.search(text)) is not None:  # a gem the suite needs is not installed
            raise ReportError(f"no minitest run: the tests require {m['lib']!r}, which is not installed "
                              f"(cannot load such file; a gem from RubyGems, or the repo's own file)")
        raise ReportError("no minitest run in the output")
    return results


_RUBY_LOAD_ERROR = re.compile(r"cannot load such file -- (?P<lib>\S+) \(LoadError\)")


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


# --- the runner's own words ----------------------------------------------------------------
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
# stack frames and rules: where an error was raised, not what it was
_FRAME = re.compile(r"^(at\s|File \"|from\s|#\d+\s|\d+\s*[|│]|[-=_~^*#.⎯─│├└╰▶>|+]+$)")
_ERROR_LINE = re.compile(
    r"^(E\s{2,}|ERROR\b|error[:\[]|fatal\b|FAIL\b|panic:|Traceback\b|PHP (Fatal|Parse) error)"
    r"|\b\w*(Error|Exception)\b|cannot load such file|[Nn]o such file|[Nn]ot found\b|[Ff]ailed to\b"
    r"|undefined reference|[Cc]annot find\b|[Nn]o module named|[Uu]nable to\b"
    r"|Could NOT find\b")  # CMake's find_package: "Could NOT find GTest (missing: GTEST_LIBRARY ...)"
WORDS_WIDTH, WORDS_LINES, WORDS_CHARS = 300, 6, 1500


def runner_words(output: str) -> str:
    """What a test run that yielded nothing to use says about why, in the runner's own words:
    its error lines (``E   ModuleNotFoundError: No module named 'pytest_mock'``, ``Error:
    ENOENT: ... mkdir './node_modules/.vite-temp'``, ``cannot load such file -- coveralls``),
    then its last lines (``last lines: ...``); stack frames, rules and lone braces left out;
    '' when it printed nothing. Lines are cut at ``WORDS_WIDTH`` characters, the whole at
    ``WORDS_CHARS``."""
    lines = []
    for raw in _ANSI.sub("", output).splitlines():
        line = raw.strip()
        if line and not _FRAME.match(line) and re.search(r"\w", line):
            lines.append(line[:WORDS_WIDTH])
    if not lines:
        return ""
    errors = [line for line in lines if _ERROR_LINE.search(line.strip("_=!*- "))]  # "___ ERROR collecting x ___"
    picked = list(dict.fromkeys([*errors[:2], *errors[-2:]]))
    tail = [line for line in lines[-WORDS_LINES:] if line not in picked]
    words = " | ".join(picked)
    if tail:
        words += ("; " if words else "") + "last lines: " + " | ".join(tail)
    return words[:WORDS_CHARS]
