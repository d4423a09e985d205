"""Directed feedback: a short, location-specific hint for a failed policy attempt, for
trainers that feed text feedback back to the model.

``hint_for`` is a pure function of the attempt (its reason, git's error, the JUnit report
and the log): it names the failing test, the deepest ``file:line`` inside the repository,
and the error line pytest printed (its ``E`` lines).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from datagen.score.attempt import AttemptResult

MAX_CHARS = 300
_LOCATION = re.compile(r"^(?P<path>[^\s:<>][^\s:]*\.\w+):(?P<line>\d+):")
_FILE_LINE = re.compile(r'File "(?P<path>[^"]+)", line (?P<line>\d+)')

_FIXED = {
    "empty_answer": "The answer was empty. Reply with a unified diff of the fix in a ```diff block.",
    "no_diff": "No unified diff was found in the answer. Reply with the fix as a unified diff "
               "(--- a/path, +++ b/path, @@ hunks) in a ```diff block.",
}


def hint_for(attempt: AttemptResult) -> str:
    """One or two sentences saying where and why the attempt failed ('' if it passed)."""
    if attempt.passed:
        return ""
    reason = attempt.reason or "tests_failed"
    if reason in _FIXED:
        text = _FIXED[reason]
    elif reason == "policy_error":
        text = f"No answer was produced ({attempt.detail or 'policy error'})."
    elif reason.startswith("forbidden_"):
        text = _forbidden(reason, attempt.detail)
    elif reason == "patch_does_not_apply":
        text = _does_not_apply(attempt.detail)
    elif reason == "test_patch_does_not_apply":
        text = f"The patch conflicts with the task's tests ({_first_line(attempt.detail)}); change only the code."
    else:
        text = _test_failure(attempt, reason)
    return _clip(text)


def _forbidden(reason: str, detail: str) -> str:
    what = {"forbidden_deletes_tests": "deletes the test file",
            "forbidden_edits_tests": "edits the test file",
            "forbidden_skips_tests": "adds a skip marker:"}[reason]
    return f"The patch {what} {detail}; fix the code under test and leave the tests alone."


def _does_not_apply(detail: str) -> str:
    failed = re.search(r"patch failed: (\S+:\d+)", detail)
    if failed:
        return (f"The patch does not apply at {failed.group(1)}: its context lines must match "
                "the file exactly.")
    missing = re.search(r"error: (\S+): (?:No such file or directory|does not exist in index)", detail)
    if missing:
        return f"The patch edits {missing.group(1)}, which does not exist in the repository."
    corrupt = re.search(r"corrupt patch at line (\d+)", detail)
    if corrupt:
        return f"The patch is malformed (corrupt at line {corrupt.group(1)} of the diff); check the hunk headers."
    return f"The patch does not apply: {_first_line(detail)}."


def _test_failure(attempt: AttemptResult, reason: str) -> str:
    failing = attempt.failing
    first = failing[0] if failing else None
    more = f" (+{len(failing) - 1} more failing)" if len(failing) > 1 else ""
    if reason != "tests_failed" and reason != "no_report":
        what = "the time limit" if reason == "timeout" else f"the {reason} limit"
        where = f" while {first} was required to pass" if first else ""
        return f"The test run was stopped by {what}{where}; look for an endless loop or wait."
    text = _case_text(attempt.report, first) if first else None
    if text is None:  # no testcase for it: a collection error, or no report at all
        text = _collection_text(attempt.report, first) or attempt.log
    location, error = _location(text, attempt.workdir), _error_line(text)
    subject = first or "the test run"
    if first and first not in attempt.results and _collection_text(attempt.report, first):
        subject = f"{first} (its file could not be collected)"
    at = f" at {location}" if location else ""
    because = f": {error}" if error else ""
    return f"{subject} fails{at}{because}{more}."


def _cases(report: str) -> list[ET.Element]:
    try:
        return list(ET.fromstring(report).iter("testcase")) if report.strip() else []
    except ET.ParseError:
        return []


def _case_id(case: ET.Element) -> str:
    file, name, cls = case.get("file", ""), case.get("name", ""), case.get("classname", "")
    module = file[:-3].replace("/", ".") if file.endswith(".py") else file
    rest = cls[len(module) + 1:] if cls.startswith(module + ".") else ""
    return "::".join([file, *filter(None, rest.split(".")), name])


def _problem_text(case: ET.Element) -> str | None:
    for child in case:
        if child.tag in ("failure", "error"):
            return "\n".join(filter(None, [child.get("message", ""), child.text or ""]))
    return None


def _case_text(report: str, test_id: str) -> str | None:
    for case in _cases(report):
        if case.get("classname") and _case_id(case) == test_id:
            return _problem_text(case)
    return None


def _collection_text(report: str, test_id: str | None) -> str | None:
    """The collection error of the test's file (pytest reports it as a class-less case)."""
    file = (test_id or "").split("::")[0]
    for case in _cases(report):
        if not case.get("classname") and case.get("file", "") == file:
            return _problem_text(case)
    return None


def _location(text: str, workdir: str) -> str | None:
    """The deepest ``path:line`` inside the repository (relative paths, or paths under
    the working copy); interpreter and site-packages frames are skipped."""
    inside = []
    for line in text.splitlines():
        match = _LOCATION.match(line) or _FILE_LINE.search(line)
        if match and (rel := _relative(match.group("path"), workdir)):
            inside.append(f"{rel}:{match.group('line')}")
    return inside[-1] if inside else None


def _relative(path: str, workdir: str) -> str:
    root = workdir.rstrip("/") + "/" if workdir else None
    if root and path.startswith(root):
        return path[len(root):]
    return "" if path.startswith(("/", "<")) else path


def _error_line(text: str) -> str | None:
    """pytest's ``E`` lines, the exception line first ("SyntaxError: ..."), else the
    first two joined ("assert -1 == 5 (+ where -1 = add(2, 3))")."""
    lines = [m.group(1).strip() for m in re.finditer(r"^E\s+(.*)$", text, re.M)]
    lines = [line for line in lines if line and set(line) != {"^"}]
    if not lines:
        tail = [line.strip() for line in text.splitlines() if line.strip()]
        return tail[-1][:200] if tail else None
    exc = [line for line in lines if re.match(r"^[\w.]+(Error|Exception|Exit|Interrupt)\b", line)]
    if exc:
        return exc[0]
    head = lines[0]
    if len(lines) > 1 and lines[1].startswith("+"):
        head += f" ({lines[1]})"
    return head


def _first_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[0][:200] if lines else "no detail"


def _clip(text: str) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    return text if len(text) <= MAX_CHARS else text[: MAX_CHARS - 1] + "…"
