"""Peak memory of ``datagen build cpt-corpus`` per stage, on corpora of growing size.

Corpora: real ``.py`` files of this interpreter's site-packages, copied into repo-shaped
folders. Each top-level package is one repo, cut into repos of at most ``--repo-mb`` MB
(``torch-00``, ``torch-01``, ... keeping their paths), so that no single repo dominates
and a larger corpus means more repos, not larger ones. Repos are taken in the order of
a hash of their name until the corpus reaches its size, so the selection is
deterministic and a smaller corpus is a prefix of a larger one.

Each corpus is built with ``-w 2`` as a subprocess, without and with packing (a 16k
byte-level BPE trained on the first corpus). While it runs, the sum of PSS over the
build's whole process tree (``/proc/<pid>/smaps_rollup`` of the build and all its
descendants: crawl workers, near-dedup workers, ordering workers) is sampled at
``--hz``, and each sample is charged to the stage the build is in, read from the run's
``stages.log`` (``datagen.runtime.progress.Stopwatch``). Printed: per stage, the peak
tree PSS, the peak PSS of the main process and that of the largest other process, in MB,
for every corpus size.

    python benchmarks/corpus_memory.py [--sizes 50 100 200] [--no-pack] [--keep DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import site
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from common import train_bpe

BEFORE_RUN = "list"  # the stage log exists once the run's work folder does


def package_repos(repo_mb: float) -> dict[str, list[tuple[Path, str]]]:
    """repo name -> (source file, path in the repo): each top-level package of
    site-packages, cut into repos of about ``repo_mb`` MB along its sorted files."""
    roots = [Path(p) for p in site.getsitepackages()]
    by_pkg: dict[str, list[tuple[Path, str]]] = defaultdict(list)
    for root in roots:
        for f in sorted(root.rglob("*.py")):
            rel = f.relative_to(root)
            if len(rel.parts) > 1 and f.is_file() and rel.parts[0].isidentifier():
                by_pkg[rel.parts[0]].append((f, rel.as_posix()))
    repos: dict[str, list[tuple[Path, str]]] = {}
    for pkg, files in sorted(by_pkg.items()):
        chunks: list[list[tuple[Path, str]]] = [[]]
        size = 0
        for f, rel in files:
            n = f.stat().st_size
            if chunks[-1] and size + n > repo_mb * 1e6:
                chunks.append([])
                size = 0
            chunks[-1].append((f, rel))
            size += n
        for i, chunk in enumerate(chunks):
            repos[pkg if len(chunks) == 1 else f"{pkg}-{i:02d}"] = chunk
    return repos


def write_corpus(folder: Path, repos: dict[str, list[tuple[Path, str]]], mb: float) -> float:
    """Copy repos (in name-hash order) into ``folder`` until ``mb`` MB; returns MB written."""
    order = sorted(repos, key=lambda r: hashlib.sha1(r.encode()).hexdigest())
    total = 0
    for name in order:
        if total >= mb * 1e6:
            break
        for src, rel in repos[name]:
            dst = folder / name / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dst)
            total += dst.stat().st_size
    return total / 1e6


def train_tokenizer(corpus: Path, out: Path) -> Path:
    """A 16k byte-level BPE on the first 3000 files of ``corpus``."""
    files = sorted(corpus.rglob("*.py"))[:3000]
    return train_bpe((f.read_text("utf-8", "replace") for f in files), out)


def _pss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as fh:
            for line in fh:
                if line.startswith(b"Pss:"):
                    return int(line.split()[1])
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        pass
    return 0


def _tree(root: int) -> list[int]:
    """``root`` and all its descendants (one scan of /proc)."""
    children: dict[int, list[int]] = defaultdict(list)
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
        except (FileNotFoundError, ProcessLookupError):
            continue
        ppid = int(stat[stat.rindex(b")") + 2 :].split()[1])
        children[ppid].append(int(name))
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(children.get(pid, ()))
    return out


def _stage(out: Path, last: str) -> str:
    """The stage named on the last line of the run's stage log (or ``last``)."""
    for log in out.glob(".work/*/stages.log"):
        try:
            lines = log.read_text("utf-8").splitlines()
        except FileNotFoundError:
            continue
        if lines:
            return lines[-1].split("\t")[2]
    return last


@dataclass
class Peaks:
    tree_mb: dict[str, float] = field(default_factory=dict)  # stage -> peak tree PSS
    main_mb: dict[str, float] = field(default_factory=dict)  # stage -> peak main PSS
    other_mb: dict[str, float] = field(default_factory=dict)  # stage -> largest other process
    seconds: float = 0.0


def measure(cmd: list[str], out: Path, hz: float, log: Path) -> Peaks:
    """Run ``cmd`` and sample its tree's PSS until it exits."""
    peaks = Peaks()
    env = {**os.environ, "DATAGEN_NO_PROGRESS": "1"}
    t0 = time.monotonic()
    with open(log, "wb") as fh:
        proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, env=env)
        stage = BEFORE_RUN
        while proc.poll() is None:
            stage = _stage(out, stage)
            pss = {p: _pss_kb(p) / 1024 for p in _tree(proc.pid)}
            main = pss.pop(proc.pid, 0.0)
            for table, value in ((peaks.tree_mb, main + sum(pss.values())), (peaks.main_mb, main),
                                 (peaks.other_mb, max(pss.values(), default=0.0))):
                table[stage] = max(table.get(stage, 0.0), value)
            time.sleep(1 / hz)
    peaks.seconds = time.monotonic() - t0
    if proc.returncode:
        sys.exit(f"build failed ({proc.returncode}); see {log}:\n{log.read_text()[-3000:]}")
    return peaks


def report(title: str, sizes: list[float], runs: list[Peaks]) -> None:
    stages = list(dict.fromkeys(s for p in runs for s in p.tree_mb))
    print(f"\n{title}: peak PSS in MB, whole process tree / main process / largest other process")
    print("| stage | " + " | ".join(f"{mb:.0f} MB" for mb in sizes) + " |")
    print("|---|" + "---:|" * len(sizes))
    for s in stages:
        cells = [f"{p.tree_mb[s]:.0f} / {p.main_mb[s]:.0f} / {p.other_mb[s]:.0f}" if s in p.tree_mb else "—"
                 for p in runs]
        print(f"| {s} | " + " | ".join(cells) + " |")
    print("| **build peak** | " + " | ".join(
        f"**{max(p.tree_mb.values()):.0f} / {max(p.main_mb.values()):.0f} / {max(p.other_mb.values()):.0f}**"
        for p in runs) + " |")
    print("| wall | " + " | ".join(f"{p.seconds:.0f} s" for p in runs) + " |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=float, nargs="+", default=[50, 100, 200], help="corpus MB")
    ap.add_argument("--repo-mb", type=float, default=2.0, help="largest repo, MB (default 2)")
    ap.add_argument("--workers", "-w", type=int, default=2)
    ap.add_argument("--hz", type=float, default=15.0, help="samples per second")
    ap.add_argument("--no-pack", action="store_true", help="only the build without packing")
    ap.add_argument("--set", dest="sets", action="append", default=[], help="extra recipe override")
    ap.add_argument("--keep", type=Path, help="keep corpora and outputs here (default: a temp dir)")
    args = ap.parse_args()

    datagen = [str(Path(sys.executable).parent / "datagen")]
    tmp = Path(args.keep or tempfile.mkdtemp(prefix="corpus-memory-"))
    tmp.mkdir(parents=True, exist_ok=True)
    repos = package_repos(args.repo_mb)
    corpora, actual = [], []
    for mb in args.sizes:
        folder = tmp / f"corpus-{mb:g}mb"
        if not folder.exists():
            write_corpus(folder, repos, mb)
        corpora.append(folder)
        actual.append(sum(f.stat().st_size for f in folder.rglob("*.py")) / 1e6)
        print(f"corpus {folder}: {actual[-1]:.0f} MB in {len(list(folder.iterdir()))} repos", flush=True)
    variants = [("without packing", [])]
    if not args.no_pack:
        tok = train_tokenizer(corpora[0], tmp)
        variants.append(("with packing", ["--set", f"pack.tokenizer={tok}"]))
    base = ["--set", "crawl.licenses=any", "--force", "-w", str(args.workers)]
    base += [a for s in args.sets for a in ("--set", s)]
    for title, extra in variants:
        runs = []
        for folder in corpora:
            out = tmp / f"out-{folder.name}-{'pack' if extra else 'text'}"
            shutil.rmtree(out, ignore_errors=True)
            cmd = [*datagen, "build", "cpt-corpus", str(folder / "*"),
                   "-o", str(out), *base, *extra]
            runs.append(measure(cmd, out, args.hz, tmp / f"{out.name}.log"))
            print(f"  {title}, {folder.name}: {runs[-1].seconds:.0f} s, peak tree "
                  f"{max(runs[-1].tree_mb.values()):.0f} MB", flush=True)
        report(title, actual, runs)
    if not args.keep:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
