"""Constants and config helpers shared by the teacher tests."""

from __future__ import annotations

from pathlib import Path

from datagen.config.teacher import TeacherConfig

MODEL = "tiny-teacher"


def fast_config(base_url: str, cache_dir: Path | None, **kw) -> TeacherConfig:
    """Tiny timeouts and backoff so fault tests take milliseconds."""
    opts = dict(model=MODEL, base_url=base_url, timeout_s=0.5, max_retries=3,
                backoff_base_s=0.005, backoff_max_s=0.05, max_concurrency=16,
                cache_dir=str(cache_dir) if cache_dir else None, api_key_env="DATAGEN_TEST_KEY")
    opts.update(kw)
    return TeacherConfig(**opts)


CORPUS = """def add(a, b):
    return a + b

def sub(a, b):
    return a - b

class Stack:
    def __init__(self):
        self.items = []

    def push(self, x):
        self.items.append(x)

    def pop(self):
        return self.items.pop()
"""
