"""Fixtures for the scorer tests: a tiny causal LM trained here, one torch thread, and a
private cache root."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _private_cache_root(tmp_path, monkeypatch):
    """Teacher and env caches go under the test's tmp_path."""
    monkeypatch.setenv("DATAGEN_CACHE", str(tmp_path / "datagen-cache"))


@pytest.fixture(autouse=True)
def _torch_one_thread():
    """A 64-dim model runs much faster on one thread than with threads fighting over 2 cores."""
    torch = sys.modules.get("torch")
    if torch is None:
        yield
        return
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="session")
def tiny_lm(tmp_path_factory) -> Path:
    """A 2-layer GPT-2 and a 300-token BPE trained on a few lines of Python (~3 s)."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from tests.score.lm import train_tiny_lm

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return train_tiny_lm(tmp_path_factory.mktemp("tiny-lm"))
    finally:
        torch.set_num_threads(threads)
