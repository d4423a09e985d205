"""Data the curation tests build themselves: synthetic source files and crawl parquets."""

from __future__ import annotations

import random
import string
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq


def random_ident(rng: random.Random) -> str:
    return rng.choice(string.ascii_lowercase) + "".join(
        rng.choices(string.ascii_lowercase + string.digits, k=rng.randint(5, 9))
    )


def synthetic_python(rng: random.Random, functions: int = 12) -> str:
    """A plausible Python module whose identifiers and constants are random, so two
    modules share almost no 5-word shingles."""
    out = [f"import {random_ident(rng)}", ""]
    for _ in range(functions):
        name, a, b = random_ident(rng), random_ident(rng), random_ident(rng)
        out.append(f"def {name}({a}, {b}):")
        out.append(f'    """Return the {random_ident(rng)} of {a} and {b}."""')
        for _ in range(rng.randint(2, 5)):
            out.append(f"    {random_ident(rng)} = {a} * {rng.randint(2, 999)} + {b}")
        out.append(f"    return {a} + {rng.randint(1, 99)}")
        out.append("")
    return "\n".join(out)


def crawl_row(repo: str, path: str, text: str, lang: str = "python", **extra) -> dict:
    """A crawl-parquet row: FileRow fields the steps read, plus ``text``."""
    row = {
        "run_id": "test",
        "file_id": f"{repo}/{path}",
        "repo": repo,
        "path": path,
        "lang": lang,
        "bytes": len(text.encode()),
        "decision": "kept",
        "reason": None,
        "text": text,
    }
    row.update(extra)
    return row


def write_crawl(path: Path, rows: list[dict]) -> Path:
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path
