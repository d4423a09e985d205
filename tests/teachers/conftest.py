"""Fixtures: a real OpenAI-compatible server on 127.0.0.1, teacher configs with tiny
backoff, and a tiny GPT-2 trained here (byte-level BPE + 2 layers) for the local backend."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.teachers.fake_server import FakeOpenAI
from tests.teachers.helpers import CORPUS


@pytest.fixture
def server():
    """A factory: ``with server(faults=...) as s`` starts a fresh fake server."""
    return FakeOpenAI


@pytest.fixture(autouse=True)
def _private_cache_root(tmp_path, monkeypatch):
    """The default cache folder ($DATAGEN_CACHE/teacher) goes under the test's tmp_path."""
    monkeypatch.setenv("DATAGEN_CACHE", str(tmp_path / "datagen-cache"))


@pytest.fixture(autouse=True)
def _torch_one_thread():
    """A 64-dim model runs ~30x faster on one thread than with threads fighting over 2 cores."""
    torch = sys.modules.get("torch")
    if torch is None:
        yield
        return
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory) -> Path:
    """Train a tiny byte-level BPE and a 2-layer GPT-2 for a few steps; save to a folder."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    out = tmp_path_factory.mktemp("tiny-gpt2")
    text = (CORPUS + "<|endoftext|>") * 20
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=300, special_tokens=["<|endoftext|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator([CORPUS] * 20, trainer)
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|endoftext|>",
                                                pad_token="<|endoftext|>")
    fast.save_pretrained(out)

    torch.manual_seed(0)
    cfg = transformers.GPT2Config(vocab_size=len(fast), n_positions=256, n_embd=64, n_layer=2,
                                  n_head=2, eos_token_id=fast.eos_token_id,
                                  bos_token_id=fast.eos_token_id)
    model = transformers.GPT2LMHeadModel(cfg)
    ids = torch.tensor(fast(text)["input_ids"])
    block = 64
    batches = ids[: (len(ids) // block) * block].view(-1, block)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    model.train()
    for step in range(40):
        batch = batches[step % len(batches)].unsqueeze(0)
        loss = model(batch, labels=batch).loss
        loss.backward()
        opt.step()
        opt.zero_grad()
    model.save_pretrained(out)
    torch.set_num_threads(threads)
    return out
