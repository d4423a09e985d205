"""A tiny causal LM trained here, and a plain one-text-at-a-time reference computation of
prompt logprobs that the vLLM stand-in and the local completions server both answer with
(independent of the batched scorer under test)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.teachers.helpers import CORPUS as TEACHER_CORPUS

# The teacher tests' corpus: text the tiny model is trained on (in distribution).
IN_DISTRIBUTION = TEACHER_CORPUS

# More lines of the same kind, so the model sees a little variety.
CORPUS = IN_DISTRIBUTION + """
def mul(a, b):
    return a * b

class Queue:
    def __init__(self):
        self.items = []

    def put(self, x):
        self.items.append(x)
"""


def train_tiny_lm(out: Path, steps: int = 60, corpus: str = CORPUS, stride: int = 3) -> Path:
    """Byte-level BPE (300 tokens) + a 2-layer, 64-dim GPT-2 trained on ``corpus`` (one
    64-token block per step, every ``stride``-th block in turn); deterministic."""
    import torch
    import transformers
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=300, special_tokens=["<|endoftext|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator([corpus] * 20, trainer)
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|endoftext|>",
                                                pad_token="<|endoftext|>")
    fast.save_pretrained(out)
    torch.manual_seed(0)
    cfg = transformers.GPT2Config(vocab_size=len(fast), n_positions=256, n_embd=64, n_layer=2,
                                  n_head=2, eos_token_id=fast.eos_token_id,
                                  bos_token_id=fast.eos_token_id)
    model = transformers.GPT2LMHeadModel(cfg)
    ids = torch.tensor(fast((corpus + "<|endoftext|>") * 20)["input_ids"])
    block = 64
    batches = ids[: (len(ids) // block) * block].view(-1, block)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    model.train()
    for step in range(steps):
        batch = batches[(step * stride) % len(batches)].unsqueeze(0)
        model(batch, labels=batch).loss.backward()
        opt.step()
        opt.zero_grad()
    model.save_pretrained(out)
    return out


class ReferenceLM:
    """The tiny model, scoring one sequence per forward pass, no padding, no batching."""

    def __init__(self, path: str | Path):
        import threading

        import transformers

        self.tokenizer = transformers.AutoTokenizer.from_pretrained(path)
        self.model = transformers.AutoModelForCausalLM.from_pretrained(path).eval()
        self.lock = threading.Lock()  # one forward pass at a time (server threads)

    def logprobs(self, ids: list[int]) -> tuple[Any, list[int]]:
        """(log-softmax over the vocabulary at each position [n, V], token ids)."""
        import torch

        with self.lock, torch.inference_mode():
            logits = self.model(torch.tensor([ids])).logits[0].float()
        return torch.log_softmax(logits, dim=-1), ids

    def prompt_logprobs(self, ids: list[int]) -> tuple[list[float | None], int, float]:
        """Each prompt token's logprob (first None) and the greedy next token with its."""
        table, _ = self.logprobs(ids)
        lps: list[float | None] = [None] + [float(table[i - 1, t]) for i, t in enumerate(ids) if i]
        nxt = int(table[-1].argmax())
        return lps, nxt, float(table[-1, nxt])
