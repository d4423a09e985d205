"""Perplexity throughput: datagen's transformers scorer against plain transformers loops.

Builds its own model and tokenizer (no downloads): a byte-level BPE trained on generated
Python-like text and a randomly initialised causal LM (``--shape gpt2-small4``: 4 layers,
256 dims; ``--shape qwen0.5b``: Qwen2.5-0.5B's shape, for a GPU). Scores N texts of varied
lengths (log-normal, 8 to ``--max-length`` tokens) three ways, all in the same dtype:

- ``datagen``: ``TransformersScorer`` (sorted by length, batches of ``--batch-tokens``
  padded tokens, padding only within a bucket);
- ``loop_1``: the plain loop, one text per forward pass, ``model(ids, labels=ids).loss``
  (the usual hand-written perplexity loop);
- ``fixed_B``: naive fixed batches of ``--fixed-batch`` texts in input order, padded to the
  longest text of each batch.

Prints texts/s, scored tokens/s, the ratios (wall and this process's CPU time), and the
largest relative difference between scores (they compute the same quantity). Load time
is excluded; best of ``--repeat`` interleaved rounds.

    python benchmarks/perplexity_throughput.py [--texts 512] [--device cpu] [--shape gpt2-small4]
"""

from __future__ import annotations

import argparse
import math
import random
import tempfile
import time
from pathlib import Path

import torch
import transformers
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

from datagen.config.score import PerplexityConfig
from datagen.score.ppl_transformers import TransformersScorer

WORDS = ["def", "return", "self", "for", "in", "if", "else", "import", "class", "value", "items",
         "count", "index", "result", "data", "path", "name", "None", "True", "len", "range", "+", "=",
         "(", ")", ":", "[", "]", "0", "1", "x", "y", "list", "dict", "append", "open", "with"]


def code_line(rng: random.Random) -> str:
    return "    " * rng.randint(0, 3) + " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 12)))


def make_texts(n: int, max_tokens: int, seed: int = 0) -> list[str]:
    """N texts whose lengths are log-normal (median ~1/6 of ``max_tokens``), in random order."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        target = int(min(max_tokens, max(8, rng.lognormvariate(math.log(max_tokens / 6), 0.8))))
        lines, size = [], 0
        while size < target:
            line = code_line(rng)
            lines.append(line)
            size += len(line.split()) + 2
        out.append("\n".join(lines))
    return out


def build_model(folder: Path, shape: str) -> None:
    """Train a BPE on generated text; save it with a random model of the chosen shape."""
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=2000, special_tokens=["<|endoftext|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(make_texts(2000, 256, seed=1), trainer)
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|endoftext|>",
                                                pad_token="<|endoftext|>")
    fast.save_pretrained(folder)
    torch.manual_seed(0)
    if shape == "qwen0.5b":
        cfg = transformers.Qwen2Config(
            vocab_size=151936, hidden_size=896, intermediate_size=4864, num_hidden_layers=24,
            num_attention_heads=14, num_key_value_heads=2, max_position_embeddings=32768,
            tie_word_embeddings=True, eos_token_id=fast.eos_token_id, bos_token_id=fast.eos_token_id)
        model = transformers.Qwen2ForCausalLM(cfg)
    else:
        cfg = transformers.GPT2Config(vocab_size=len(fast), n_positions=1024, n_embd=256, n_layer=4,
                                      n_head=4, eos_token_id=fast.eos_token_id,
                                      bos_token_id=fast.eos_token_id)
        model = transformers.GPT2LMHeadModel(cfg)
    model.save_pretrained(folder)


def loop_one(model, tok, texts: list[str], device: str, max_length: int) -> list[float]:
    """Baseline ``loop_1``: one text per forward pass."""
    out = []
    with torch.inference_mode():
        for text in texts:
            ids = torch.tensor([tok(text)["input_ids"][:max_length]], device=device)
            out.append(math.exp(model(ids, labels=ids).loss.float().item()))
    return out


def fixed_batches(model, tok, texts: list[str], device: str, max_length: int, size: int) -> list[float]:
    """Baseline ``fixed_B``: batches of ``size`` texts in input order, right-padded."""
    out = []
    with torch.inference_mode():
        for start in range(0, len(texts), size):
            enc = tok(texts[start:start + size], padding=True, truncation=True, max_length=max_length,
                      return_tensors="pt").to(device)
            logits = model(**enc).logits[:, :-1].float()
            target, mask = enc["input_ids"][:, 1:], enc["attention_mask"][:, 1:].float()
            nll = torch.nn.functional.cross_entropy(logits.transpose(1, 2), target, reduction="none")
            out += torch.exp((nll * mask).sum(1) / mask.sum(1)).tolist()
    return out


def timed(runs: dict, repeat: int, device: str) -> dict[str, tuple[float, float, list[float]]]:
    """Best (wall, CPU) seconds of each contender over ``repeat`` rounds. Rounds interleave
    the contenders, so load from other processes on a shared machine hits them alike."""
    best = {name: (math.inf, math.inf, []) for name in runs}
    for _ in range(repeat):
        for name, fn in runs.items():
            if device.startswith("cuda"):
                torch.cuda.synchronize()
            wall, cpu = time.perf_counter(), time.process_time()
            scores = fn()
            if device.startswith("cuda"):
                torch.cuda.synchronize()
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            old = best[name]
            best[name] = (min(old[0], wall), min(old[1], cpu), scores)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=512)
    parser.add_argument("--max-length", type=int, default=512)
    parser.add_argument("--batch-tokens", type=int, default=None, help="default: the scorer's")
    parser.add_argument("--fixed-batch", type=int, default=16)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--shape", choices=["gpt2-small4", "qwen0.5b"], default="gpt2-small4")
    parser.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch's default)")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    dtype = "bfloat16" if args.device.startswith("cuda") else "float32"

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        build_model(folder, args.shape)
        cfg = PerplexityConfig(model=str(folder), device=args.device, dtype=dtype,
                               batch_tokens=args.batch_tokens, max_length=args.max_length)
        scorer = TransformersScorer(cfg)
        scorer.load()
        model, tok = scorer.model, scorer.tokenizer  # the same weights for every contender
        texts = make_texts(args.texts, args.max_length)
        tokens = sum(len(r) - 1 for r in scorer.encode(texts))
        scorer.score(texts[:8])  # warm-up
        runs = {
            "datagen": lambda: scorer.score(texts),
            "loop_1": lambda: loop_one(model, tok, texts, args.device, args.max_length),
            f"fixed_{args.fixed_batch}": lambda: fixed_batches(model, tok, texts, args.device,
                                                                args.max_length, args.fixed_batch),
        }
        results = timed(runs, args.repeat, args.device)

    print(f"{args.texts} texts, {tokens} scored tokens, shape {args.shape}, device {args.device} "
          f"({dtype}), torch threads {torch.get_num_threads()}, batch_tokens {args.batch_tokens or 'default'}")
    ours, ours_cpu, our_scores = results["datagen"]
    print(f"{'method':<10} {'wall s':>7} {'cpu s':>7} {'texts/s':>8} {'tokens/s':>9} "
          f"{'datagen is (wall)':>18} {'(cpu)':>6} {'max rel diff':>13}")
    for name, (wall, cpu, scores) in results.items():
        diff = max(abs(a - b) / b for a, b in zip(our_scores, scores, strict=True))
        print(f"{name:<10} {wall:7.2f} {cpu:7.2f} {args.texts / wall:8.1f} {tokens / wall:9.0f} "
              f"{wall / ours:17.2f}x {cpu / ours_cpu:5.2f}x {diff:13.2e}")


if __name__ == "__main__":
    main()
