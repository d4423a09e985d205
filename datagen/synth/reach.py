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
from datagen.synth.entities import LANGS, Entity, parse
from datagen.synth.languages import spec

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


ENTRY_POINTS = frozenset({"main"})  # program entry points: defined by test files too, called by none


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
            if n in ENTRY_POINTS:  # a test executable's own ``main`` names no function of the repo's
                continue
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
    """group -> its test code: one per test file; with one test file, its blocks (``blocks``)."""
    files = sorted(p for p in test_paths if p in texts)
    if len(files) != 1:
        return {p: texts[p] for p in files}
    path = files[0]
    lang = lang_of.get(PurePosixPath(path).suffix, "")
    found = {f"{path}:{line}": code for line, code in blocks(texts[path], lang, path)} if lang in LANGS else {}
    return found if len(found) >= 2 else {path: texts[path]}


def blocks(text: str, lang: str, path: str = "") -> list[tuple[int, str]]:
    """(first line, code) of the top-level blocks of a test file: the items of its outermost
    level that holds two or more multi-line items (test functions, ``test(...)`` /
    ``describe`` calls, the examples of a lone ``describe``), whatever the language."""
    node = parse(text, lang, path).root_node
    for _ in range(8):
        big = [c for c in node.named_children if c.end_point[0] > c.start_point[0]]
        if len(big) != 1:
            break
        node = big[0]
    data = text.encode("utf-8")
    return [(c.start_point[0] + 1, data[c.start_byte:c.end_byte].decode("utf-8", "replace")) for c in big] \
        if len(big) >= 2 else []


def load_time(entities: list[Entity], texts: Mapping[str, str]) -> set[str]:
    """Ids of the functions that run when the repo's modules load: called from code outside
    every function (module level, class bodies), and what those call. A stub there would
    break every test, not a group's."""
    funcs = [e for e in entities if e.kind in FUNCS]
    by_path: dict[str, list[Entity]] = {}
    for e in funcs:
        if spec(e.lang).runs_on_load:
            by_path.setdefault(e.path, []).append(e)
    called: set[str] = set()
    for path, mine in by_path.items():
        data = bytearray(texts[path].encode("utf-8"))
        # comments are not code: a doc comment's example call (``braces.expand('a{b,c}')``) runs nothing
        for start, end in [*_comment_spans(bytes(data), mine[0].lang, path), *((e.start_byte, e.end_byte)
                                                                             for e in mine)]:
            data[start:end] = b" " * (end - start)
        called |= set(_CALL.findall(data.decode("utf-8", "replace")))
    by_name: dict[str, list[Entity]] = {}
    for e in entities:
        by_name.setdefault(e.name, []).append(e)
    data_of = {p: texts[p].encode("utf-8") for p in {e.path for e in funcs}}
    seen: set[str] = set()
    todo = [e for n in called for e in by_name.get(n, ())]
    while todo:
        e = todo.pop()
        if e.kind == "class":  # a class instantiated at load: its constructors
            todo += [m for m in funcs if m.path == e.path and m.qualname.startswith(e.qualname + ".")
                     and (m.name in CONSTRUCTORS or m.name == e.name)]
            continue
        if entity_id(e) in seen or e.kind not in FUNCS:
            continue
        seen.add(entity_id(e))
        body = data_of[e.path][e.start_byte:e.end_byte].decode("utf-8", "replace")
        todo += [x for n in set(_CALL.findall(body)) - {e.name} for x in by_name.get(n, ())]
    return seen


def _comment_spans(data: bytes, lang: str, path: str) -> list[tuple[int, int]]:
    """(start, end) bytes of every comment node of the file."""
    out: list[tuple[int, int]] = []
    todo = [parse(data, lang, path).root_node]
    while todo:
        node = todo.pop()
        if "comment" in node.type:
            out.append((node.start_byte, node.end_byte))
        else:
            todo.extend(node.children)
    return out


# a language's files run their top-level code when loaded (``LanguageSpec.runs_on_load``),
# calling the repo's own functions; a compiled language's top level declares (a C prototype
# reads like a call)
_CALL = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(")


def _idents(text: str) -> set[str]:
    return {m.rstrip("?!") for m in IDENT.findall(text)} | set(IDENT.findall(text))
