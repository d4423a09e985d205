"""CPU seconds of each crawl step of ``datagen build cpt-corpus``, in one process.

Runs the build's listing and then its crawl pipeline (reader, the enabled ``FILE_STEPS``,
the import specifiers, the rows writer) in this process, rank after rank, and charges the
CPU time (``time.process_time``) spent inside each step's generator, minus that of the
steps it pulls from, to that step. No worker processes, no py-spy: a direct, load-proof
count of where a crawl worker's CPU goes (``benchmarks/profile_steps.py`` covers the whole
build). Same recipe handling as the build (``--set`` overrides).

    python benchmarks/crawl_steps.py CORPUS/* [--set crawl.licenses=any]
"""

from __future__ import annotations

import argparse
import math
import tempfile
import time
from pathlib import Path

from rich.console import Console


class Timed:
    """An iterator that sums the CPU time spent in ``next`` of the one it wraps."""

    def __init__(self, it):
        self.it = iter(it)
        self.cpu = 0.0

    def __iter__(self):
        return self

    def __next__(self):
        t = time.process_time()
        try:
            return next(self.it)
        finally:
            self.cpu += time.process_time() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("inputs", nargs="+")
    ap.add_argument("--set", dest="sets", action="append", default=["crawl.licenses=any"])
    args = ap.parse_args()
    from datagen.builds.cpt_corpus.build import _list, file_steps, load_cpt_recipe
    from datagen.crawl.reader import RepoFileReader
    from datagen.crawl.writer import RowsParquetWriter
    from datagen.curate.imports_step import ImportsStep
    from datagen.runtime.progress import Stopwatch

    tmp = Path(tempfile.mkdtemp(prefix="crawl-steps-"))
    cfg = load_cpt_recipe(None, args.sets, inputs=args.inputs, output=tmp / "out")
    listing = _list(cfg, Console(quiet=True), Stopwatch(), tmp / "listing.parquet")
    tasks = max(1, math.ceil(listing.files / cfg.crawl.files_per_task))
    steps = [RepoFileReader(str(listing.file), cfg.crawl.files_per_task, cfg.crawl),
             *file_steps(cfg, listing.repos), *([ImportsStep()] if cfg.pack.order == "imports" else []),
             RowsParquetWriter(str(tmp / "crawl"))]
    inclusive = [0.0] * len(steps)
    t0 = time.process_time()
    for rank in range(tasks):
        data, timers = None, []
        for step in steps:
            data = Timed(step.run(data, rank, tasks) if data is not None else step.run(None, rank, tasks))
            timers.append(data)
        for _ in data:
            pass
        for i, t in enumerate(timers):
            inclusive[i] += t.cpu
    total = time.process_time() - t0
    mb = listing.needed_bytes / 1e6
    print(f"{listing.files} files, {mb:.1f} MB to read, {tasks} tasks, {total:.1f} CPU s in all")
    print("| crawl step | CPU s | CPU s / MB |\n|---|---:|---:|")
    for i, step in enumerate(steps):
        own = inclusive[i] - (inclusive[i - 1] if i else 0.0)
        print(f"| {step.name} | {own:.2f} | {own / mb:.4f} |")


if __name__ == "__main__":
    main()
