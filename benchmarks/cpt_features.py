"""The cpt-corpus build with issue 23's features (fill-in-the-middle, language mix,
long-context buckets, dedup keep rule) on vs off, on a real multi-language corpus.

Corpus: whole packages of this interpreter's site-packages, each a repository, with their
text files of several languages (Python, C/C++, JavaScript, Markdown, JSON, YAML, TOML),
packages in a fixed pseudo-random order until ``--mb``. Tokenizer: a 16k byte-level BPE
trained here on a slice of it, with StarCoder's FIM tokens. Both builds pack (default
``pack.seq_lens``, 32k and 256k) with ``-w 2`` and ``crawl.licenses=any``; "on" adds:

    pack.fim.rate=0.5 pack.fim.level=file pack.long.share=0.5
    mix.weights={python: 1.0, c: 0.5, cpp: 0.5, javascript: 0.5, json: 0.3, markdown: 2.0}
    dedup.keep=stars dedup.repo_metadata=<stars per package, by a hash of its name>

Prints each build's wall time, CPU seconds (the build and the worker processes it reaped:
steadier than wall time on a shared machine) and stage times (rounds interleaved), and what
each feature did, from the "on" build's manifest.

    python benchmarks/cpt_features.py --mb 50 --rounds 1
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import resource
import shutil
import site
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXTS = {".py", ".pyi", ".h", ".hpp", ".c", ".cc", ".cpp", ".js", ".md", ".json", ".yaml", ".yml", ".toml"}
MIX = "{python: 1.0, c: 0.5, cpp: 0.5, javascript: 0.5, json: 0.3, markdown: 2.0}"
FIM_SETS = ["pack.fim.rate=0.5", "pack.fim.level=file", "pack.long.share=0.5", f"mix.weights={MIX}",
            "dedup.keep=stars"]


def build_corpus(dest: Path, mb: float, seed: int) -> list[Path]:
    """Copy whole packages (their text files of ``EXTS``, at most 1 MB each) into ``dest``."""
    packages: dict[str, tuple[Path, list[Path]]] = {}
    for sp in site.getsitepackages():
        for top in sorted(Path(sp).iterdir()):
            if top.is_dir() and not top.name.endswith((".dist-info", ".egg-info", "__pycache__")):
                files = sorted(p for p in top.rglob("*") if p.suffix in EXTS and p.is_file()
                               and not p.is_symlink() and p.stat().st_size < 1 << 20)
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
    print(f"corpus: {len(repos)} repos, {total / 1e6:.1f} MB")
    return sorted(repos)


def train_tokenizer(repos: list[Path], folder: Path) -> Path:
    """16k byte-level BPE with datagen's and StarCoder's FIM special tokens."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    texts = []
    for repo in repos[:: max(1, len(repos) // 20)]:
        for f in sorted(repo.rglob("*"))[:200]:
            if f.is_file():
                texts.append(f.read_text("utf-8", "ignore"))
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    specials = ["<|endoftext|>", "<repo_name>", "<file_sep>", "<fim_prefix>", "<fim_middle>", "<fim_suffix>"]
    tok.train_from_iterator(texts, trainers.BpeTrainer(vocab_size=16384, special_tokens=specials, show_progress=False,
                                                       initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    folder.mkdir(parents=True, exist_ok=True)
    tok.save(str(folder / "tokenizer.json"))
    (folder / "tokenizer_config.json").write_text(json.dumps({"eos_token": "<|endoftext|>"}))
    return folder


def run(repos: list[Path], out: Path, sets: list[str]) -> tuple[float, float, str]:
    """(wall s, CPU s of the build and the workers it reaped, stage times)."""
    cmd = [sys.executable, "-m", "datagen.cli.app", "build", "cpt-corpus", "-i", *map(str, repos), "-o", str(out),
           "-w", "2", "--force"]
    for s in sets:
        cmd += ["--set", s]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200", "DATAGEN_NO_PROGRESS": "1"}
    t0, r0 = time.monotonic(), resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall, r1 = time.monotonic() - t0, resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    if done.returncode:
        sys.exit(done.stderr[-3000:])
    stages = re.search(r"time per stage: (.*)$", done.stdout + done.stderr, re.M)
    return wall, cpu, stages.group(1) if stages else "?"


def report(out: Path) -> None:
    import duckdb

    con = duckdb.connect(str(out / "manifest.duckdb"), read_only=True)
    q = lambda sql: con.execute(sql).fetchall()  # noqa: E731
    print("dedup:", q("SELECT reason, count(*) FROM files WHERE reason LIKE '%duplicate' GROUP BY 1 ORDER BY 1"))
    print("mix: lang, weight, files before/after, downsampled, repeated, tokens before/after")
    for row in q("SELECT lang, weight, files_before, files_after, downsampled, repeated, tokens_before, tokens_after "
                 "FROM language_mix ORDER BY tokens_before DESC"):
        print("  ", row)
    print("fim:", q("SELECT sum(fim_files), count(*) FILTER (fim_files > 0), count(*) FROM repo_docs"))
    print("long buckets: split, bucket, docs, tokens, selected docs, selected tokens")
    for row in q("SELECT split, bucket, documents, tokens, selected_documents, selected_tokens FROM long_buckets "
                 "ORDER BY split, min_tokens"):
        print("  ", row)
    print("outputs:", q("SELECT split, seq_len, sequences, documents, tokens FROM pack_outputs ORDER BY ALL"))
    con.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=50)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--keep", type=Path, help="keep the corpus and outputs here")
    ap.add_argument("--report-only", action="store_true", help="print the features of the kept 'on' build")
    args = ap.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="cpt-features-"))
    if args.report_only:
        report(work / "on")
        return
    corpus = work / "corpus"
    repos = sorted(p for p in corpus.iterdir()) if corpus.exists() else build_corpus(corpus, args.mb, args.seed)
    tok = train_tokenizer(repos, work / "tok")
    meta = work / "meta.json"
    meta.write_text(json.dumps({r.name: {"stars": int(hashlib.sha256(r.name.encode()).hexdigest()[:4], 16)}
                                for r in repos}))
    base = [f"pack.tokenizer={tok}", "crawl.licenses=any"]
    on = [*base, *FIM_SETS, f"dedup.repo_metadata={meta}"]
    for r in range(args.rounds):
        for name, sets in (("off", base), ("on", on)):
            wall, cpu, stages = run(repos, work / name, sets)
            print(f"round {r} {name}: {wall:.1f} s wall, {cpu:.1f} CPU s ({stages})", flush=True)
    report(work / "on")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
