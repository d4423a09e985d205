"""The default build (no inputs) on the bundled sample_data, run as a user runs it."""

from __future__ import annotations

import os
import subprocess
import sys

import duckdb
import pytest

from datagen.records import DROP_REASONS, reason_key


@pytest.mark.slow
def test_default_build_on_sample_data(tmp_path):
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "datagen.cli.app", "build", "cpt-corpus", "--output", str(out)],
        capture_output=True, text=True, env={**os.environ, "COLUMNS": "200"},
    )
    assert proc.returncode == 0, proc.stderr
    assert "kept" in proc.stdout and "dropped" in proc.stdout  # the summary table
    con = duckdb.connect(str(out / "manifest.duckdb"), read_only=True)
    reasons = dict(con.execute("SELECT repo || '/' || path, reason FROM files").fetchall())
    langs = {r[0] for r in con.execute("SELECT DISTINCT lang FROM files WHERE decision='kept'").fetchall()}
    con.close()
    assert {"python", "javascript", "typescript", "go", "rust"} <= langs
    assert reasons["shapes-js/node_modules/leftpad/index.js"] == "vendored"
    assert reasons["tinyhttp/tinyhttp/_proto/wire_pb2.py"] == "generated"
    assert reasons["shapes-js/dist/shapes.min.js"] == "minified"
    assert reasons["tinyhttp/docs/logo.png"] == "binary"
    assert reasons["tinyhttp/server.log"] == "gitignored"
    assert reasons["wordfreq-c/src/main.c"] == "license"
    assert reasons["tinyhttp/scripts/bump_version.py"] == "exact_duplicate"
    assert reasons["ringbuf-rs/scripts/bump_version.py"] is None
    assert {reason_key(r) for r in reasons.values() if r} <= set(DROP_REASONS)
    assert (out / "README.md").exists() and list((out / "data").glob("train-*.parquet"))
