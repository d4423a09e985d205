"""What the corpus writer calls: the held-out split rule and the in-repo ordering function.

``RepoOrderer`` orders each repository's rows (``order_repo``) and keeps its graph stats
for the manifest. ``stream`` orders a stream of repos, in parallel processes when
``workers > 1``: the files of a repo are parsed in chunks by the workers (only
(path, lang, text) travel there, only the import specifiers come back) and the imports are
resolved here; at most ``2 * workers`` repos are in flight, and results come back in input
order, so the output does not depend on the number of workers.
"""

from __future__ import annotations

import hashlib
from collections import deque
from collections.abc import Iterable, Iterator, Mapping

from datagen.config.pack import PackConfig
from datagen.pack.extract import SUPPORTED, Imports
from datagen.pack.imports import RepoOrder, extract_all, order_repo
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


# A repo's files are parsed in chunks of about this many characters (or CHUNK_FILES files), so
# that one large repo (site-packages: torch is 60% of the parse time) spreads over workers.
CHUNK_CHARS = 1 << 21
CHUNK_FILES = 256


def _extract_task(files: list[tuple[str, str, str]]) -> list[tuple[str, str, Imports]]:
    return extract_all({"path": p, "lang": lang, "text": t} for p, lang, t in files)


def _chunks(rows: list[dict]) -> list[list[tuple[str, str, str]]]:
    """(path, lang, text) of the rows in a supported language, in order, cut into chunks."""
    chunks: list[list[tuple[str, str, str]]] = [[]]
    size = 0
    for r in rows:
        if r["lang"] not in SUPPORTED:
            continue
        if size >= CHUNK_CHARS or len(chunks[-1]) >= CHUNK_FILES:
            chunks.append([])
            size = 0
        chunks[-1].append((r["path"], r["lang"], r["text"]))
        size += len(r["text"])
    return [c for c in chunks if c]


class RepoOrderer:
    """The writer's in-repo ordering function; keeps each repo's graph stats in ``rows``."""

    def __init__(self, cfg: PackConfig, workers: int = 1,
                 aliases: Mapping[str, dict[str, str]] | None = None):
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
            for _repo, rows in repos:
                pending.append((rows, [pool.submit(_extract_task, c) for c in _chunks(rows)]))
                if len(pending) >= 2 * self.workers:
                    yield self._resolve(*pending.popleft())
            while pending:
                yield self._resolve(*pending.popleft())

    def _resolve(self, rows: list[dict], futures: list) -> list[dict]:
        """Order ``rows`` from the imports its parse tasks found (resolution runs here)."""
        parsed = [item for fut in futures for item in fut.result()]
        if not rows:
            return rows
        aliases = self.aliases.get(rows[0]["repo"])
        return self._record(rows, order_repo(rows, aliases=aliases, parsed=parsed))

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
