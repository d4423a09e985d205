"""Candidates spread over the code: under any cap, the first N candidates touch N different
entities (round-robin over files, seeded), each entity's strategies come in its own seeded
order, and combined bugs sit in different files and functions."""

from __future__ import annotations

from itertools import islice
from pathlib import Path

from datagen.synth.baseline import Baseline
from datagen.synth.candidates import Candidate, covered_entities, propose, spread
from datagen.synth.mining import combine_candidates
from datagen.synth.snapshot import is_test_file
from tests.synth.helpers import LANG_OF, load_repo

SAMPLES = Path(__file__).resolve().parents[2] / "sample_data"
FAMILIES = ["procedural", "removal", "feature_removal"]


def _targets(repo: str, folders: tuple[str, ...]):
    texts = load_repo(SAMPLES / repo, folders)
    sources = [(p, LANG_OF[Path(p).suffix]) for p in sorted(texts) if not is_test_file(p)]
    targets, _ = covered_entities(sources, texts, Baseline("pytest"), 2)
    return texts, targets


def test_a_cap_of_n_touches_n_entities_over_every_file():
    texts, targets = _targets("tinyhttp", ("tinyhttp",))
    files = {t.entity.path for t in targets}
    assert len(targets) > 20 and len(files) > 2
    for cap in (6, 12, len(targets)):
        first = list(islice(propose("tinyhttp", targets, texts, FAMILIES, [], 0, 1, 4), cap))
        assert len({c.entity for c in first}) == cap  # no entity twice before all have one
        assert {c.entity.split("::")[0] for c in first[:len(files)]} == files  # every file in the first round
    everything = list(propose("tinyhttp", targets, texts, FAMILIES, [], 0, 1, 4))
    assert len({c.strategy for c in everything[:len(targets)]}) > 5  # first candidates differ in kind
    per_entity: dict[str, int] = {}
    for c in everything:
        per_entity[c.entity] = per_entity.get(c.entity, 0) + 1
    assert max(per_entity.values()) <= 4


def test_the_order_is_seeded():
    texts, targets = _targets("tinyhttp", ("tinyhttp",))
    ids = [[c.candidate_id for c in islice(propose("tinyhttp", targets, texts, FAMILIES, [], seed, 1, 4), 12)]
           for seed in (0, 0, 1)]
    assert ids[0] == ids[1] and ids[0] != ids[2]
    assert [t.entity.qualname for t in spread(targets, 0, "r")] == [t.entity.qualname for t in spread(targets, 0, "r")]


def _single(path: str, entity: str, text: str) -> Candidate:
    return Candidate("r", "x_v1", "procedural", f"{path}::{entity}", 0, {path: text})


def test_combined_bugs_take_the_closest_members():
    a = _single("pkg/a.py", "f", "A")
    a2 = _single("pkg/a.py", "g", "A2")
    b = _single("pkg/b.py", "h", "B")  # shares a failing test with a
    c = _single("other/c.py", "k", "C")
    kept = [a, a2, b, c]
    ids = {m.candidate_id: f"task-{i}" for i, m in enumerate(kept)}
    breaks = {a.candidate_id: {"t1"}, a2.candidate_id: {"t2"}, b.candidate_id: {"t1"}, c.candidate_id: {"t3"}}
    merged = combine_candidates("r", kept, 6, (2, 2), 0, ids, breaks)
    assert merged
    for m in merged:
        paths = list(m.changes)
        assert len(paths) == 2 and len(set(paths)) == 2  # each member in its own file
        assert len(m.entity.split(";")) == 2 and len(m.parent_ids) == 2
    pairs = {frozenset(m.changes) for m in merged}
    assert frozenset({"pkg/a.py", "pkg/b.py"}) in pairs  # the pair that shares test t1
    assert combine_candidates("r", [a, a2], 6, (2, 4), 0, ids, breaks) == []  # one file: nothing to merge


def test_two_functions_of_one_file_merge_when_their_edits_are_apart():
    from datagen.synth.mining import merge_edits

    clean = "def f():\n    return 1\n\n\ndef g():\n    return 2\n"
    a = clean.replace("return 1", "return 0")
    b = clean.replace("return 2", "return 3")
    assert merge_edits(clean, a, b) == "def f():\n    return 0\n\n\ndef g():\n    return 3\n"
    assert merge_edits(clean, a, clean.replace("return 1", "return 5")) is None  # the same line
    fa, gb = _single("m.py", "f", a), _single("m.py", "g", b)
    ids = {fa.candidate_id: "t-f", gb.candidate_id: "t-g"}
    (merged,) = combine_candidates("r", [fa, gb], 1, (2, 2), 0, ids, {}, {"m.py": clean})
    assert merged.changes == {"m.py": merge_edits(clean, a, b)} and merged.entity == "m.py::f;m.py::g"


def test_a_function_joins_one_combined_task_at_most():
    singles = [_single(f"pkg/m{i}.py", f"f{i}", f"T{i}") for i in range(9)]
    ids = {m.candidate_id: f"task-{i}" for i, m in enumerate(singles)}
    merged = combine_candidates("r", singles, 10, (2, 3), 0, ids, {})
    members = [e for m in merged for e in m.entity.split(";")]
    assert len(merged) >= 3 and len(members) == len(set(members))  # 9 functions: 3-4 merges, none shared
