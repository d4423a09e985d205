"""Pool hygiene: near-duplicate statements, benchmark decontamination, split by repository.

Each check returns ``PoolDropRow``s (instruction, reason, detail) instead of filtering in
place, so the build keeps every dropped instruction in the manifest with its reason:

- ``near_duplicates``: MinHash + LSH over problem statements with the signatures and band
  hashes of ``datagen.curate.minhash`` (the CPT corpus's near dedup); candidate pairs are
  verified by estimated Jaccard. Reason ``near_duplicate``, detail ``duplicate_of:<id>``.
- ``decontaminate``: ``datagen.curate.decontam``'s n-gram index over the benchmark files
  (reason ``contaminated``, detail ``<benchmark:row> <span>``) and its eval-repository list
  (reason ``eval_repo``).
- ``assign_splits``: a whole repository goes to ``validation`` when it is listed in
  ``eval_repos`` or its hash falls below ``eval_fraction``; nothing is dropped.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

import numpy as np

from datagen.config.curate import DecontamConfig, NearDedupConfig
from datagen.curate.decontam import SPAN_CHARS, EvalRepos, NgramIndex
from datagen.curate.minhash import band_hashes, estimated_jaccard, signatures
from datagen.curate.near_dedup import candidate_pairs
from datagen.records.pool import PoolDropRow, PoolRow

_BAND_REC = np.dtype([("h", "<u8"), ("g", "<u8")])


def drop_row(row: PoolRow, reason: str, detail: str | None = None) -> PoolDropRow:
    return PoolDropRow(instruction_id=row.instruction_id, task_id=row.task_id, repo=row.repo,
                       reason=reason, detail=detail)


def _keep_order(rows: list[PoolRow]) -> list[PoolRow]:
    """Representative order: the longest statement first, then the smallest id."""
    return sorted(rows, key=lambda r: (-len(r.problem_statement), r.instruction_id))


def _similar_pairs(sigs: np.ndarray, cfg: NearDedupConfig) -> np.ndarray:
    """Pairs (i < j, row indexes) that share an LSH band and whose estimated Jaccard
    reaches ``cfg.threshold``."""
    bh = band_hashes(sigs, cfg.bands, cfg.rows)
    found = [np.empty((0, 2), np.uint64)]
    for b in range(cfg.bands):
        rec = np.empty(len(sigs), _BAND_REC)
        rec["h"], rec["g"] = bh[:, b], np.arange(len(sigs), dtype=np.uint64)
        found.append(candidate_pairs(rec))
    pairs = np.sort(np.concatenate(found).astype(np.int64), axis=1)
    pairs = np.unique(pairs, axis=0) if len(pairs) else pairs
    return pairs[estimated_jaccard(sigs[pairs[:, 0]], sigs[pairs[:, 1]]) >= cfg.threshold] if len(pairs) else pairs


def near_duplicates(rows: list[PoolRow], cfg: NearDedupConfig | None = None) -> list[PoolDropRow]:
    """Drop every statement within ``cfg.threshold`` estimated Jaccard of a statement kept
    before it (representative order: longest first, then by id). A duplicate always names
    a kept instruction it is similar to, so chains do not drop unrelated statements.
    Statements shorter than ``cfg.ngram`` words have no shingles and are never dropped."""
    cfg = cfg or NearDedupConfig()
    ordered = _keep_order(rows)
    sigs, has = signatures([r.problem_statement for r in ordered], cfg.ngram, cfg.num_perm, cfg.seed)
    index = np.flatnonzero(has)  # row among those with shingles -> position in ``ordered``
    later: dict[int, list[int]] = {}
    for i, j in _similar_pairs(sigs[index], cfg).tolist():
        later.setdefault(i, []).append(j)
    dropped: dict[int, int] = {}  # duplicate -> the kept row it is dropped for
    for i in range(len(index)):
        if i not in dropped:
            dropped.update((j, i) for j in later.get(i, ()) if j not in dropped)
    return sorted((drop_row(ordered[index[j]], "near_duplicate", f"duplicate_of:{ordered[index[i]].instruction_id}")
                   for j, i in dropped.items()), key=lambda d: d.instruction_id)


def decontaminate(rows: list[PoolRow], cfg: DecontamConfig, remotes: dict[str, str] | None = None,
                  index: NgramIndex | None = None) -> list[PoolDropRow]:
    """Drop instructions of eval repositories and statements sharing ``cfg.min_matches``
    or more ``cfg.ngram``-word n-grams with a benchmark text (same rules as the CPT corpus)."""
    if not cfg.enabled:
        return []
    eval_repos = EvalRepos.load(cfg.eval_repos)
    index = index or NgramIndex.build(list(cfg.benchmarks), cfg.ngram)
    drops = []
    for row in rows:
        hit = eval_repos.match(row.repo, (remotes or {}).get(row.repo))
        if hit:
            drops.append(drop_row(row, "eval_repo", f"eval_repos:{hit}"))
            continue
        found = index.match(row.problem_statement, cfg.ngram)
        if found and found[0] >= cfg.min_matches:
            _, source, (start, end) = found
            drops.append(drop_row(row, "contaminated", f"{source} {start}:{end} "
                                  f"{row.problem_statement[start:end][:SPAN_CHARS]}"))
    return sorted(drops, key=lambda d: d.instruction_id)


def repo_fraction(repo: str, seed: int = 0) -> float:
    """A repository's deterministic position in [0, 1): the same on every machine and run."""
    digest = hashlib.sha256(f"{seed}:{repo.lower()}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def split_of(repo: str, eval_fraction: float, eval_repos: Iterable[str] = (), seed: int = 0) -> str:
    """``validation`` for listed repositories and those hashed below ``eval_fraction``."""
    listed = {r.lower() for r in eval_repos}
    if repo.lower() in listed or repo_fraction(repo, seed) < eval_fraction:
        return "validation"
    return "train"


def assign_splits(rows: list[PoolRow], eval_fraction: float = 0.0, eval_repos: Iterable[str] = (),
                  seed: int = 0) -> list[PoolRow]:
    """Rows with ``split`` set by repository (a repository never spans both splits)."""
    listed = list(eval_repos)
    return [r.model_copy(update={"split": split_of(r.repo, eval_fraction, listed, seed)}) for r in rows]


def without(rows: list[PoolRow], drops: Iterable[PoolDropRow]) -> list[PoolRow]:
    """The rows not named in ``drops``."""
    gone = {d.instruction_id for d in drops}
    return [r for r in rows if r.instruction_id not in gone]


def clean(rows: list[PoolRow], decontam: DecontamConfig | None = None, dedup: NearDedupConfig | None = None,
          eval_fraction: float = 0.0, eval_repos: Iterable[str] = (), seed: int = 0,
          ) -> tuple[list[PoolRow], list[PoolDropRow]]:
    """All hygiene in order: decontaminate, then near dedup over what is left (across both
    splits, so no near-copy straddles train and validation), then split by repository.
    Returns (kept rows, dropped rows)."""
    drops = decontaminate(rows, decontam) if decontam else []
    rows = without(rows, drops)
    if dedup is None or dedup.enabled:
        near = near_duplicates(rows, dedup)
        drops, rows = drops + near, without(rows, near)
    return assign_splits(rows, eval_fraction, eval_repos, seed), sorted(drops, key=lambda d: d.instruction_id)
