"""A task's ``interface``: what its solution implements or changes, as the agent will see it.

A feature task's interface is its stubbed functions (path, signature, doc comment: all of
it stays in the buggy tree). A bug task's is the functions its fix changes that the
failing tests call by name (a bug deep inside a helper the tests never name has none).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from datagen.records.tasks import InterfaceItem, interface_text
from datagen.synth.entities import LANGS, Entity, comment_above, extract_entities
from datagen.synth.reach import FUNCS
from datagen.synth.snapshot import is_test_file
from datagen.synth.soundness import TaskView, implicit_names
from datagen.synth.statements import tokens
from datagen.synth.stubs import signature

MAX_DOC_LINES = 8  # a doc comment longer than this is cut (its first lines say what it is)
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? ")


def doc_comment(text: str, e: Entity) -> str:
    """The comment lines right above ``e`` and its docstring (a string first in its body),
    stripped of comment markers and quotes, at most ``MAX_DOC_LINES`` lines."""
    lines = text.splitlines()
    above = [line.lstrip("#/*-! ").rstrip("*/ ").strip() for line in comment_above(lines, e)]
    body = lines[e.start_line:e.end_line]
    doc: list[str] = []
    first = next((i for i, x in enumerate(body[:3]) if x.strip().startswith(('"""', "'''"))), None)
    if first is not None:
        quote = body[first].strip()[:3]
        for i, line in enumerate(body[first:]):
            doc.append(line.strip().replace(quote, ""))
            if line.count(quote) >= (2 if i == 0 else 1):
                break
    out = [x for x in [*above, *doc] if x.strip()]
    return "\n".join(out[:MAX_DOC_LINES])


def _item(texts: Mapping[str, str], e: Entity) -> InterfaceItem:
    return InterfaceItem(path=e.path, name=e.qualname, signature=signature(texts[e.path], e),
                         doc=doc_comment(texts[e.path], e))


def _entities(texts: Mapping[str, str], langs: Mapping[str, str], paths: list[str]) -> list[Entity]:
    out = []
    for path in sorted(set(paths)):
        if path in texts and langs.get(path) in LANGS:
            out += [e for e in extract_entities(path, texts[path], langs[path]) if e.kind in FUNCS]
    return out


def changed_ranges(patch: str) -> dict[str, list[tuple[int, int]]]:
    """path -> the line ranges (1-based, inclusive) of the old side each hunk of ``patch``
    changes; the old side of a fix is the buggy file."""
    out: dict[str, list[tuple[int, int]]] = {}
    path = ""
    for line in patch.splitlines():
        if line.startswith("diff --git ") and " b/" in line:
            path = line.split(" b/", 1)[1]
        elif m := _HUNK.match(line):
            start, n = int(m.group(1)), int(m.group(2) or 1)
            out.setdefault(path, []).append((start, start + max(n, 1) - 1))
    return out


def feature_interface(texts: Mapping[str, str], entity: str, langs: Mapping[str, str]) -> list[InterfaceItem]:
    """The stubbed functions of a feature task (``path::qualname`` ids, ``;``-joined), read
    from the clean ``texts`` (their signatures and doc comments are the buggy tree's too)."""
    wanted = {e for e in entity.split(";") if e}
    paths = [w.partition("::")[0] for w in wanted]
    return [_item(texts, e) for e in _entities(texts, langs, paths) if f"{e.path}::{e.qualname}" in wanted]


def bug_interface(buggy: Mapping[str, str], patch: str, langs: Mapping[str, str],
                  tests_text: str) -> list[InterfaceItem]:
    """The functions of the buggy tree (``buggy``: the changed files' buggy texts) that the fix
    changes and the failing tests (``tests_text``) call by name; innermost first wins."""
    ranges = changed_ranges(patch)
    called = tokens(tests_text)
    out = []
    for e in _entities(buggy, langs, list(ranges)):
        hit = any(a <= e.end_line and e.start_line <= b for a, b in ranges[e.path])
        if hit and e.name in called:
            out.append(_item(buggy, e))
    return out


def task_interface(texts: Mapping[str, str], changes: Mapping[str, str | None], patch: str, entity: str,
                   langs: Mapping[str, str], failing: list[str], test_paths: list[str],
                   feature: bool) -> tuple[list[InterfaceItem], list[str]]:
    """(the task's interface, what its failing tests use that only the fix shows: the B2
    check's names, before any statement). ``texts``: the clean repo; ``changes``: the buggy
    text of each changed file (None: the bug deletes it); ``test_paths``: the failing tests' files."""
    buggy = {**texts, **{p: t for p, t in changes.items() if t is not None}}
    for p in [p for p, t in changes.items() if t is None]:
        buggy.pop(p, None)
    tests = {p: buggy[p] for p in test_paths if p in buggy}
    if feature:
        items = feature_interface(texts, entity, langs)
    else:
        items = bug_interface({p: buggy[p] for p in changes if p in buggy}, patch, langs, "\n".join(tests.values()))
    code = {p: t for p, t in buggy.items() if not is_test_file(p)}
    view = TaskView(statement="", interface=interface_text(items), patch=patch, failing=failing, tests=tests,
                    code=code)
    return items, implicit_names(view)
