"""The whole cpt-corpus build with the learned quality scorer on vs the same build without it.

Corpus: the bundled ``sample_data/`` (default), or ``--mb N`` of site-packages ``.py``
files cut into one repo per package (``corpus_build.py``'s corpus). The model: the first
build's kept files rated by ``quality_throughput.proxy_rating`` (no teacher runs on these
machines; the speed of the step does not depend on who rated) and trained with
``datagen quality train``. Then ``datagen build cpt-corpus --force`` in interleaved rounds,
off and on (``--set quality_model.enabled=true --set quality_model.path=MODEL``, with the
cut at 0 unless ``--threshold``: both sides then write the same corpus), as fresh
processes; prints wall and core-seconds per round, the medians and their ratio.

    python benchmarks/quality_build.py                 # sample_data, 3 rounds
    python benchmarks/quality_build.py --mb 50 -w 2    # 50 MB of site-packages
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import pyarrow.parquet as pq
from corpus_build import build_corpus, timed
from quality_throughput import proxy_rating

from datagen.records import QualityLabel

ROOT = Path(__file__).resolve().parent.parent


def datagen(*args: str) -> list[str]:
    return [sys.executable, "-m", "datagen.cli.app", *args]


def label_kept_files(out: Path, labels: Path) -> int:
    """Rate every kept file of a built corpus with the proxy rubric (labels JSONL)."""
    rows = []
    for shard in sorted((out / "data").glob("*.parquet")):
        for r in pq.read_table(shard, columns=["id", "repo", "path", "lang", "text"]).to_pylist():
            rows.append(QualityLabel(id=r["id"], repo=r["repo"], path=r["path"], lang=r["lang"], text=r["text"][:8000],
                                     score=proxy_rating(r["text"]), status="ok", teacher="proxy_rating"))
    labels.write_text("".join(r.model_dump_json() + "\n" for r in rows))
    return len(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=float, default=0, help="site-packages corpus of this size (0: sample_data/)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("-w", "--workers", type=int, default=1)
    ap.add_argument("--threshold", type=float, default=0.0, help="the scorer's cut (0: score, drop nothing)")
    args = ap.parse_args()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
    with tempfile.TemporaryDirectory(prefix="quality-build-") as tmp:
        tmp = Path(tmp)
        repos = build_corpus(tmp / "corpus", args.mb, args.seed) if args.mb else sorted(
            p for p in (ROOT / "sample_data").iterdir() if p.is_dir())
        base = ["build", "cpt-corpus", "-i", *map(str, repos), "-o", str(tmp / "out"), "-w", str(args.workers),
                "--set", "crawl.licenses=any", "--force"]
        timed(datagen(*base), env=env, cwd=ROOT)
        n = label_kept_files(tmp / "out", tmp / "labels.jsonl")
        trained = subprocess.run(datagen("quality", "train", str(tmp / "labels.jsonl"), "-o", str(tmp / "q.zip")),
                                 env=env, cwd=ROOT, capture_output=True, text=True, check=True)
        print(f"model: {n} proxy-rated kept files; {trained.stdout.strip()}")
        # threshold 0: every file is scored and none dropped, so both sides write the same
        # corpus and the difference is the cost of scoring alone
        on = ["--set", "quality_model.enabled=true", "--set", f"quality_model.path={tmp / 'q.zip'}",
              "--set", f"quality_model.threshold={args.threshold}"]
        times: dict[str, list[tuple[float, float]]] = {"off": [], "on": []}
        for i in range(args.rounds):
            for side, extra in (("off", []), ("on", on)):
                _, wall, cpu = timed(datagen(*base, *extra), env=env, cwd=ROOT)
                times[side].append((wall, cpu))
                print(f"round {i + 1} scorer {side}: {wall:.2f} s wall, {cpu:.2f} core-s", flush=True)
        med = {s: (statistics.median(w for w, _ in t), statistics.median(c for _, c in t)) for s, t in times.items()}
        dropped = subprocess.run(datagen("sql", str(tmp / "out"), "SELECT count(*) FILTER (WHERE reason LIKE "
                                         "'quality_model%'), count(quality_score) FROM files"),
                                 env=env, cwd=ROOT, capture_output=True, text=True, check=True).stdout
        print(f"median off {med['off'][0]:.2f} s / {med['off'][1]:.2f} core-s, on {med['on'][0]:.2f} s / "
              f"{med['on'][1]:.2f} core-s: on/off {med['on'][0] / med['off'][0]:.2f}x wall, "
              f"{med['on'][1] / med['off'][1]:.2f}x core-s")
        print(f"last 'on' build, files dropped by quality_model and files scored:\n{dropped}")


if __name__ == "__main__":
    main()
