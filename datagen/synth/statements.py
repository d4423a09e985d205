"""Problem statements: written from the failing tests and their output, never from the
diff, then checked for leaks of the fix.

A statement leaks when it quotes a line the fix adds, or names an identifier or literal
that appears only in the fix (nowhere in the repo the agent is given). Leaking teacher
statements fall back to the template; the template itself drops the error line when
that line would leak.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import jinja2

TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}|\d+(?:\.\d+)?|\"[^\"\n]{2,}\"|'[^'\n]{2,}'")
MIN_QUOTED_LINE = 12  # shorter added lines ("return x", "else:") are too common to count
PROMPTS = Path(__file__).parent / "prompts"  # one Jinja file per prompt, as in pool/ and score/
_ENV = jinja2.Environment(loader=jinja2.FileSystemLoader(str(PROMPTS)),
                          keep_trailing_newline=True, undefined=jinja2.StrictUndefined, autoescape=False)


def render(name: str, **values: object) -> str:
    """Render ``datagen/synth/prompts/<name>.jinja`` (prompts are data, edited without code)."""
    return _ENV.get_template(f"{name}.jinja").render(**values)


def tokens(text: str) -> set[str]:
    return set(TOKEN.findall(text))


def added_lines(patch: str) -> list[str]:
    """The lines a unified diff adds (without the ``+``)."""
    return [line[1:] for line in patch.splitlines() if line.startswith("+") and not line.startswith("+++")]


class RepoTokens:
    """How many files of the clean repo contain each token, so the tokens that exist only
    in a fix can be found by adjusting the counts for the files a candidate changes."""

    def __init__(self, texts: Mapping[str, str]):
        self.texts = texts
        self.counts: Counter[str] = Counter()
        for text in texts.values():
            self.counts.update(tokens(text))

    def fix_only(self, buggy: Mapping[str, str | None], patch: str) -> set[str]:
        """Tokens the fix adds that the buggy repo (clean repo with ``buggy`` files) lacks."""
        counts = Counter()
        for path, text in buggy.items():
            counts.update({t: -1 for t in tokens(self.texts.get(path, ""))})
            counts.update(tokens(text or ""))
        return {t for t in tokens("\n".join(added_lines(patch))) if self.counts[t] + counts[t] <= 0}


def leak(statement: str, patch: str, fix_only: set[str]) -> str | None:
    """Why ``statement`` gives the fix away, or None."""
    flat = " ".join(statement.split())
    for line in added_lines(patch):
        quoted = " ".join(line.split())
        if len(quoted) >= MIN_QUOTED_LINE and quoted in flat:
            return "quotes_fix_line"
    named = tokens(statement) & fix_only
    return f"names_fix_token:{sorted(named)[0]}" if named else None


_ID_PARTS = re.compile(r"::|/| > |#|\.(?=[A-Za-z_])")  # how test ids join their parts
_PARAMS = re.compile(r"(?<=[^\s\[])\[.*\]$")  # a parametrized test's ``[...]`` suffix
SHOWN_TESTS = 10  # failing tests a statement lists by name; the rest are counted ("and K more")

_PAIR = re.compile(r"^(expected|want|wanted|received|actual|got|left|right)\b\s*[:=]", re.I)
_ERROR = re.compile(r"AssertionError|AssertionFailedError|ComparisonFailure|\bassert(ion)?\b|\w+Error\b|"
                    r"\berror:|panic:|Failed asserting|\bexpected\b.*\b(got|but was|to (be|equal|eq))\b|"
                    r"\b(got|want)\b", re.I)
_NOISE = re.compile(r"^(--- FAIL|FAIL\b|not ok\b|ok\b|PASS\b|=+|-+|#|at |\d+ (tests?|examples?|failures?)\b|"
                    r"Tests?:|Traceback|File \")")


def id_parts(test_id: str) -> list[str]:
    """The parts a test id joins: ``tests/x.py::Cls::test_y[1]`` -> ``tests``, ``x.py``, ``Cls``,
    ``test_y[1]``; ``pkg::TestX/sub``, ``hull.order_ccw``, ``Suite > case``, ``a.B#m`` alike."""
    return _ID_PARTS.split(test_id.strip())


def leaf_name(test_id: str) -> str:
    """A test id's own name, its last part without parameters: ``tests/x.py::Cls::test_y[1]``
    -> ``test_y``, ``pkg::TestX/sub`` -> ``sub``, ``Suite > case`` -> ``case``, ``a.B#m(int)[2]``
    -> ``m(int)``; a title with a bracket of its own (``keeps [a] apart``) stays whole."""
    leaf = id_parts(test_id)[-1].strip()
    return _PARAMS.sub("", leaf).strip()


def _error_at(lines: list[str], i: int) -> str:
    """The error line ``lines[i]`` joined with the expected / actual lines that follow it."""
    parts = [lines[i]]
    for nxt in lines[i + 1:i + 6]:
        if _PAIR.match(nxt):
            parts.append(nxt)
        elif nxt and len(parts) > 1:
            break
    return " / ".join(parts)[:300]


def _errors(output: str) -> dict[int, str]:
    """Line number -> the error that starts there: pytest's ``E`` lines where the output has
    any, else the lines that read as an assertion or error (with their expected / actual)."""
    raw = output.splitlines()
    pytest_errors = {i: line[1:].strip()[:300] for i, line in enumerate(raw)
                     if line.startswith("E ") and line[1:].strip()}
    if pytest_errors:
        return pytest_errors
    lines = [line.strip() for line in raw]
    return {i: _error_at(lines, i) for i, line in enumerate(lines)
            if line and not _NOISE.match(line) and (_PAIR.match(line) or _ERROR.search(line))}


def _mentions(lines: list[str], leaves: set[str]) -> list[tuple[int, str]]:
    """(line number, test leaf) for each line that names a failing test (its leaf standing as
    a word of its own), the last name where a line holds several."""
    if not leaves:
        return []
    alternatives = "|".join(re.escape(leaf) for leaf in sorted(leaves, key=lambda x: (-len(x), x)))
    named = re.compile(rf"(?<!\w)(?:{alternatives})(?!\w)")
    found = []
    for i, line in enumerate(lines):
        hits = named.findall(line)
        if hits:
            found.append((i, hits[-1]))
    return found


def _own_errors(lines: list[str], errors: dict[int, str], failing: list[str]) -> dict[str, list[tuple[int, str]]]:
    """Test leaf -> (distance, error): the first error after each line that names the test,
    before the next line naming a failing test (a failure header and the message under it)."""
    mentions = _mentions(lines, {leaf_name(t) for t in failing} - {""})
    own: dict[str, list[tuple[int, str]]] = {}
    for k, (i, leaf) in enumerate(mentions):
        stop = mentions[k + 1][0] if k + 1 < len(mentions) else len(lines)
        first = next(((j - i, errors[j]) for j in range(i + 1, stop) if j in errors), None)
        if first is not None:
            own.setdefault(leaf, []).append(first)
    return own


def first_error(output: str, failing: list[str] | None = None) -> str:
    """The failure message a statement quotes, with the expected and actual values where the
    runner prints them, chosen from the SET of failures the output shows, never their order
    (runners print tests in a varying order: parallel packages, threads, workers).

    An error is pytest's ``E`` line where the output has any, else a line that reads as an
    assertion or error (JUnit, PHPUnit, node, Go's ``got ..., want ...``) joined with the
    expected / actual lines after it (RSpec, minitest, Jest, Rust's left / right). The message
    is the failing tests' own, in sorted order: the first error under a line that names the
    test (its ``leaf_name``); where it is named several times, the nearest to its name, the
    smallest of those (a summary after the last name lies further away than a header's
    message). Where no failing test is named above an error: the smallest error that starts
    a run of them."""
    errors = _errors(output)
    if not errors:
        return ""
    lines = output.splitlines()
    own = _own_errors(lines, errors, failing or [])
    for test in sorted(failing or []):
        if found := own.get(leaf_name(test)):
            return min(found)[1]
    return min(e for i, e in errors.items() if i - 1 not in errors)


def code_span(text: str) -> str:
    """``text`` as one Markdown code span (CommonMark): fenced by one more backtick than its
    longest run of backticks, padded with a space where it starts or ends with one, so a
    test named ``parses `null``` stays one span."""
    runs = [len(r) for r in re.findall(r"`+", text)]
    fence = "`" * (max(runs, default=0) + 1)
    pad = " " if runs and (text.startswith("`") or text.endswith("`")) else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def listed_tests(text: str) -> list[str]:
    """The test names a template statement lists (``- `name` `` items; a name holding
    backticks is fenced by more of them, CommonMark's code span)."""
    out = []
    for _, body in re.findall(r"^- (`+)(.+?)\1$", text, re.M):
        out.append(body[1:-1] if body.startswith(" ") and body.endswith(" ") and body.strip() else body)
    return out


@dataclass
class Statement:
    text: str
    style: str  # issue | terse | template
    note: str = ""  # why a teacher statement was not used


def template_statement(repo: str, failing: list[str], output: str, patch: str,
                       fix_only: set[str]) -> Statement:
    """The statement written without a teacher (style ``template``): how many tests fail (all
    of FAIL_TO_PASS), the first ``SHOWN_TESTS`` by name and how many more, and a failing
    test's message (``first_error``), left out when it would leak the fix."""
    shown, more = failing[:SHOWN_TESTS], max(0, len(failing) - SHOWN_TESTS)
    error = first_error(output, failing)
    values = {"repo": repo, "total": len(failing), "failing": [code_span(t) for t in shown], "more": more}
    text = render("statement_template", **values, error=error)
    if error and leak(text, patch, fix_only):
        text = render("statement_template", **values, error="")
    return Statement(text.strip() + "\n", "template")


def feature_statement(repo: str, api: list[tuple[str, str]], failing: list[str], patch: str,
                      fix_only: set[str]) -> Statement:
    """The template statement of a ``feature`` task: the interface to implement (each stubbed
    function's file and signature, all of them in the buggy tree already) and the tests that
    must pass (all of FAIL_TO_PASS, the first ``SHOWN_TESTS`` by name). A signature that would
    leak the fix (it cannot: signatures are kept) is left out."""
    kept = [(path, sig) for path, sig in api if not leak(sig, patch, fix_only)]
    shown, more = failing[:SHOWN_TESTS], max(0, len(failing) - SHOWN_TESTS)
    text = render("statement_feature", repo=repo, interface=grouped(kept), n_entities=len(api),
                  total=len(failing), failing=[code_span(t) for t in shown], more=more)
    return Statement(text.strip() + "\n", "template")


def grouped(api: list[tuple[str, str]]) -> list[tuple[str, list[str]]]:
    """(path, signatures) pairs, by path in order."""
    by_path: dict[str, list[str]] = {}
    for path, sig in api:
        by_path.setdefault(path, []).append(sig)
    return sorted(by_path.items())


def statement_prompt(style: str, repo: str, failing: list[str], output: str, test_source: str,
                     max_chars: int, names: list[str] | None = None) -> str:
    """The teacher prompt for one statement: tests and their output, never the diff; ``names``:
    what the tests need that only the fix shows, which the statement must give."""
    trimmed = output if len(output) <= max_chars else output[: max_chars // 2] + "\n...\n" + output[-max_chars // 2:]
    return render(f"statement_{style}", repo=repo, failing=failing[:SHOWN_TESTS],
                  more=max(0, len(failing) - SHOWN_TESTS), output=trimmed.strip(), test_source=test_source.strip(),
                  names=names or [])


def given(names: list[str]) -> set[str]:
    """The tokens of ``names`` (``implicit_names``), quoted and not: a statement may name them
    without leaking."""
    text = " ".join(names)
    return tokens(text) | tokens(re.sub(r"[\"']", " ", text))


def with_names(statement: Statement, names: list[str]) -> Statement:
    """``statement`` with the names and messages its failing tests need that only the fix
    shows (``soundness.implicit_names``) added as a last line, those it does not name yet:
    an agent cannot guess them, and naming them gives nothing away the tests do not show."""
    missing = [n for n in names if n not in statement.text]
    if not missing:
        return statement
    line = render("statement_names", names=[code_span(n) for n in missing]).strip()
    return Statement(statement.text.rstrip("\n") + "\n\n" + line + "\n", statement.style, statement.note)
