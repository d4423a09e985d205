"""Fixtures: a real OpenAI-compatible server on 127.0.0.1, teacher configs with tiny
backoff, and a tiny GPT-2 trained here (byte-level BPE + 2 layers) for the local backend."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.isolation import private_cache_root, torch_one_thread  # noqa: F401 (autouse)
from tests.teachers.fake_server import FakeOpenAI
from tests.teachers.helpers import CORPUS


@pytest.fixture
def server():
    """A factory: ``with server(faults=...) as s`` starts a fresh fake server."""
    return FakeOpenAI


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory) -> Path:
    """A tiny byte-level BPE and a 2-layer GPT-2 trained for a few steps on the teacher corpus."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from tests.score.lm import train_tiny_lm

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return train_tiny_lm(tmp_path_factory.mktemp("tiny-gpt2"), steps=40, corpus=CORPUS, stride=1)
    finally:
        torch.set_num_threads(threads)
