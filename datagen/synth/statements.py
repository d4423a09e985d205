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


SHOWN_TESTS = 10  # failing tests a statement lists by name; the rest are counted ("and K more")

_PAIR = re.compile(r"^(expected|want|wanted|received|actual|got|left|right)\b\s*[:=]", re.I)
_ERROR = re.compile(r"AssertionError|AssertionFailedError|ComparisonFailure|\bassert(ion)?\b|\w+Error\b|"
                    r"\berror:|panic:|Failed asserting|\bexpected\b.*\b(got|but was|to (be|equal|eq))\b|"
                    r"\b(got|want)\b", re.I)
_NOISE = re.compile(r"^(--- FAIL|FAIL\b|not ok\b|ok\b|PASS\b|=+|-+|#|at |\d+ (tests?|examples?|failures?)\b|"
                    r"Tests?:|Traceback|File \")")


def first_error(output: str) -> str:
    """The first failure message of a test run, with the expected and actual values where the
    runner prints them: pytest's first ``E`` line; else the first line that reads as an
    assertion or error (JUnit, PHPUnit, node, Go's ``got ..., want ...``), joined with the
    expected / actual lines that follow it (RSpec, minitest, Jest, Rust's left / right)."""
    lines = [line.strip() for line in output.splitlines()]
    for raw in output.splitlines():
        if raw.startswith("E ") and raw[1:].strip():
            return raw[1:].strip()[:300]
    for i, line in enumerate(lines):
        if not line or _NOISE.match(line) or not (_PAIR.match(line) or _ERROR.search(line)):
            continue
        parts = [line]
        for nxt in lines[i + 1:i + 6]:
            if _PAIR.match(nxt):
                parts.append(nxt)
            elif nxt and len(parts) > 1:
                break
        return " / ".join(parts)[:300]
    return ""


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
    of FAIL_TO_PASS), the first ``SHOWN_TESTS`` by name and how many more, and the first
    error, left out when it would leak the fix."""
    shown, more = failing[:SHOWN_TESTS], max(0, len(failing) - SHOWN_TESTS)
    error = first_error(output)
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
