"""Hints for failed attempts, on golden pytest reports (see golden/README.md) and on the
other failure reasons. Each row: the attempt, the exact hint."""

from __future__ import annotations

from pathlib import Path

import pytest

from datagen.score.attempt import AttemptResult
from datagen.score.feedback import MAX_CHARS, hint_for

GOLDEN = Path(__file__).parent / "golden"
WORK = "/tmp/attempt-0/work"
FAILURES = (GOLDEN / "pytest_failures.xml").read_text()
SYNTAX = (GOLDEN / "pytest_syntax_error.xml").read_text()
LOG = (GOLDEN / "pytest_failures.log").read_text()
RESULTS = {"tests/test_broken.py": "error", "tests/test_calc.py::test_add": "fail",
           "tests/test_calc.py::test_mean_empty": "fail", "tests/test_calc.py::test_mean": "pass"}


def failed(reason: str = "tests_failed", required: tuple[str, ...] = (), **kw) -> AttemptResult:
    fields = {"results": RESULTS, "report": FAILURES, "log": LOG, "workdir": WORK, **kw}
    return AttemptResult("calc__1", 0, False, reason, required=required, **fields)


CASES = [
    ("assertion", failed(required=("tests/test_calc.py::test_add", "tests/test_calc.py::test_mean")),
     "tests/test_calc.py::test_add fails at tests/test_calc.py:5: assert -1 == 5 "
     "(+ where -1 = add(2, 3))."),
    ("deep exception", failed(required=("tests/test_calc.py::test_mean_empty", "tests/test_calc.py::test_add")),
     "tests/test_calc.py::test_mean_empty fails at calc.py:6: ZeroDivisionError: division by zero "
     "(+1 more failing)."),
    ("collection error", failed(required=("tests/test_broken.py::test_mul",)),
     "tests/test_broken.py::test_mul (its file could not be collected) fails at "
     "tests/test_broken.py:1: ImportError: cannot import name 'mul' from 'calc' "
     "(/tmp/attempt-0/work/calc.py)."),
    ("syntax error", failed(required=("tests/test_calc.py::test_add",), results={"tests/test_calc.py": "error"},
                            report=SYNTAX),
     "tests/test_calc.py::test_add (its file could not be collected) fails at calc.py:2: "
     "SyntaxError: invalid syntax."),
    ("no report", failed("no_report", required=("tests/test_calc.py::test_add",), results={}, report="",
                         log="Traceback (most recent call last):\nModuleNotFoundError: No module named 'pytest'\n"),
     "tests/test_calc.py::test_add fails: ModuleNotFoundError: No module named 'pytest'."),
    ("timeout", failed("timeout", required=("tests/test_calc.py::test_add",), results={}, report=""),
     "The test run was stopped by the time limit while tests/test_calc.py::test_add was required "
     "to pass; look for an endless loop or wait."),
    ("memory", failed("memory", required=(), results={}, report=""),
     "The test run was stopped by the memory limit; look for an endless loop or wait."),
    ("does not apply", failed("patch_does_not_apply",
                              detail="error: patch failed: calc.py:12\nerror: calc.py: patch does not apply"),
     "The patch does not apply at calc.py:12: its context lines must match the file exactly."),
    ("missing file", failed("patch_does_not_apply", detail="error: lib/calc.py: No such file or directory"),
     "The patch edits lib/calc.py, which does not exist in the repository."),
    ("corrupt", failed("patch_does_not_apply", detail="error: corrupt patch at line 9"),
     "The patch is malformed (corrupt at line 9 of the diff); check the hunk headers."),
    ("forbidden", failed("forbidden_deletes_tests", detail="tests/test_calc.py"),
     "The patch deletes the test file tests/test_calc.py; fix the code under test and leave the tests alone."),
    ("skip", failed("forbidden_skips_tests", detail="calc.py: pytest.skip('x')"),
     "The patch adds a skip marker: calc.py: pytest.skip('x'); fix the code under test and leave the "
     "tests alone."),
    ("no diff", failed("no_diff"),
     "No unified diff was found in the answer. Reply with the fix as a unified diff "
     "(--- a/path, +++ b/path, @@ hunks) in a ```diff block."),
    ("policy error", failed("policy_error", detail="timeout (after 7 attempts)"),
     "No answer was produced (timeout (after 7 attempts))."),
    ("test patch", failed("test_patch_does_not_apply", detail="error: patch failed: tests/test_calc.py:3"),
     "The patch conflicts with the task's tests (error: patch failed: tests/test_calc.py:3); change only "
     "the code."),
]


@pytest.mark.parametrize(("attempt", "hint"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_hint_golden(attempt, hint):
    assert hint_for(attempt) == hint


def test_passed_attempt_has_no_hint_and_hints_stay_short():
    assert hint_for(AttemptResult("x", 0, True, None)) == ""
    long = failed("policy_error", detail="x" * 2000)
    assert len(hint_for(long)) == MAX_CHARS and hint_for(long).endswith("…")
