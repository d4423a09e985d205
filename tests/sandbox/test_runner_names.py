"""No runner name is compared outside its profile: Python is a profile like Go.

An AST check over every module of the ``datagen`` package but ``datagen/sandbox/harness/profiles/``:
a comparison (``==``, ``in``, ``match``) with a registered profile's name, a dict keyed by
profile names, or a profile named by a constant where a runner is asked for
(``get_profile("pytest")``, ``SuiteRunner("pytest", ...)``, ``runner="pytest"``) fails it.
Names that are also a language label (``go``) count only beside a ``runner`` / ``profile``
expression: ``lang == "go"`` is a language's code path, not a runner's.
"""

from __future__ import annotations

import ast
from pathlib import Path

import datagen
from datagen.sandbox.harness.profiles.registry import profile_names, profiles

PACKAGE = Path(datagen.__file__).parent
PROFILES = PACKAGE / "sandbox" / "harness" / "profiles"
# An ecosystem's environment package belongs to its profile (the pytest profile's plans).
ECOSYSTEM_ENVS = [PACKAGE / "sandbox" / "envs" / "python"]
NAMES = frozenset(profile_names())
LANGUAGES = frozenset(lang for p in profiles() for lang in (p.language, *p.source_langs))
RUNNER_CALLS = frozenset({"get_profile", "SuiteRunner", "run_tests", "as_profile_env", "language_of"})


def _strings(node: ast.AST | None) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return [s for e in node.elts for s in _strings(e)]
    return []


def _names_runner(node: ast.AST) -> bool:
    """Whether an expression reads as a runner or profile (``runner``, ``s.row.runner``, ``profile.name``)."""
    parts = [n.id if isinstance(n, ast.Name) else n.attr for n in ast.walk(node)
             if isinstance(n, ast.Name | ast.Attribute)]
    return any("runner" in p.lower() or "profile" in p.lower() for p in parts)


def _runner_names(values: list[str], beside_runner: bool) -> list[str]:
    return [v for v in values if v in NAMES and (v not in LANGUAGES or beside_runner)]


def runner_name_uses(source: str) -> list[tuple[int, str]]:
    """(line, what) of every runner name compared, keyed or passed as a constant in ``source``."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            beside = any(_names_runner(o) for o in operands)
            for name in _runner_names([s for o in operands for s in _strings(o)], beside):
                found.append((node.lineno, f"compares {name!r}"))
        elif isinstance(node, ast.Dict):
            keys = [s for k in node.keys for s in _strings(k)]
            if keys and len(keys) == len(node.keys) and all(k in NAMES for k in keys) \
                    and _runner_names(keys, False):
                found.append((node.lineno, f"a dict keyed by runner names {sorted(keys)}"))
        elif isinstance(node, ast.Match):
            beside = _names_runner(node.subject)
            for case in node.cases:
                for pattern in ast.walk(case.pattern):
                    if isinstance(pattern, ast.MatchValue):
                        for name in _runner_names(_strings(pattern.value), beside):
                            found.append((pattern.lineno, f"matches {name!r}"))
        elif isinstance(node, ast.Call):
            callee = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
            args = list(node.args) if callee in RUNNER_CALLS else []
            args += [k.value for k in node.keywords if k.arg in ("runner", "profile")]
            for name in _runner_names([s for a in args for s in _strings(a)], True):
                found.append((node.lineno, f"names the runner {name!r} in {callee or 'a call'}()"))
    return found


def test_the_check_finds_each_kind_of_use():
    planted = '''
if runner == "pytest":
    pass
if s.row.runner in ("go", "cargo"):
    pass
PARSERS = {"pytest": 1, "node": 2}
match profile.name:
    case "jest":
        pass
SuiteRunner("pytest", src)
get_profile("maven")
f(runner="rspec")
'''
    found = runner_name_uses(planted)
    assert sorted(line for line, _ in found) == [2, 4, 4, 6, 8, 10, 11, 12], found


def test_language_labels_and_other_words_pass():
    fine = '''
if lang == "go":
    pass
INTERPRETERS = {"node": "javascript", "python": "python"}
GRAMMARS = {"go": 1}
if tool == "python3":
    pass
x = Field("pytest", description="the default runner of old records")
'''
    assert runner_name_uses(fine) == []


def test_no_runner_name_is_compared_outside_its_profile():
    assert {"pytest", "node", "go", "cargo", "maven", "ctest", "rspec", "phpunit"} <= NAMES
    offences = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if PROFILES in path.parents or any(env in path.parents for env in ECOSYSTEM_ENVS):
            continue
        for line, what in runner_name_uses(path.read_text(encoding="utf-8")):
            offences.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {what}")
    assert not offences, "runner names outside datagen/sandbox/harness/profiles/ (give the profile an attribute " \
                         "or method instead):\n" + "\n".join(offences)
