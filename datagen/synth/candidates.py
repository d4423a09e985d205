"""Candidates: seeded changes that strategies propose for a repo's covered entities.

A candidate is identified by a hash of its repo, strategy, target and the change itself,
so the same recipe and seed always propose the same candidates, and two strategies that
happen to make the same change give one candidate (the second is recorded as
``duplicate_patch``).
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from datagen.synth.baseline import Baseline
from datagen.synth.entities import Entity, extract_entities
from datagen.synth.strategies.registry import strategies_for


@dataclass
class Candidate:
    repo: str
    strategy: str
    family: str
    entity: str  # "path::qualname", "" when the change targets no single entity
    seed: int
    changes: dict[str, str | None]  # path -> buggy text (None: file removed)
    covering: list[str] = field(default_factory=list)  # stable tests that reach the change
    parent_ids: list[str] = field(default_factory=list)
    teacher_tokens: int = 0
    drop: str | None = None  # why it was dropped before validation (a teacher answer that failed a check)

    @property
    def candidate_id(self) -> str:
        if self.drop is not None:  # no change to hash: the attempt itself names it
            attempt = f"#{self.strategy}:{self.entity}:{self.seed}:{','.join(self.parent_ids)}"
            return change_id(self.repo, {attempt: self.drop})
        return change_id(self.repo, self.changes)


def change_id(repo: str, changes: Mapping[str, str | None]) -> str:
    """Content hash of a change (what makes two candidates the same)."""
    blob = json.dumps([repo, sorted(changes.items(), key=lambda kv: kv[0])], ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def derive_seed(*parts: object) -> int:
    """A seed for one (recipe seed, repo, entity, strategy, try): stable across runs."""
    return int.from_bytes(hashlib.sha256("\0".join(map(str, parts)).encode()).digest()[:8], "big") >> 1  # fits BIGINT


@dataclass
class Target:
    entity: Entity
    covering: list[str]


def covered_entities(sources: list[tuple[str, str]], texts: Mapping[str, str], base: Baseline,
                     min_lines: int) -> tuple[list[Target], int]:
    """Entities that stable tests reach (all of them when there is no per-test coverage,
    as with node's runner),
    and the number of entities found in total."""
    targets, total = [], 0
    for path, lang in sources:
        for entity in extract_entities(path, texts[path], lang):
            total += 1
            if entity.n_lines < min_lines:
                continue
            covering: list[str] = []  # empty: the whole suite checks it
            if base.line_tests:
                covering = base.tests_reaching(path, entity.start_line + 1, entity.end_line)
                if not covering:
                    continue
            targets.append(Target(entity, covering))
    return targets, total


def spread(targets: list[Target], seed: int, repo: str) -> list[Target]:
    """``targets`` in round-robin order over their files (files and the entities of each file
    in a seeded order): the first entity of every file, then the second of every file, ...
    So the first N of them are N different entities in as many files as there are."""
    by_file: dict[str, list[Target]] = {}
    for t in targets:
        by_file.setdefault(t.entity.path, []).append(t)
    rng = random.Random(derive_seed(seed, repo, "spread"))
    files = sorted(by_file)
    rng.shuffle(files)
    queues = []
    for f in files:
        mine = sorted(by_file[f], key=lambda t: (t.entity.start_line, t.entity.qualname))
        rng.shuffle(mine)
        queues.append(mine)
    out = []
    for depth in range(max((len(q) for q in queues), default=0)):
        out += [q[depth] for q in queues if depth < len(q)]
    return out


def propose(repo: str, targets: list[Target], texts: Mapping[str, str], families: list[str],
            names: list[str], seed: int, seeds_per_pair: int, per_entity: int) -> Iterator[Candidate]:
    """Every candidate the chosen strategies make for ``targets``, in a stable order that
    spreads them over the code: round ``k`` gives the ``k``-th candidate of every entity (in
    ``spread`` order) before any entity gets its ``k+1``-th, each entity trying the strategies
    that apply to it in its own seeded order. Any prefix (a candidate cap) therefore touches
    as many different entities as it can."""
    chosen = [s for s in strategies_for() if s.family in families and (not names or s.name in names)]
    queues = [_entity_candidates(repo, t, texts, chosen, seed, seeds_per_pair, per_entity)
              for t in spread(targets, seed, repo)]
    while queues:
        alive = []
        for q in queues:
            c = next(q, None)
            if c is not None:
                yield c
                alive.append(q)
        queues = alive


def _entity_candidates(repo: str, target: Target, texts: Mapping[str, str], chosen: list, seed: int,
                       seeds_per_pair: int, per_entity: int) -> Iterator[Candidate]:
    """Up to ``per_entity`` candidates for one entity, its applicable strategies in a seeded order."""
    e = target.entity
    order = [s for s in chosen if s.applies_to(e)]
    random.Random(derive_seed(seed, repo, e.path, e.qualname, "strategies")).shuffle(order)
    made = 0
    for strategy in order:
        for k in range(seeds_per_pair):
            if made >= per_entity:
                return
            s = derive_seed(seed, repo, e.path, e.qualname, strategy.name, k)
            changes = strategy.transform_repo(texts, e, random.Random(s))
            if not changes:
                continue
            made += 1
            yield Candidate(repo, strategy.name, strategy.family, f"{e.path}::{e.qualname}", s,
                            dict(changes), target.covering)
