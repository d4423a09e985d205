"""Pure helpers over the unified diffs a policy answers with: find the diff in an answer,
list the files it touches, and spot forbidden operations (editing, deleting or skipping
tests), which would let an attempt pass without fixing anything."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from datagen.sandbox.harness.protect import is_protected

_FENCE = re.compile(r"```[ \t]*([\w+-]*)[^\n]*\n(.*?)(?:\n```|\Z)", re.S)
_DIFF_START = re.compile(r"^(diff --git |--- )", re.M)
_SKIP_MARKERS = ("pytest.skip(", "pytest.mark.skip", "pytest.mark.xfail", "unittest.skip",
                 "@skip", "pytest.importorskip(", "raise SkipTest", "unittest.SkipTest",
                 "#[ignore", "t.Skip(", "@Disabled", "@Ignore", "it.skip(", "test.skip(", "describe.skip(",
                 "markTestSkipped(")


def _looks_like_diff(text: str) -> bool:
    return bool(re.search(r"^\+\+\+ ", text, re.M)) and bool(re.search(r"^@@ ", text, re.M))


def extract_diff(answer: str) -> str:
    """The unified diff in a policy's answer: the first fenced block that holds one
    (```diff, ```patch or plain fences), else the raw text from its first ``diff --git``
    or ``---`` line. '' when there is none. Always ends with a newline."""
    for match in _FENCE.finditer(answer):
        body = match.group(2)
        if _looks_like_diff(body):
            return _from_start(body)
    if _looks_like_diff(answer):
        return _from_start(answer)
    return ""


def _from_start(text: str) -> str:
    start = _DIFF_START.search(text)
    body = text[start.start():] if start else text
    return body.rstrip("\n") + "\n"


@dataclass(frozen=True)
class FileChange:
    """One file a diff touches: its path and what happens to it."""

    path: str
    op: str  # "modify" | "add" | "delete" | "rename"
    added: tuple[str, ...] = ()  # the '+' lines (without the '+')


def file_changes(diff: str) -> list[FileChange]:
    """The files a unified diff touches, in order (git headers or bare ---/+++ pairs)."""
    lines = diff.splitlines()
    files: list[dict] = []
    skip = -1
    for i, line in enumerate(lines):
        cur = files[-1] if files else None
        if i == skip:
            continue
        if line.startswith("diff --git "):
            match = re.match(r"diff --git a/(\S+) b/(\S+)", line)
            old, new = (match.group(1), match.group(2)) if match else (None, None)
            files.append({"old": old, "new": new, "op": "modify", "added": [], "hunks": False})
        elif line.startswith(("deleted file mode", "new file mode", "rename from")) and cur:
            cur["op"] = {"d": "delete", "n": "add", "r": "rename"}[line[0]]
        elif line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            if cur is None or cur["hunks"]:  # a bare ---/+++ pair starts the next file
                cur = {"op": "modify", "added": [], "hunks": False}
                files.append(cur)
            cur["old"], cur["new"], skip = _strip(line[4:]), _strip(lines[i + 1][4:]), i + 1
            if cur["new"] == "/dev/null":
                cur["op"] = "delete"
            elif cur["old"] == "/dev/null":
                cur["op"] = "add"
        elif line.startswith("@@") and cur:
            cur["hunks"] = True
        elif line.startswith("+") and cur and cur["hunks"]:
            cur["added"].append(line[1:])
    out = []
    for f in files:
        path = f["new"] if f.get("new") not in (None, "/dev/null") else f.get("old")
        if path and path != "/dev/null":
            out.append(FileChange(path, f["op"], tuple(f["added"])))
    return out


def _strip(path: str) -> str:
    path = path.split("\t")[0].strip()
    return path[2:] if path.startswith(("a/", "b/")) else path


def is_test_path(path: str, extra: Iterable[str] = ()) -> bool:
    """Test code or test configuration of any ecosystem (``sandbox.protect``: test folders,
    ``test_*.py``, ``*_test.go``, ``src/test/**``, ``*.spec.ts``, ``conftest.py``,
    ``jest.config.*``, ...) or one of ``extra`` (the task's test files)."""
    return path in set(extra) or is_protected(path)


def forbidden_operation(diff: str, test_paths: Iterable[str] = ()) -> tuple[str, str] | None:
    """(reason, detail) when the diff deletes, edits or skips tests, else None.

    Reasons: ``forbidden_deletes_tests``, ``forbidden_edits_tests`` (any change to a test
    file, new ones included: they could shadow the real tests), ``forbidden_skips_tests``
    (a skip or xfail marker added anywhere)."""
    extra = list(test_paths)
    changes = file_changes(diff)
    for change in changes:
        if is_test_path(change.path, extra):
            reason = "forbidden_deletes_tests" if change.op == "delete" else "forbidden_edits_tests"
            return reason, change.path
    for change in changes:
        for line in change.added:
            if any(marker in line for marker in _SKIP_MARKERS):
                return "forbidden_skips_tests", f"{change.path}: {line.strip()[:120]}"
    return None
