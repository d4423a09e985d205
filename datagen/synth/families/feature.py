"""The ``feature`` family: a whole feature removed along what a group of tests reaches.

For each group of tests (``reach``), the feature is the functions and methods the group
reaches that the rest of the suite reaches least: those the fewest other groups reach
first, each taken while all the groups the feature reaches together stay at most half of
the groups (rounded up), up to its most size. Each is removed as one unit,
across files: its body becomes the language's stub (``stubs``), its signature, types and
doc comments stay, so the interface the tests call is the specification. A feature
outside ``synth.feature_lines`` / ``synth.feature_entities`` is not proposed; the largest
features come first in the repo's share (``synth.feature_share``), and those that span
files before them when ``synth.feature_multi_file`` is on. Validation keeps one only when
tests outside its group still pass (PASS_TO_PASS >= 1).
"""

from __future__ import annotations

import difflib
import random
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath

from datagen.sandbox.harness.profiles.registry import get_profile
from datagen.synth.candidates import Candidate, derive_seed
from datagen.synth.entities import Entity, comment_above, extract_entities
from datagen.synth.families.registry import Family, Proposal, register, share_budget
from datagen.synth.reach import FUNCS, coverage_reach, entity_id, load_time, static_reach
from datagen.synth.source import Source
from datagen.synth.stubs import signature, stub_edit, stub_file

STRATEGY = "feature_v1"
FAMILY = "feature"


@dataclass(frozen=True)
class FeatureSize:
    lines: tuple[int, int] = (30, 400)  # least and most changed lines (added + removed)
    entities: tuple[int, int] = (2, 40)  # least and most stubbed functions
    multi_file: bool = True  # features that span files first


def changed_line_count(texts: Mapping[str, str], changes: Mapping[str, str | None]) -> int:
    """Lines a change adds plus lines it removes (as its unified diff counts them)."""
    n = 0
    for path, new in changes.items():
        diff = difflib.unified_diff(texts.get(path, "").splitlines(), (new or "").splitlines(), lineterm="", n=0)
        n += sum(1 for line in diff if line[:1] in "+-" and not line.startswith(("+++", "---")))
    return n


def choose(group: str, funcs: list[Entity], reach: Mapping[str, set[str]], n_groups: int,
           most_entities: int) -> list[Entity]:
    """The entities of ``group``'s feature, in the order they were chosen: those the fewest
    other groups reach first, each taken while the groups the feature reaches together stay
    at most half of all groups (rounded up), so the rest of the suite can still pass."""
    mine = [e for e in funcs if group in reach.get(entity_id(e), ())]
    mine.sort(key=lambda e: (len(reach[entity_id(e)]), e.path, e.start_line, e.qualname))
    most_groups = max(1, (n_groups + 1) // 2)
    out: list[Entity] = []
    broken: set[str] = {group}
    for e in mine:
        grown = broken | reach[entity_id(e)]
        if len(grown) > most_groups:
            continue
        out.append(e)
        broken = grown
        if len(out) >= most_entities:
            break
    return out


def feature_candidates(repo: str, entities: list[Entity], texts: Mapping[str, str],
                       reach: Mapping[str, set[str]], n: int, size: FeatureSize, seed: int) -> list[Candidate]:
    """Up to ``n`` feature candidates of one repo (``feature_proposal``'s candidates)."""
    return feature_proposal(repo, entities, texts, reach, n, size, seed)[0]


def feature_proposal(repo: str, entities: list[Entity], texts: Mapping[str, str], reach: Mapping[str, set[str]],
                     n: int, size: FeatureSize, seed: int) -> tuple[list[Candidate], str]:
    """Up to ``n`` feature candidates of one repo, one per group at most (distinct changes):
    multi-file ones first when ``size.multi_file``, then the largest (changed lines), then
    in a seeded order of groups; and, when there is none, why (one line: no share of the
    budget, no group, no function with a stub that compiles, none of a feature's size). What
    runs when the modules load (``reach.load_time``) is never part of a feature: its stub
    would break every test. A function whose stub would not compile (``stubs.stub_edit``:
    C++ ``constexpr``, Rust ``const fn``) is never chosen, so the others are."""
    if n <= 0:
        return [], "no share of the budget (synth.feature_share x synth.max_candidates_per_repo)"
    if not reach:
        return [], "no test group reaches a function (no per-test coverage, no test file names one)"
    loading = load_time(entities, texts)
    funcs = [e for e in entities if e.kind in FUNCS and entity_id(e) not in loading and entity_id(e) in reach]
    costs = stub_costs(funcs, texts)
    reached = len(funcs)
    funcs = [e for e in funcs if entity_id(e) in costs]
    groups = sorted({g for gs in reach.values() for g in gs})
    if not funcs:
        return [], (f"{len(groups)} test groups reach {reached} functions (outside load time), none with a body "
                    "a stub can replace and still compile (constexpr, const fn, one-line or missing bodies)")
    rng = random.Random(derive_seed(seed, repo, FAMILY))
    rng.shuffle(groups)
    found: dict[str, Candidate] = {}
    lines: dict[str, int] = {}
    tried: set[tuple[str, ...]] = set()
    refused = 0
    for group in groups:
        picked = _within(choose(group, funcs, reach, len(groups), size.entities[1]), costs, size)
        key = tuple(sorted(entity_id(e) for e in picked))
        if not picked or key in tried:
            continue
        tried.add(key)
        made = _stub(picked, texts, size)
        if made is None:
            refused += 1
            continue
        changes, stubbed, n_lines = made
        ids = sorted(entity_id(e) for e in stubbed)
        c = Candidate(repo, STRATEGY, FAMILY, ";".join(ids), derive_seed(seed, repo, FAMILY, group), changes)
        found.setdefault(c.candidate_id, c)
        lines[c.candidate_id] = n_lines
    out = list(found.values())
    # stable: the seeded order among features of one kind and size
    out.sort(key=lambda c: (size.multi_file and len(c.changes) < 2, -lines[c.candidate_id]))
    if out:
        return out[:n], ""
    return [], (f"{len(groups)} test groups, {len(funcs)} of {reached} reached functions with a stub that "
                f"compiles: no group's feature has {size.lines[0]}-{size.lines[1]} changed lines and "
                f"{size.entities[0]}-{size.entities[1]} functions (synth.feature_lines, synth.feature_entities)"
                + (f"; {refused} whose stubbed files did not parse" if refused else ""))


def stub_costs(funcs: list[Entity], texts: Mapping[str, str]) -> dict[str, int]:
    """entity id -> the lines its stub changes (removed plus added), for every function whose
    body a stub can replace; each file parsed once."""
    by_path: dict[str, list[Entity]] = {}
    for e in funcs:
        by_path.setdefault(e.path, []).append(e)
    out = {}
    for path, mine in by_path.items():
        src = Source.parse(path, texts[path], mine[0].lang)
        for e in mine:
            edit = stub_edit(src, e)
            if edit is None:
                continue
            start, end, new = edit
            a, b = src.line_start(start), src.line_end(max(start, end - 1))
            old = src.data[a:b].decode("utf-8", "replace")
            now = src.data[a:start].decode("utf-8", "replace") + new + src.data[end:b].decode("utf-8", "replace")
            out[entity_id(e)] = changed_line_count({path: old}, {path: now})
    return out


def _within(picked: list[Entity], costs: Mapping[str, int], size: FeatureSize) -> list[Entity]:
    """The entities of ``picked``, in order, that keep the feature within its most lines
    (one inside another already taken is left out: the outer stub removes it)."""
    out: list[Entity] = []
    total = 0
    for e in picked:
        cost = costs[entity_id(e)]
        nested = any(x.path == e.path and x.start_byte <= e.start_byte and e.end_byte <= x.end_byte or
                     x.path == e.path and e.start_byte <= x.start_byte and x.end_byte <= e.end_byte for x in out)
        if nested or total + cost > size.lines[1]:
            continue
        out.append(e)
        total += cost
    if len(out) < size.entities[0] or total < size.lines[0]:
        return []
    return out


def _stub(picked: list[Entity], texts: Mapping[str, str], size: FeatureSize
          ) -> tuple[dict[str, str], list[Entity], int] | None:
    """The changes stubbing ``picked`` (each file once), the entities stubbed and the lines
    changed; None when a file's result is refused or the feature falls outside its size."""
    by_path: dict[str, list[Entity]] = {}
    for e in picked:
        by_path.setdefault(e.path, []).append(e)
    changes: dict[str, str] = {}
    done: list[Entity] = []
    for path, mine in sorted(by_path.items()):
        made = stub_file(path, texts[path], mine)
        if made is None:
            return None
        changes[path] = made[0]
        done += made[1]
    lines = changed_line_count(texts, changes)
    if len(done) < size.entities[0] or not size.lines[0] <= lines <= size.lines[1]:
        return None
    return changes, done, lines


def interface(texts: Mapping[str, str], entity: str, langs: Mapping[str, str]) -> list[tuple[str, str]]:
    """(path, signature) of each stubbed entity of a feature candidate (``path::qualname``
    ids, ``;``-joined), from the clean ``texts``; ``langs``: path -> language. A method's
    signature is prefixed by its owner (``Router: def add(self, ...)``) unless it names it."""
    by_path: dict[str, set[str]] = {}
    for eid in (e for e in entity.split(";") if e):
        path, _, qual = eid.partition("::")
        by_path.setdefault(path, set()).add(qual)
    out = []
    for path in sorted(by_path):
        if path not in texts or path not in langs:
            continue
        for e in extract_entities(path, texts[path], langs[path]):
            if e.qualname in by_path[path] and e.kind in FUNCS:
                sig, owner = signature(texts[path], e), e.qualname.rpartition(".")[0]
                out.append((path, f"{owner}: {sig}" if owner and owner.split(".")[-1] not in sig else sig))
    return out


def doc_comments(texts: Mapping[str, str], entity: str, langs: Mapping[str, str]) -> str:
    """The doc comments of a feature's stubbed functions (the comment lines right above each,
    a Python docstring): what a teacher's request may draw on, all of it in the buggy tree."""
    out = []
    wanted = {e for e in entity.split(";") if e}
    for path in sorted({w.partition("::")[0] for w in wanted}):
        if path not in texts or path not in langs:
            continue
        lines = texts[path].splitlines()
        for e in extract_entities(path, texts[path], langs[path]):
            if f"{path}::{e.qualname}" not in wanted:
                continue
            above = comment_above(lines, e)
            body = lines[e.start_line:e.end_line]
            doc = next((x.strip() for x in body[:2] if x.strip().startswith(('"""', "'''"))), "")
            if above or doc:
                out.append(f"{e.qualname}: " + " ".join([*above, doc]).strip())
    return "\n".join(out)


def propose_features(p: Proposal, names: list[str]) -> list[Candidate]:
    """The repo's feature candidates: what each group of its tests reaches (per-test
    coverage where the baseline has it, else the static reach from the test code), less
    what the other groups reach, stubbed (``synth.feature_*``)."""
    profile = get_profile(p.runner)
    entities = [e for path, lang in p.sources for e in extract_entities(path, p.texts[path], lang)]
    reach = coverage_reach(p.baseline, entities, profile.test_group) if p.baseline and p.baseline.line_tests else {}
    if len({frozenset(g) for g in reach.values()}) < 2:  # no coverage, or one that tells no group apart
        # (a runner that traces per file, not per test)
        lang_of = {PurePosixPath(path).suffix: lang for path, lang in p.sources}
        tests = [t for t in sorted(p.texts) if PurePosixPath(t).suffix in lang_of and profile.is_test_file(t)]
        reach = static_reach(entities, p.texts, tests, lang_of)
    s = p.cfg.synth
    size = FeatureSize(tuple(s.feature_lines), tuple(s.feature_entities), s.feature_multi_file)
    found, why = feature_proposal(p.repo.name, entities, p.texts, reach,
                                  share_budget(p.cfg, FEATURE, s.max_candidates_per_repo), size, p.cfg.seed)
    p.row["feature_detail"] = why  # why the family proposed nothing here
    return found


FEATURE = register(Family(FAMILY, "a whole feature removed along what a group of tests reaches",
                          propose=propose_features, share=lambda s: s.feature_share,
                          interface=interface, doc_comments=doc_comments))
