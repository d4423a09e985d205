"""CPU seconds per build step from a py-spy profile of ``datagen build cpt-corpus``.

Record the build's whole process tree (the crawl and near-dedup workers are processes):

    py-spy record --subprocesses --rate 50 --format speedscope -o prof.json -- \\
        datagen build cpt-corpus -i CORPUS/* -o OUT -w 2 --set crawl.licenses=any
    python benchmarks/profile_steps.py prof.json --mb 318.6

Each sample is charged to the step of the innermost frame that belongs to one (the module
or function in ``STEPS``): the crawl is a chain of generators, so the innermost step frame
is the one doing the work. py-spy samples Python threads only (not idle ones): time spent in
threads a native library starts itself (DuckDB's, Arrow's) is not in the profile; a
``--cpu`` total (e.g. the cgroup's, ``benchmarks/corpus_build.py``) shows that gap.
Prints a Markdown table: step, sampled seconds, share, and with ``--cpu`` the estimated
core-seconds (total and per MB of input).
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

# (path suffix of a frame's file, function name or None for any) -> step; first match wins
STEPS: list[tuple[str, str | None, str]] = [
    ("datagen/crawl/reader.py", None, "crawl: read + content checks"),
    ("datagen/crawl/inspect.py", None, "crawl: read + content checks"),
    ("datagen/curate/quality.py", None, "crawl: quality"),
    ("datagen/curate/decontam.py", None, "crawl: decontamination"),
    ("datagen/curate/syntax.py", None, "crawl: syntax (tree-sitter)"),
    ("datagen/curate/secrets.py", None, "crawl: secrets"),
    ("datagen/pack/extract.py", None, "crawl: import specifiers"),
    ("datagen/curate/imports_step.py", None, "crawl: import specifiers"),
    ("datagen/curate/parsed.py", None, "crawl: syntax (tree-sitter)"),
    ("datagen/crawl/writer.py", None, "crawl: parquet writer"),
    ("datagen/curate/minhash.py", None, "near dedup"),
    ("datagen/curate/near_dedup.py", None, "near dedup"),
    ("datagen/curate/dedup.py", None, "exact dedup"),
    ("datagen/crawl/sources.py", None, "list"),
    ("datagen/builds/cpt_corpus/shards.py", None, "order + shards"),
    ("datagen/pack/ordering.py", None, "order + shards"),
    ("datagen/pack/resolve.py", None, "order + shards"),
    ("datagen/pack/imports.py", None, "order + shards"),
    ("datagen/builds/cpt_corpus/manifest.py", None, "manifest"),
    ("datagen/builds/card.py", None, "manifest"),
    ("datagen/builds/cpt_corpus/build.py", "_list", "list"),
    ("datagen/builds/cpt_corpus/build.py", "_decide", "dedup: load crawl rows (DuckDB)"),
    ("datagen/builds/cpt_corpus/build.py", "_write_shards", "order + shards"),
    ("datagen/builds/cpt_corpus/build.py", "_build", "manifest"),
    ("datagen/builds/cpt_corpus/build.py", "_fingerprint", "list"),
]
OTHER = "other (interpreter start, imports, datatrove/multiprocessing plumbing)"


def step_of(stack: list[dict]) -> str:
    """The step of one sample: ``stack`` is root first, leaf last."""
    for frame in reversed(stack):
        file = frame.get("file") or ""
        func = (frame.get("name") or "").rsplit(".", 1)[-1]
        for suffix, name, step in STEPS:
            if file.endswith(suffix) and (name is None or func == name):
                return step
    return OTHER


def per_step(profile: Path) -> Counter:
    """step -> core-seconds of the speedscope file ``profile`` (all processes and threads)."""
    data = json.loads(profile.read_text())
    frames = data["shared"]["frames"]
    seconds: Counter = Counter()
    for prof in data["profiles"]:
        for sample, weight in zip(prof["samples"], prof["weights"], strict=True):
            seconds[step_of([frames[i] for i in sample])] += weight
    return seconds


def table(seconds: Counter, mb: float, cpu: float | None = None) -> str:
    """Markdown rows per step. py-spy samples wall time of threads that are not idle, so on
    a loaded machine its seconds include time spent waiting for a core: with ``cpu`` (the
    core-seconds of an unprofiled run of the same build, e.g. its cgroup's) each step's
    share of the samples is scaled to it (threads py-spy cannot see count in no step)."""
    total = sum(seconds.values())
    head = "| step | sampled s | share |" + (" ≈ core-s | ≈ core-s / MB |" if cpu else " sampled s / MB |")
    lines = [head, "|---|---:|---:|---:|" + ("---:|" if cpu else "")]
    for step, s in sorted(seconds.items(), key=lambda kv: -kv[1]):
        share = s / total
        tail = f" {share * cpu:.1f} | {share * cpu / mb:.4f} |" if cpu else f" {s / mb:.4f} |"
        lines.append(f"| {step} | {s:.1f} | {share:.0%} |{tail}")
    tail = f" {cpu:.1f} | {cpu / mb:.4f} |" if cpu else f" {total / mb:.4f} |"
    lines.append(f"| **total** | **{total:.1f}** | 100% |{tail}")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("profile", type=Path, help="py-spy speedscope JSON")
    ap.add_argument("--mb", type=float, required=True, help="input MB (for the per-MB column)")
    ap.add_argument("--cpu", type=float, help="measured core-seconds of the build's process tree")
    args = ap.parse_args()
    print(table(per_step(args.profile), args.mb, args.cpu))


if __name__ == "__main__":
    main()
