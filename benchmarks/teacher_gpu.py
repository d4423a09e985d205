"""Generation throughput: datagen's transformers teacher against a plain ``model.generate`` loop.

Builds its own model and tokenizer (no downloads, via perplexity_throughput.build_model): a
byte-level BPE trained on generated Python-like text and a randomly initialised causal LM,
Qwen2.5-0.5B's shape on CUDA (``--shape qwen0.5b``), a 4-layer 256-dim GPT-2 elsewhere.
Sends N raw prompts of varied length (greedy, ``--new-tokens`` each) through:

- ``datagen-static`` / ``datagen-continuous``: ``TransformersTeacher`` (cache off) with
  ``batching`` static (batches of ``--batch-size`` sorted by length) or continuous
  (``generate_batch``, paged attention); ``--batching`` picks one or both;
- ``loop``: the plain loop, batches of ``--batch-size`` in input order, left-padded,
  ``model.generate(max_new_tokens=..., do_sample=False)``.

All share the same weights. Prints generated tokens/s (tokens before the end-of-text token),
each datagen path's ratio to the loop, and how many answers equal the loop's. Load time
is excluded; best of ``--repeat`` interleaved rounds, after one small warm-up each.

    python benchmarks/teacher_gpu.py [--prompts 512] [--new-tokens 128] [--device cuda]
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from perplexity_throughput import build_model, make_texts  # noqa: E402

from datagen.config.teacher import TeacherConfig  # noqa: E402
from datagen.teachers import TeacherRequest, make_teacher  # noqa: E402


def teacher(folder: Path, args, batching: str):
    cfg = TeacherConfig(backend="transformers", model=str(folder), cache_dir=None,
                        sampling={"max_tokens": args.new_tokens, "temperature": 0.0},
                        transformers={"device": args.device, "dtype": args.dtype,
                                      "batch_size": args.batch_size, "batching": batching})
    t = make_teacher(cfg)
    t.load()
    t._loaded = True
    assert t.batching == batching, f"{batching} batching is not available here"
    return t


def run_teacher(t, prompts: list[str]) -> tuple[int, list[str]]:
    results = t.generate([TeacherRequest(id=str(i), prompt=p) for i, p in enumerate(prompts)])
    assert all(r.status in ("ok", "truncated") for r in results), results[0].error
    return sum(r.usage.completion_tokens for r in results), [r.text for r in results]


def run_loop(model, tok, prompts: list[str], new_tokens: int, size: int, device: str) -> tuple[int, list[str]]:
    """The baseline: padded batches in input order, one ``generate`` each."""
    tokens, texts = 0, []
    for start in range(0, len(prompts), size):
        enc = tok(prompts[start:start + size], return_tensors="pt", padding=True).to(device)
        with torch.no_grad():
            out = model.generate(**enc, max_new_tokens=new_tokens, do_sample=False,
                                 pad_token_id=tok.pad_token_id)
        for row in out[:, enc["input_ids"].shape[1]:].tolist():
            ids = row[:row.index(tok.eos_token_id)] if tok.eos_token_id in row else row
            tokens += len(ids)
            texts.append(tok.decode(ids, skip_special_tokens=True))
    return tokens, texts


def timed(runs: dict, repeat: int, device: str) -> dict[str, tuple[float, int, list[str]]]:
    best = {name: (math.inf, 0, []) for name in runs}
    for _ in range(repeat):
        for name, fn in runs.items():
            if device.startswith("cuda"):
                torch.cuda.synchronize()
            wall = time.perf_counter()
            tokens, texts = fn()
            if device.startswith("cuda"):
                torch.cuda.synchronize()
            wall = time.perf_counter() - wall
            if wall < best[name][0]:
                best[name] = (wall, tokens, texts)
    return best


def main() -> None:
    cuda = torch.cuda.is_available()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=512 if cuda else 32)
    parser.add_argument("--new-tokens", type=int, default=128 if cuda else 32)
    parser.add_argument("--prompt-tokens", type=int, default=256, help="longest prompt")
    parser.add_argument("--batch-size", type=int, default=64 if cuda else 8)
    parser.add_argument("--device", default="cuda" if cuda else "cpu")
    parser.add_argument("--shape", choices=["gpt2-small4", "qwen0.5b"],
                        default="qwen0.5b" if cuda else "gpt2-small4")
    parser.add_argument("--batching", choices=["static", "continuous", "both"], default="both")
    parser.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch's default)")
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    args.dtype = "bfloat16" if args.device.startswith("cuda") else "float32"
    paths = ["static", "continuous"] if args.batching == "both" else [args.batching]

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        build_model(folder, args.shape)
        teachers = {f"datagen-{p}": teacher(folder, args, p) for p in paths}
        first = next(iter(teachers.values()))
        model, tok = first.model, first.tokenizer  # one set of weights for every contender
        for t in teachers.values():
            t.model = model
        prompts = make_texts(args.prompts, args.prompt_tokens, seed=2)
        runs = {name: (lambda t=t: run_teacher(t, prompts)) for name, t in teachers.items()}
        runs["loop"] = lambda: run_loop(model, tok, prompts, args.new_tokens, args.batch_size, args.device)
        for t in teachers.values():
            run_teacher(t, prompts[:4])  # warm-up
        run_loop(model, tok, prompts[:4], 4, 4, args.device)
        results = timed(runs, args.repeat, args.device)

    print(f"{args.prompts} prompts (up to {args.prompt_tokens} tokens), {args.new_tokens} new tokens, "
          f"greedy, shape {args.shape}, device {args.device} ({args.dtype}), batch size "
          f"{args.batch_size}, torch threads {torch.get_num_threads()}, best of {args.repeat}")
    loop_wall, _, loop_texts = results["loop"]
    print(f"{'contender':<20} {'wall s':>7} {'tokens':>8} {'tokens/s':>9} {'vs loop':>8} {'same answers':>13}")
    for name, (wall, tokens, texts) in results.items():
        same = sum(a == b for a, b in zip(texts, loop_texts, strict=True))
        print(f"{name:<20} {wall:7.2f} {tokens:8d} {tokens / wall:9.0f} {loop_wall / wall:7.2f}x "
              f"{same:>8}/{len(texts)}")


if __name__ == "__main__":
    main()
