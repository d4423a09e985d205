"""Static soundness checks of a task: can an honest agent pass its failing tests from what
it is told? No teacher: the statement, the interface, the fix and the tree are compared.

- ``b2_implicit_naming``: a FAIL_TO_PASS test uses a name (an attribute or a call) or a
  string literal (an error message, an expected output) that only the fix holds: not the
  statement, not the interface, not the unchanged code (SWE-rebench V2's B2);
- ``b10_text_files``: the fix changes a file that is not code (data, a fixture, docs) and
  the tests read it (the failing tests name it, or it lies among the test files);
- ``statement_names_test``: the statement's prose names a test (the list of failing tests
  a template statement gives is its contract, not prose);
- ``statement_line_number``: the statement points at a line number (``line 42``, ``x.py:42``);
- ``exact_output``: a failing test asserts a literal whose whitespace matters (a newline, a
  tab, a run of spaces, a leading or trailing space) that neither the statement nor the
  code shows.

Each flag carries its evidence. ``implicit_names`` is the B2 check's list, which the tasks
build gives the statement (so fewer tasks are flagged, rather than more dropped).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from datagen.crawl.grammars import GRAMMARS
from datagen.crawl.language import detect_language
from datagen.synth.entities import parse
from datagen.synth.statements import added_lines, listed_tests, tokens

CHECKS = ("b2_implicit_naming", "b10_text_files", "statement_names_test", "statement_line_number", "exact_output")
MIN_LITERAL = 3  # shorter literals ("a", "ok") are everywhere
MAX_EVIDENCE = 5  # names quoted in one flag's evidence; the rest are counted
_ATTR = re.compile(r"(?:\.|::|->)\s*([A-Za-z_][A-Za-z0-9_]{2,})")
_CALL = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]{2,})\s*\(")
_LINE_NO = re.compile(r"\bline\s+\d+\b|\b[\w./-]+\.[A-Za-z]{1,5}:\d+\b|#L\d+\b", re.I)
_PREFIX = re.compile(r"^[A-Za-z@$]*(\"\"\"|'''|[\"'`])")
_ASSERTS = re.compile(r"assert|expect|==|equal|\beq\b|match|toBe|should", re.I)
_SIGNIFICANT_SPACE = re.compile(r"\\n|\\t|\n|\t| {2,}|^ | $")


@dataclass(frozen=True)
class Flag:
    """One check that found a defect, with what shows it."""

    check: str
    evidence: str


@dataclass
class TaskView:
    """What the checks read of one task. ``code``: the buggy tree's non-test files (the
    unchanged code the agent sees); ``tests``: the test files the failing tests live in
    (as the agent sees them); ``names``: every test id of the task."""

    statement: str
    interface: str
    patch: str
    failing: list[str]
    tests: Mapping[str, str]
    code: Mapping[str, str]
    names: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)


@dataclass
class TestUse:
    """What a task's failing tests use: names (attributes, calls) and string literals
    (each with the line it stands on)."""

    names: set[str] = field(default_factory=set)
    literals: dict[str, str] = field(default_factory=dict)


def _leaf(name: str) -> str:
    """A test id's own name: ``tests/x.py::Cls::test_y[1]`` -> ``test_y``; ``A > b`` -> ``b``."""
    tail = re.split(r"::|/| > |\.(?=[A-Za-z_]\w*$)", name.strip())[-1]
    return tail.split("[", 1)[0].strip()


def _literal(text: str) -> str:
    """The content of a string literal's source text (prefix and quotes stripped)."""
    m = _PREFIX.match(text)
    if not m:
        return ""
    quote = m.group(1)
    body = text[m.end():]
    return body[: -len(quote)] if body.endswith(quote) else body


def _nodes(node) -> Iterable:
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.children))


def _grammar(path: str) -> str | None:
    lang = detect_language(path)
    return lang if lang in GRAMMARS else None


def _test_spans(text: str, path: str, leaves: set[str]) -> tuple[list[str], list[tuple[str, int]]]:
    """(the source of each named test in ``text``, every string literal with its line); the
    whole file when no test of ``leaves`` is found by name (a definition named so, or a call
    whose first argument is the name, as ``it("name", ...)``)."""
    lang = _grammar(path)
    if lang is None:
        return [text], [(m.group(0), 0) for m in re.finditer(r"\"[^\"\n]*\"|'[^'\n]*'", text)]
    root = parse(text, lang, path).root_node
    spans, strings = [], []
    for n in _nodes(root):
        name = n.child_by_field_name("name")
        if name is not None and name.text.decode("utf-8", "replace") in leaves and n.child_count > 2:
            spans.append(n)
        elif "string" in n.type and n.parent is not None and "string" not in n.parent.type:
            strings.append(n)
            if n.parent.type in ("arguments", "argument_list") and n.parent.parent is not None and \
                    _literal(n.text.decode("utf-8", "replace")) in leaves:
                spans.append(n.parent.parent)
    if not spans:
        spans = [root]
    inside = [s for s in strings if any(a.start_byte <= s.start_byte and s.end_byte <= a.end_byte for a in spans)]
    lines = text.splitlines()
    return ([s.text.decode("utf-8", "replace") for s in spans],
            [(s.text.decode("utf-8", "replace"), lines[s.start_point[0]] if s.start_point[0] < len(lines) else "")
             for s in inside])


def test_use(tests: Mapping[str, str], failing: list[str]) -> TestUse:
    """The names and literals the failing tests use (read from the files they live in)."""
    leaves = {_leaf(t) for t in failing}
    out = TestUse()
    for path in sorted(tests):
        spans, strings = _test_spans(tests[path], path, leaves)
        for span in spans:
            bare = re.sub(r"\"[^\"\n]*\"|'[^'\n]*'", '""', span)
            out.names |= set(_ATTR.findall(bare)) | set(_CALL.findall(bare))
        for raw, line in strings:
            value = _literal(raw)
            if len(value.strip()) >= MIN_LITERAL and re.search(r"[A-Za-z]", value):
                out.literals.setdefault(value, str(line).strip())
    return out


def implicit_names(view: TaskView, use: TestUse | None = None) -> list[str]:
    """What the failing tests use that only the fix shows, sorted: names as they are,
    literals quoted (``"invalid port"``)."""
    use = use or test_use(view.tests, view.failing)
    fix = "\n".join(added_lines(view.patch))
    told = view.statement + "\n" + view.interface
    shown = told + "\n" + "\n".join(view.code.values())
    fix_tokens, shown_tokens = tokens(fix), tokens(shown)
    names = {n for n in use.names if n in fix_tokens and n not in shown_tokens}
    literals = {f'"{v}"' for v in use.literals if v in fix and v not in shown}
    return sorted(names) + sorted(literals)


def _evidence(items: list[str]) -> str:
    more = len(items) - MAX_EVIDENCE
    return ", ".join(items[:MAX_EVIDENCE]) + (f" and {more} more" if more > 0 else "")


def text_files(view: TaskView) -> list[str]:
    """The files the fix changes that are not code and that the tests read."""
    tests_text = "\n".join(view.tests.values())
    out = []
    for path in view.changed:
        if _grammar(path) is not None:
            continue
        name = PurePosixPath(path).name
        if path in view.tests or name in tests_text or any(name in t for t in view.failing):
            out.append(path)
    return out


def _prose(statement: str) -> str:
    """The statement without its list of failing tests (``- `name` `` lines)."""
    listed = set(listed_tests(statement))
    return "\n".join(line for line in statement.splitlines()
                     if not (line.startswith("- ") and any(t in line for t in listed)))


def named_tests(view: TaskView) -> list[str]:
    prose = _prose(view.statement)
    words = tokens(prose)
    leaves = sorted({_leaf(t) for t in [*view.failing, *view.names]})
    return [leaf for leaf in leaves if len(leaf) >= 4 and leaf in words]


def exact_outputs(view: TaskView, use: TestUse) -> list[str]:
    """Literals asserted by the failing tests whose whitespace matters, shown nowhere."""
    shown = view.statement + "\n" + view.interface + "\n" + "\n".join(view.code.values())
    out = []
    for value, line in sorted(use.literals.items()):
        if _SIGNIFICANT_SPACE.search(value) and _ASSERTS.search(line) and value not in shown:
            out.append(repr(value))
    return out


def check_task(view: TaskView) -> list[Flag]:
    """Every static flag of one task, in ``CHECKS`` order, each with its evidence."""
    use = test_use(view.tests, view.failing)
    flags = []
    if implicit := implicit_names(view, use):
        flags.append(Flag("b2_implicit_naming", "only the fix shows " + _evidence(implicit)))
    if files := text_files(view):
        flags.append(Flag("b10_text_files", "the fix changes " + _evidence(files) + ", which the tests read"))
    if named := named_tests(view):
        flags.append(Flag("statement_names_test", "the statement names " + _evidence(named)))
    if lines := sorted(set(_LINE_NO.findall(_prose(view.statement)))):
        flags.append(Flag("statement_line_number", "the statement points at " + _evidence(lines)))
    if exact := exact_outputs(view, use):
        flags.append(Flag("exact_output", "the tests assert " + _evidence(exact) + ", which nothing shows"))
    return flags
