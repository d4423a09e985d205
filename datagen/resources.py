"""Locate the top-level data folders (pipelines/, filters/, schemas/, sample_data/), and
the user's cache folder.

In a source checkout the data folders sit next to the ``datagen`` package; in a wheel they
are packaged as ``datagen/_data/<name>`` (see pyproject's force-include).
"""

from __future__ import annotations

import os
from pathlib import Path

_PKG = Path(__file__).resolve().parent
DATA_FOLDERS = ("pipelines", "filters", "schemas", "sample_data")


def data_dir(name: str) -> Path:
    """Return the folder ``name`` (one of DATA_FOLDERS), checkout first, then wheel."""
    if name not in DATA_FOLDERS:
        raise ValueError(f"unknown data folder {name!r}")
    for candidate in (_PKG.parent / name, _PKG / "_data" / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"data folder {name!r} not found next to the package or inside it")


def cache_root() -> Path:
    """Where datagen keeps caches shared across runs (sandbox envs, teacher answers):
    ``$DATAGEN_CACHE`` when set, else ``~/.cache/datagen``; always absolute."""
    root = os.environ.get("DATAGEN_CACHE") or Path.home() / ".cache" / "datagen"
    return Path(root).expanduser().absolute()


def env_cache_dir() -> Path:
    """Where built test environments live (``<cache_root>/envs``): the env manager's default,
    and a folder the sandbox's working-copy guard allows inside a home."""
    return cache_root() / "envs"
