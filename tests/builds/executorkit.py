"""Helpers of the executor tests: the stand-in Slurm of ``tests/standin/slurm`` on PATH, its
queue and jobs, and a build's manifest rows without what differs between two runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import duckdb

ROOT = Path(__file__).resolve().parents[2]
STANDIN = ROOT / "tests" / "standin" / "slurm"


def slurm_env(state: Path, fail: str, **extra: str) -> dict[str, str]:
    """The environment of a build under the stand-in scheduler (``fail``: ``NAME:INDEX`` of
    an array task whose first run is lost, see ``scheduler.py``)."""
    return {"PATH": f"{STANDIN}:{Path(sys.executable).parent}:/usr/bin:/bin", "PYTHONPATH": str(ROOT),
            "STANDIN_SLURM_DIR": str(state), "STANDIN_PYTHON": sys.executable, "STANDIN_SLURM_FAIL": fail,
            "HOME": os.environ.get("HOME", "/tmp"), "COLUMNS": "200", "DATAGEN_NO_PROGRESS": "1", **extra}


def wait_for_queue(env: dict[str, str], timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while subprocess.run(["squeue", "-h"], env=env, capture_output=True, text=True).stdout.strip():
        assert time.monotonic() < deadline, "the stand-in queue did not drain"
        time.sleep(1)


def jobs(state: Path) -> list[dict]:
    return sorted((json.loads(p.read_text()) for p in (state / "jobs").glob("*.json")), key=lambda j: j["id"])


def manifest_rows(out: Path, tables: dict[str, tuple[str, ...]]) -> dict[str, list[tuple]]:
    """Every row of each table, sorted, without the columns named for it (run times)."""
    con = duckdb.connect(str(out / "manifest.duckdb"), read_only=True)
    try:
        return {t: sorted(con.execute(f"SELECT * {'EXCLUDE (' + ', '.join(cols) + ')' if cols else ''} "
                                      f"FROM {t}").fetchall(), key=repr) for t, cols in tables.items()}
    finally:
        con.close()
