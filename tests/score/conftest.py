"""Fixtures for the scorer tests: a tiny causal LM trained here, one torch thread, and a
private cache root."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.isolation import private_cache_root, torch_one_thread  # noqa: F401 (autouse)


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
