"""The learned quality scorer: held-out agreement and scoring MB/s per core, datagen's
hashed byte-n-gram linear model (``quality_v1``) side by side with fastText supervised
and scikit-learn (``HashingVectorizer`` + ``SGDRegressor``), on the same files and labels.

No teacher model runs on these machines, so the labels come from a scripted rubric
(``proxy_rating``: points for distinct lines, descriptive names, comments, docstrings and
functions) over real Python files; agreement is with that rubric, which is what a learned
scorer must imitate. Each side trains on the same 80 % and is judged on the same 20 %.
Scoring is timed in CPU seconds of this process on one thread.

    python benchmarks/quality_throughput.py --root /path/to/site-packages --mb 30
"""

from __future__ import annotations

import os

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")

import argparse  # noqa: E402
import hashlib  # noqa: E402
import random  # noqa: E402
import re  # noqa: E402
import string  # noqa: E402
import sys  # noqa: E402
import sysconfig  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from datagen.config.quality import TrainConfig  # noqa: E402
from datagen.score.quality_model import Features, score_one  # noqa: E402
from datagen.score.quality_train import agreement, fit  # noqa: E402

IDENT = re.compile(r"[A-Za-z_]\w*")


def proxy_rating(text: str) -> int:
    """The scripted rubric standing in for a teacher: one point per criterion met."""
    lines = text.splitlines() or [""]
    comments = sum(1 for x in lines if x.lstrip().startswith("#")) / len(lines)
    defs = text.count("def ") + text.count("class ")
    docs = text.count('"""') / max(1, defs + 1)
    idents = IDENT.findall(text[:20000])
    mean_ident = sum(map(len, idents)) / max(1, len(idents))
    return int(comments > 0.05) + int(docs > 0.5) + int(mean_ident > 5) + int("def " in text) \
        + int(len(set(lines)) / len(lines) > 0.7)


def load_files(root: Path, mb: float, seed: int) -> list[str]:
    paths = sorted(root.rglob("*.py"))
    random.Random(seed).shuffle(paths)
    out, total = [], 0
    for p in paths:
        try:
            text = p.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if 200 <= len(text) <= 200_000:
            out.append(text)
            total += len(text.encode())
            if total >= mb * 1e6:
                break
    return out


def mbps(texts: list[str], seconds: float) -> float:
    return sum(len(t.encode()) for t in texts) / 1e6 / seconds


def bench_ours(train: list[str], y: list[int], test: list[str], yt: list[int], max_chars: int) -> dict:
    feats, cfg = Features(max_chars=max_chars), TrainConfig(max_chars=max_chars)
    t0 = time.process_time()
    w = fit(train, y, cfg, feats)
    train_s = time.process_time() - t0
    again = fit(train, y, cfg, feats)
    t0 = time.process_time()
    scores = [score_one(w, feats, t) for t in test]
    score_s = time.process_time() - t0
    whole = Features(max_chars=10**12)  # the same weights reading every byte of every file
    t0 = time.process_time()
    for t in test:
        score_one(w, whole, t)
    whole_s = time.process_time() - t0
    return {"train_s": train_s, "MB/s": mbps(test, score_s), "MB/s reading whole files": mbps(test, whole_s),
            "deterministic": bool(np.array_equal(w, again)), **agreement(scores, yt, 3.0)}


_SPLIT = {ord(c): f" {c} " for c in string.punctuation} | {ord("\n"): " ", ord("\r"): " ", ord("\t"): " "}


def bench_fasttext(train: list[str], y: list[int], test: list[str], yt: list[int], max_chars: int) -> dict:
    """fastText on punctuation-split text, then (when that stops with NaN) on whitespace
    tokens with fastText's usual supervised settings; three trainings each, same seed."""
    import fasttext

    notes = {}
    for split, lr in ((True, 0.2), (False, 0.5)):
        def line(t: str, split: bool = split) -> str:
            return t[:max_chars].translate(_SPLIT) if split else t[:max_chars].replace("\n", " ")

        with tempfile.TemporaryDirectory() as tmp:
            data = Path(tmp) / "train.txt"
            data.write_text("".join(f"__label__{label} {line(t)}\n" for t, label in zip(train, y)))
            digests, nans, model, train_s = [], 0, None, 0.0
            for _ in range(3):  # the same data and seed three times: are the weights the same?
                t0 = time.process_time()
                try:
                    m = fasttext.train_supervised(str(data), dim=16, wordNgrams=2, bucket=1 << 18, minCount=2,
                                                  epoch=10, lr=lr, seed=0, thread=1, verbose=0, minn=0, maxn=0)
                except RuntimeError:  # "Encountered NaN."
                    nans += 1
                    continue
                train_s = time.process_time() - t0
                m.save_model(str(Path(tmp) / "m.bin"))
                digests.append(hashlib.sha256((Path(tmp) / "m.bin").read_bytes()).hexdigest())
                model = m
        notes[f"NaN runs (split {split}, lr {lr})"] = nans
        if model is not None:
            break
    if model is None:
        return notes
    t0 = time.process_time()
    labels, probs = model.predict([line(t) for t in test], k=-1)
    scores = [sum(float(n.rsplit("__", 1)[-1]) * float(p) for n, p in zip(ls, ps)) for ls, ps in zip(labels, probs)]
    score_s = time.process_time() - t0
    return {**notes, "train_s": train_s, "MB/s": mbps(test, score_s), "distinct models of 3 runs": len(set(digests)),
            **agreement(scores, yt, 3.0)}


def bench_sklearn(train: list[str], y: list[int], test: list[str], yt: list[int], max_chars: int) -> dict:
    try:
        from sklearn.feature_extraction.text import HashingVectorizer
        from sklearn.linear_model import SGDRegressor
    except ImportError:
        return {"skipped": "pip install scikit-learn to compare"}
    vec = HashingVectorizer(n_features=1 << 18, token_pattern=r"[A-Za-z_]\w+|[^\sA-Za-z_0-9]",
                            alternate_sign=False, norm="l2", ngram_range=(1, 2))
    t0 = time.process_time()
    reg = SGDRegressor(random_state=0, alpha=1e-5, max_iter=50, tol=None).fit(
        vec.transform([t[:max_chars] for t in train]), y)
    train_s = time.process_time() - t0
    t0 = time.process_time()
    scores = np.clip(reg.predict(vec.transform([t[:max_chars] for t in test])), 0, 5).tolist()
    score_s = time.process_time() - t0
    return {"train_s": train_s, "MB/s": mbps(test, score_s), **agreement(scores, yt, 3.0)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", type=Path, default=Path(sysconfig.get_paths()["purelib"]))
    ap.add_argument("--mb", type=float, default=30.0, help="MB of Python files to read")
    ap.add_argument("--max-chars", type=int, default=8000, help="what every model reads of a file")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--sides", default="ours,fasttext,sklearn", help="which models to run")
    args = ap.parse_args()
    texts = load_files(args.root, args.mb, args.seed)
    labels = [proxy_rating(t) for t in texts]
    cut = int(len(texts) * 0.8)
    split = (texts[:cut], labels[:cut], texts[cut:], labels[cut:])
    held_mb = sum(len(t.encode()) for t in texts[cut:]) / 1e6
    print(f"{len(texts)} files, {sum(len(t.encode()) for t in texts) / 1e6:.1f} MB; held out {len(texts) - cut} "
          f"({held_mb:.1f} MB); ratings {np.bincount(labels, minlength=6).tolist()}; max_chars {args.max_chars}",
          flush=True)
    sides = {"ours": ("datagen quality_v1", bench_ours), "fasttext": ("fastText supervised", bench_fasttext),
             "sklearn": ("scikit-learn Hashing+SGD", bench_sklearn)}
    for key in args.sides.split(","):
        name, run = sides[key]
        result = run(*split, args.max_chars)
        shown = ", ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}" for k, v in result.items())
        print(f"{name}: {shown}", flush=True)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
