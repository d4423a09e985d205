"""Which of a repo's functions each group of its tests reaches.

A group is a test file, class, ``describe`` block or test function family: whatever the
profile's ``test_group`` makes of a test id. Two ways to know what a group reaches:

- **coverage** (the profile's per-test line coverage, ``Baseline.line_tests``): an entity
  is reached by the groups of the stable tests that execute its body;
- **static** (every other profile): the identifiers a group's test code uses name the
  repo's entities (functions and methods by name, a class by its constructors), and each
  reached entity's own identifiers name more, followed until nothing new is reached. The
  groups are the repo's test files; a repo with one test file is split by its test
  functions instead.

Both give ``entity id -> groups``; the ``feature`` family picks from it what a group
reaches and the rest of the suite reaches least.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import PurePosixPath

from datagen.synth.baseline import Baseline
from datagen.synth.entities import LANGS, Entity, extract_entities

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*[?!]?")
# the names a class's constructor goes by (besides the class's own, as in Java and C++)
CONSTRUCTORS = frozenset({"__init__", "__new__", "constructor", "initialize", "__construct", "new"})
FUNCS = frozenset({"function", "method"})


def entity_id(e: Entity) -> str:
    return f"{e.path}::{e.qualname}"


def coverage_reach(base: Baseline, entities: Iterable[Entity], group_of: Callable[[str], str]
                   ) -> dict[str, set[str]]:
    """entity id -> the groups whose stable tests execute its body (per-test coverage).
    With fewer than two groups, every test is a group of its own."""
    stable = sorted(base.stable)
    if len({group_of(t) for t in stable}) < 2:
        def group_of(t: str) -> str:
            return t
    out: dict[str, set[str]] = {}
    for e in entities:
        tests = base.tests_reaching(e.path, e.start_line + 1, e.end_line)
        if tests:
            out[entity_id(e)] = {group_of(t) for t in tests}
    return out


def static_reach(entities: list[Entity], texts: Mapping[str, str], test_paths: list[str],
                 lang_of: Mapping[str, str]) -> dict[str, set[str]]:
    """entity id -> the test files (or, with one test file, its test functions) whose code
    reaches it by name, through calls. ``lang_of`` maps a file suffix to its language."""
    groups = _static_groups(texts, test_paths, lang_of)
    by_name: dict[str, list[Entity]] = {}
    for e in entities:
        by_name.setdefault(e.name, []).append(e)
    ctors: dict[str, list[Entity]] = {}  # class id -> its constructors
    for e in entities:
        if e.kind == "method" and (e.name in CONSTRUCTORS or e.qualname.endswith(f"{e.name}.{e.name}")):
            ctors.setdefault(f"{e.path}::{e.qualname.rpartition('.')[0]}", []).append(e)
    data = {p: texts[p].encode("utf-8") for p in {e.path for e in entities}}
    calls: dict[str, set[str]] = {}
    for e in entities:
        if e.kind in FUNCS:
            calls[entity_id(e)] = _idents(data[e.path][e.start_byte:e.end_byte].decode("utf-8", "replace"))

    def named(names: Iterable[str]) -> list[Entity]:
        found = []
        for n in names:
            for e in by_name.get(n, ()):
                found += ctors.get(entity_id(e), []) if e.kind == "class" else [e]
        return found

    out: dict[str, set[str]] = {}
    for group, code in groups.items():
        seen: set[str] = set()
        todo = named(_idents(code))
        while todo:
            e = todo.pop()
            eid = entity_id(e)
            if eid in seen or e.kind not in FUNCS:
                continue
            seen.add(eid)
            todo += named(calls[eid] - {e.name})
        for eid in seen:
            out.setdefault(eid, set()).add(group)
    return out


def _static_groups(texts: Mapping[str, str], test_paths: list[str], lang_of: Mapping[str, str]) -> dict[str, str]:
    """group -> its test code: one per test file, or per test function when there is one file."""
    files = sorted(p for p in test_paths if p in texts)
    if len(files) != 1:
        return {p: texts[p] for p in files}
    path = files[0]
    lang = lang_of.get(PurePosixPath(path).suffix, "")
    if lang not in LANGS:
        return {path: texts[path]}
    data = texts[path].encode("utf-8")
    found = {f"{path}::{e.qualname}": data[e.start_byte:e.end_byte].decode("utf-8", "replace")
             for e in extract_entities(path, texts[path], lang) if e.kind in FUNCS}
    return found if len(found) >= 2 else {path: texts[path]}


def _idents(text: str) -> set[str]:
    return {m.rstrip("?!") for m in IDENT.findall(text)} | set(IDENT.findall(text))
