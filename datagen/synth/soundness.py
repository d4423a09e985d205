"""Static soundness checks of a task: can an honest agent pass its failing tests from what
it is told? No teacher: the statement, the interface, the fix and the tree are compared.

- ``b2_implicit_naming``: a FAIL_TO_PASS test uses a name (an attribute or a call) that the
  fix introduces, or a string literal (an error message, an expected output) that only the
  fix holds: not the statement, not the interface, not the unchanged code (SWE-rebench V2's B2);
- ``b10_text_files``: the fix changes a file that is not code (data, a fixture, docs) and
  the tests read it (the failing tests name it, or it lies among the test files);
- ``statement_names_test``: the statement's prose names a test (the list of failing tests
  a template statement gives is its contract, and the test output it quotes is verbatim:
  neither is prose);
- ``statement_line_number``: the statement's prose points at a line (``line 42``, ``x.py:42``);
- ``exact_output``: a failing test asserts a literal whose spacing matters (a tab, a run of
  spaces, a leading or trailing space) that neither the statement nor the code shows, and
  that is not an input of the code under test.

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
from datagen.synth.statements import added_lines, id_parts, leaf_name, listed_tests, tokens

CHECKS = ("b2_implicit_naming", "b10_text_files", "statement_names_test", "statement_line_number", "exact_output")
MIN_LITERAL = 3  # shorter literals ("a", "ok") are everywhere
MAX_EVIDENCE = 5  # names quoted in one flag's evidence; the rest are counted
_ATTR = re.compile(r"(?:\.|::|->)\s*([A-Za-z_][A-Za-z0-9_]{2,})")
_CALL = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]{2,})\s*\(")
_LINE_NO = re.compile(r"\bline\s+\d+\b|\b[\w./-]+\.[A-Za-z]{1,5}:\d+\b|#L\d+\b", re.I)
_PREFIX = re.compile(r"^[A-Za-z@$]*(\"\"\"|'''|[\"'`])")
_ASSERTS = re.compile(r"assert|expect|==|equal|\beq\b|match|toBe|should", re.I)
_SIGNIFICANT_SPACE = re.compile(r"\\t|\t| {2,}|^ | $")


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


@dataclass(frozen=True)
class Literal:
    """A string literal of a failing test: its content, its line, and the function it is
    passed to on that line ('' when none): an argument of the code under test is an input."""

    value: str
    line: str
    callee: str = ""


@dataclass
class TestUse:
    """What a task's failing tests use: names (attributes and calls, never keywords) and
    string literals."""

    names: set[str] = field(default_factory=set)
    literals: list[Literal] = field(default_factory=list)


def _test_names(test_id: str) -> set[str]:
    """A test id and each of its parts: ``tests/x.py::Cls::test_y[1]`` -> ``test_y``, ...;
    ``pkg::TestX/sub``, ``hull.order_ccw``, ``Suite > case``."""
    return {test_id.strip(), *(p.split("[", 1)[0].strip() for p in id_parts(test_id))} - {""}


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


def _text(node) -> str:
    return node.text.decode("utf-8", "replace")


def _enclosing(node):
    """The smallest node around ``node`` that spans lines: a test's whole definition or call."""
    while node.parent is not None and node.start_point[0] == node.end_point[0]:
        node = node.parent
    return node


def _names_a_test(node, names: set[str]) -> bool:
    """``node`` names one of the failing tests: a definition's name, or the first argument
    (a string or an identifier) of a call such as ``it("name", ...)`` or ``TEST_CASE(name, ...)``."""
    if node.child_count:
        return "string" in node.type and _literal(_text(node)) in names
    if not node.is_named or _text(node) not in names or node.parent is None:
        return False
    field_name = node.parent.child_by_field_name("name")
    return (field_name is not None and field_name.id == node.id) or node.parent.named_children[:1] == [node]


def _callee(node) -> str:
    """The function ``node`` is passed to on its own line ('' when none)."""
    n = node.parent
    while n is not None and n.start_point[0] == node.start_point[0]:
        if "call" in n.type or "invocation" in n.type:
            head = n.child_by_field_name("function") or n.child_by_field_name("name") or n.children[0]
            m = re.search(r"(\w+)\W*$", _text(head))
            return m.group(1) if m else ""
        n = n.parent
    return ""


def _spans(text: str, path: str, names: set[str]) -> list:
    """The nodes of the failing tests in a parsed file ([] when none is found by name)."""
    root = parse(text, _grammar(path), path).root_node
    found = {}
    for n in _nodes(root):
        if _names_a_test(n, names):
            span = _enclosing(n)
            found[(span.start_byte, span.end_byte)] = span
    return [found[k] for k in sorted(found)]


def _use_of(spans: list, lines: list[str], out: TestUse) -> None:
    """Add what ``spans`` use: identifiers used as attributes or calls, and string literals."""
    for span in spans:
        idents = set()
        for n in _nodes(span):
            if n.child_count == 0 and n.is_named and ("identifier" in n.type or n.type in ("name", "constant")):
                idents.add(_text(n))
            elif "string" in n.type and n.parent is not None and "string" not in n.parent.type:
                row = n.start_point[0]
                out.literals.append(Literal(_literal(_text(n)), lines[row] if row < len(lines) else "", _callee(n)))
        bare = re.sub(r"\"[^\"\n]*\"|'[^'\n]*'", '""', _text(span))
        out.names |= idents & (set(_ATTR.findall(bare)) | set(_CALL.findall(bare)))


def test_use(tests: Mapping[str, str], failing: list[str]) -> TestUse:
    """The names and literals the failing tests use, from the files they live in: each
    test's own definition where it is found by name, else (no test found in any file) the
    whole files."""
    names = set().union(*(_test_names(t) for t in failing)) if failing else set()
    parsed = {p: _spans(t, p, names) for p, t in sorted(tests.items()) if _grammar(p)}
    out = TestUse()
    if any(parsed.values()):
        for path, spans in parsed.items():
            _use_of(spans, tests[path].splitlines(), out)
    else:
        for path, text in sorted(tests.items()):
            if _grammar(path):
                _use_of([parse(text, _grammar(path), path).root_node], text.splitlines(), out)
    out.literals = [x for x in out.literals if len(x.value.strip()) >= MIN_LITERAL and re.search(r"[A-Za-z]", x.value)]
    return out


_STARTS = r"(?!(?:return|if|elif|else|while|for|case|throw|raise|new|await|yield|assert|not|and|or)\b)"


def introduced(name: str, fix: str) -> bool:
    """The fix's added text defines ``name`` (a function, type or constant), declares it with
    a type before it (``int count(...)``), or assigns it (``self.name =``, ``name :=``): a name
    the code under test owns, not one of a library the agent knows."""
    n = re.escape(name)
    patterns = (
        rf"\b(?:def|func|function|fn|class|struct|enum|interface|trait|type|module|sub|const|let|var|val|define)"
        rf"\s+(?:\([^)]*\)\s*)?[*&]?{n}\b",
        rf"^\s*{_STARTS}(?:[\w<>\[\],*&:]+\s+)+[*&]?{n}\s*\([^;]*$",
        rf"(?:\.|->|@|\$this->){n}\s*=(?!=)",
        rf"^\s*{n}\s*(?::=|=(?!=)|:\s)",
    )
    return any(re.search(p, fix, re.M) for p in patterns)


def implicit_names(view: TaskView, use: TestUse | None = None) -> list[str]:
    """What the failing tests use that only the fix shows, sorted: names the fix introduces
    (``introduced``) as they are, literals quoted (``"invalid port"``)."""
    use = use or test_use(view.tests, view.failing)
    fix = "\n".join(added_lines(view.patch))
    shown = view.statement + "\n" + view.interface + "\n" + "\n".join(view.code.values())
    fix_tokens, shown_tokens = tokens(fix), tokens(shown)
    names = {n for n in use.names if n in fix_tokens and n not in shown_tokens and introduced(n, fix)}
    literals = {f'"{x.value}"' for x in use.literals if x.value in fix and x.value not in shown}
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
    """The statement's own words: without its list of failing tests (``- `name` `` lines) and
    without what it quotes (indented or fenced blocks: a test's output, verbatim)."""
    listed = set(listed_tests(statement))
    out, fenced = [], False
    for line in statement.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        quoted = fenced or line.startswith(("    ", "\t"))
        if not quoted and not (line.startswith("- ") and any(t in line for t in listed)):
            out.append(line)
    return "\n".join(out)


def named_tests(view: TaskView) -> list[str]:
    """The test names the statement's prose holds (a name that is also one of the code's own,
    as a test named after the function it checks, does not count)."""
    words = tokens(_prose(view.statement))
    owned = tokens(view.interface + "\n" + "\n".join(view.code.values()))
    names = {leaf_name(t) for t in [*view.failing, *view.names]}
    return sorted(n for n in names if len(n) >= 4 and n in words and n not in owned)


def exact_outputs(view: TaskView, use: TestUse) -> list[str]:
    """Literals the failing tests assert whose spacing matters (a tab, a run of spaces, a
    leading or trailing space), shown nowhere, and not an input of the code under test (an
    argument of one of its functions)."""
    shown = view.statement + "\n" + view.interface + "\n" + "\n".join(view.code.values())
    owned = tokens("\n".join(view.code.values()))
    out = set()
    for x in use.literals:
        if (_SIGNIFICANT_SPACE.search(x.value) and _ASSERTS.search(x.line) and x.value not in shown
                and x.callee not in owned):
            out.add(repr(x.value))
    return sorted(out)


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
