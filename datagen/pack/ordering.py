"""What the corpus writer calls: the held-out split rule and the in-repo ordering function.

``RepoOrderer`` orders each repository's rows (``order_repo``) and keeps its graph stats
for the manifest. ``stream`` orders a stream of repos, in parallel processes when
``workers > 1``: only (path, lang, text) travel to the workers and only the order comes
back; at most ``2 * workers`` repos are in flight, and results come back in input order,
so the output does not depend on the number of workers.
"""

from __future__ import annotations

import hashlib
from collections import deque
from collections.abc import Iterable, Iterator

from datagen.config.pack import PackConfig
from datagen.pack.imports import RepoOrder, order_repo
from datagen.records.pack import RepoOrderRow


def split_of(repo: str, cfg: PackConfig) -> str:
    """``validation`` for a held-out repo (by name, or by name hash < holdout_fraction)."""
    if repo in cfg.holdout_repos:
        return "validation"
    if cfg.holdout_fraction > 0:
        digest = hashlib.sha256(f"{cfg.holdout_seed}\0{repo}".encode()).digest()
        if int.from_bytes(digest[:8], "big") / 2**64 < cfg.holdout_fraction:
            return "validation"
    return "train"


def _order_task(repo: str, files: list[tuple[str, str, str]], aliases: dict[str, str]) -> RepoOrder:
    rows = [{"repo": repo, "path": p, "lang": lang, "text": t} for p, lang, t in files]
    return order_repo(rows, aliases=aliases)


class RepoOrderer:
    """The writer's in-repo ordering function; keeps each repo's graph stats in ``rows``."""

    def __init__(self, cfg: PackConfig, workers: int = 1,
                 aliases: dict[str, dict[str, str]] | None = None):
        self.cfg = cfg
        self.workers = workers
        self.aliases = aliases or {}  # repo -> {dropped duplicate path: kept path}
        self.rows: list[RepoOrderRow] = []

    def __call__(self, rows: list[dict]) -> list[dict]:
        if not rows or self.cfg.order == "path":
            return self._record(rows, None)
        return self._record(rows, order_repo(rows, aliases=self.aliases.get(rows[0]["repo"])))

    def stream(self, repos: Iterable[tuple[str, list[dict]]]) -> Iterator[list[dict]]:
        """Each repo's rows, ordered; parallel when ``workers > 1``."""
        if self.workers <= 1 or self.cfg.order == "path":
            for _, rows in repos:
                yield self(rows)
            return
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        ctx = multiprocessing.get_context("forkserver")  # the caller holds DuckDB threads
        with ProcessPoolExecutor(self.workers, mp_context=ctx) as pool:
            pending: deque = deque()
            for repo, rows in repos:
                files = [(r["path"], r["lang"], r["text"]) for r in rows]
                pending.append((rows, pool.submit(_order_task, repo, files, self.aliases.get(repo, {}))))
                if len(pending) >= 2 * self.workers:
                    rows, fut = pending.popleft()
                    yield self._record(rows, fut.result())
            while pending:
                rows, fut = pending.popleft()
                yield self._record(rows, fut.result())

    def _record(self, rows: list[dict], result: RepoOrder | None) -> list[dict]:
        if not rows:
            return rows
        repo = rows[0]["repo"]
        self.rows.append(RepoOrderRow(
            run_id="", repo=repo, split=split_of(repo, self.cfg), files=len(rows),
            edges=len(result.edges) if result else 0, imports=result.imports if result else 0,
            unresolved=result.unresolved if result else 0,
            external=result.external if result else 0,
            cycles_broken=len(result.cycles_broken) if result else 0,
            parse_errors=result.parse_errors if result else 0,
        ))
        return result.apply(rows) if result else sorted(rows, key=lambda r: r["path"])
