"""The whole cpt-corpus build vs a plain datatrove MinHash pipeline, on the same files.

Corpus: the ``.py`` files of this interpreter's site-packages, copied into one folder per
top-level package (a repository each), packages taken in a fixed pseudo-random order
until the corpus reaches ``--mb`` (no package over a quarter of it). Same corpus for the
same ``--mb`` and ``--seed``.

Both sides run as fresh processes with 2 workers (``--workers``), in interleaved rounds:

- datagen: ``python -m datagen.cli.app build cpt-corpus -i REPOS... -o OUT -w 2
  --set crawl.licenses=any`` (the default recipe: crawl, quality, decontamination,
  syntax, secrets, exact + near dedup, import-graph ordering, shards, manifest);
- datatrove: a reader of the same files -> MinHash signatures -> buckets -> clusters ->
  filter -> parquet writer (``LocalPipelineExecutor``, same worker count), with a
  whitespace word tokenizer and no text normalisation (the near-dedup comparison's setup,
  ``benchmarks/near_dedup.py``), the same shingles and permutations as datagen.

Prints each round's wall time and, where the host lets us make a cpuacct cgroup, the
core-seconds of the whole process tree (steadier than wall time on a shared machine);
the ratios (datatrove / datagen: above 1 means the whole datagen build is faster than
datatrove's dedup alone) and datagen's time per stage. ``--root`` runs the datagen of
another checkout; ``--also-root`` runs a second checkout's datagen in the same rounds
(e.g. main before and after a change, side by side with datatrove). Each round prints
the machine's load average (``os.getloadavg``), which a shared machine needs read with it.

    python benchmarks/corpus_build.py --mb 50 --rounds 3
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import site
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CPUACCT = Path("/sys/fs/cgroup/cpuacct")


def _remove_group(group: Path) -> None:
    """Remove a cgroup once its last process is gone (a forkserver may outlive the build
    by a moment); leave it after 5 s."""
    for _ in range(50):
        try:
            group.rmdir()
            return
        except OSError:
            time.sleep(0.1)


def timed(cmd: list[str], **kw) -> tuple[subprocess.CompletedProcess, float, float]:
    """Run ``cmd``; (result, wall s, core-s of its process tree or NaN without a cgroup)."""
    group = CPUACCT / f"corpus-bench-{os.getpid()}-{time.monotonic_ns()}"
    try:
        group.mkdir()
    except OSError:
        group = None

    def enter() -> None:
        if group is not None:
            (group / "cgroup.procs").write_text(str(os.getpid()))

    t0 = time.perf_counter()
    done = subprocess.run(cmd, preexec_fn=enter, capture_output=True, text=True, **kw)
    wall = time.perf_counter() - t0
    cpu = float("nan")
    if group is not None:
        cpu = int((group / "cpuacct.usage").read_text()) / 1e9
        _remove_group(group)
    if done.returncode:
        sys.exit(f"{cmd[:6]} failed:\n{done.stdout}\n{done.stderr}")
    return done, wall, cpu


def build_corpus(dest: Path, mb: float, seed: int, sources: list[Path] | None = None) -> list[Path]:
    """Copy whole packages of site-packages (``.py`` files only) into ``dest/<package>``;
    ``sources``: other folders of packages too (the first folder holding a name wins)."""
    packages: dict[str, tuple[Path, list[Path]]] = {}  # name -> (its folder, its .py files)
    for sp in [*site.getsitepackages(), *(sources or [])]:
        for top in sorted(Path(sp).iterdir()):
            if top.is_dir() and not top.name.endswith((".dist-info", ".egg-info", "__pycache__")):
                files = sorted(p for p in top.rglob("*.py") if p.is_file() and not p.is_symlink())
                if files:
                    packages.setdefault(top.name, (top, files))
    order = sorted(packages, key=lambda n: hashlib.sha256(f"{seed}\0{n}".encode()).hexdigest())
    budget, total, repos = mb * 1e6, 0, []
    for name in order:
        top, files = packages[name]
        size = sum(f.stat().st_size for f in files)
        if size > budget / 4 or total >= budget:
            continue
        for f in files:
            target = dest / name / f.relative_to(top)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(f, target)
        total += size
        repos.append(dest / name)
    print(f"corpus: {len(repos)} repos, {sum(len(packages[r.name][1]) for r in repos)} files, {total / 1e6:.1f} MB")
    return sorted(repos)


def run_datagen(root: Path, repos: list[Path], out: Path, workers: int) -> tuple[float, float, str]:
    cmd = [sys.executable, "-m", "datagen.cli.app", "build", "cpt-corpus", "-i", *map(str, repos),
           "-o", str(out), "-w", str(workers), "--set", "crawl.licenses=any"]
    env = {**os.environ, "PYTHONPATH": str(root), "COLUMNS": "200"}
    done, wall, cpu = timed(cmd, env=env)
    stages = re.search(r"time per stage: (.*?)(?:manifest [\d.]+ s)?$", done.stdout + done.stderr, re.M)
    return wall, cpu, stages.group(1).strip(" ,") if stages else "?"


def run_datatrove(corpus: Path, out: Path, workers: int) -> tuple[float, float]:
    cmd = [sys.executable, __file__, "--datatrove-only", str(corpus), str(out), "--workers", str(workers)]
    _, wall, cpu = timed(cmd)
    return wall, cpu


def datatrove_pipeline(corpus: Path, out: Path, workers: int) -> None:
    """reader -> signatures -> buckets -> clusters -> filter -> writer, as datatrove's
    MinHash example runs it, with datagen's near-dedup parameters."""
    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.dedup.minhash import (
        MinhashConfig,
        MinhashDedupBuckets,
        MinhashDedupCluster,
        MinhashDedupFilter,
        MinhashDedupSignature,
    )
    from datatrove.pipeline.readers.base import BaseDiskReader
    from datatrove.pipeline.writers import ParquetWriter
    from datatrove.utils.logging import logger
    from datatrove.utils.text import TextNormConfig

    sys.path.insert(0, str(ROOT))
    from common import WhitespaceTokenizer

    from datagen.config.curate import NearDedupConfig

    logger.remove()

    class WholeFileReader(BaseDiskReader):
        """One document per non-empty file: the file's text."""

        def read_file(self, filepath: str):
            with self.data_folder.open(filepath, "r", encoding="utf-8", errors="replace") as f:
                doc = self.get_document_from_dict({"text": f.read(), "id": filepath}, filepath, 0)
            if doc is not None:  # None for an empty file
                yield doc

    cfg = NearDedupConfig()
    off = TextNormConfig(lowercase=False, norm_whitespace=False, remove_punctuation=False,
                         norm_unicode_diacritics=False, norm_numbers=False)
    mcfg = MinhashConfig(n_grams=cfg.ngram, num_buckets=cfg.bands, hashes_per_bucket=cfg.rows,
                         seed=cfg.seed, norm_config=off)

    def reader():
        return WholeFileReader(str(corpus), glob_pattern="**/*.py")

    def run(pipeline, name, tasks=workers):
        LocalPipelineExecutor(pipeline, tasks=tasks, workers=min(workers, tasks),
                              logging_dir=str(out / "logs" / name)).run()

    run([reader(), MinhashDedupSignature(str(out / "sigs"), config=mcfg, language=WhitespaceTokenizer())], "sigs")
    run([MinhashDedupBuckets(str(out / "sigs"), str(out / "buckets"), config=mcfg)], "buckets", tasks=cfg.bands)
    run([MinhashDedupCluster(str(out / "buckets"), str(out / "remove"), config=mcfg)], "cluster", tasks=1)
    run([reader(), MinhashDedupFilter(str(out / "remove")), ParquetWriter(str(out / "kept"))], "filter")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=50.0, help="corpus size")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--root", type=Path, default=ROOT, help="checkout whose datagen runs")
    ap.add_argument("--also-root", type=Path, help="a second checkout whose datagen runs in the same rounds")
    ap.add_argument("--keep", type=Path, help="build (or reuse) the corpus here and keep it")
    ap.add_argument("--source", type=Path, action="append", default=[],
                    help="another folder of packages to draw from (e.g. the stdlib; repeatable)")
    ap.add_argument("--datatrove-only", nargs=2, type=Path, metavar=("CORPUS", "OUT"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.datatrove_only:
        return datatrove_pipeline(*args.datatrove_only, args.workers)
    tmp = Path(tempfile.mkdtemp(prefix="corpus-bench-"))
    try:
        corpus = args.keep or tmp / "repos"
        if corpus.exists() and any(corpus.iterdir()):
            repos = sorted(p for p in corpus.iterdir() if p.is_dir())
        else:
            repos = build_corpus(corpus, args.mb, args.seed, args.source)
        roots = {"datagen": args.root, **({"datagen-also": args.also_root} if args.also_root else {})}
        sides = ["datatrove", *roots]
        runs: dict[str, list[tuple[float, float]]] = {side: [] for side in sides}
        for i in range(args.rounds):
            for side in sides if i % 2 == 0 else sides[::-1]:
                out = tmp / f"{side}-{i}"
                load = os.getloadavg()[0]
                if side in roots:
                    wall, cpu, stages = run_datagen(roots[side], repos, out, args.workers)
                    note = f"  ({stages})"
                else:
                    wall, cpu = run_datatrove(corpus, out, args.workers)
                    note = ""
                runs[side].append((wall, cpu))
                print(f"round {i + 1}: {side:12s} {wall:6.2f} s wall, {cpu:6.2f} core-s, load "
                      f"{load:.1f} -> {os.getloadavg()[0]:.1f}{note}", flush=True)
                shutil.rmtree(out, ignore_errors=True)
        names = {"datatrove": "datatrove MinHash pipeline", "datagen": f"datagen build cpt-corpus ({roots['datagen']})"}
        if args.also_root:
            names["datagen-also"] = f"datagen build cpt-corpus ({args.also_root})"
        for side, name in names.items():
            walls, cpus = zip(*runs[side], strict=True)
            print(f"{name} -w {args.workers}: median {statistics.median(walls):6.2f} s wall, "
                  f"{statistics.median(cpus):6.2f} core-s")
        for side in roots:
            for k, what in ((0, "wall"), (1, "core-s")):
                ratios = [t[k] / g[k] for t, g in zip(runs["datatrove"], runs[side], strict=True)]
                print(f"ratio datatrove / {side} ({what}): median {statistics.median(ratios):.2f}x "
                      f"(rounds: {', '.join(f'{r:.2f}' for r in ratios)})")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
