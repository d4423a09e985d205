"""Locate the top-level data folders (pipelines/, filters/, schemas/, sample_data/).

In a source checkout they sit next to the ``datagen`` package; in a wheel they are
packaged as ``datagen/_data/<name>`` (see pyproject's force-include).
"""

from __future__ import annotations

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


def data_file(folder: str, relpath: str) -> Path:
    return data_dir(folder) / relpath
