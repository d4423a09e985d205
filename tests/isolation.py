"""Autouse fixtures shared by the model-backed test folders (imported by their conftest)."""

from __future__ import annotations

import sys

import pytest


@pytest.fixture(autouse=True)
def private_cache_root(tmp_path, monkeypatch):
    """Teacher and env caches ($DATAGEN_CACHE) go under the test's tmp_path."""
    monkeypatch.setenv("DATAGEN_CACHE", str(tmp_path / "datagen-cache"))


@pytest.fixture(autouse=True)
def torch_one_thread():
    """A 64-dim model runs much faster on one thread than with threads fighting over 2 cores."""
    torch = sys.modules.get("torch")
    if torch is None:
        yield
        return
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
