"""`datagen build cpt-corpus` with the curation steps, as a user runs it: the manifest
shows each drop with its reason, the clusters table, and redacted text in the shards."""

from __future__ import annotations

import json
import random
import subprocess
import sys

import duckdb
import pyarrow.parquet as pq
import pytest

from tests.conftest import MIT, make_git_repo, write_tree
from tests.curate.helpers import synthetic_python
from tests.curate.plant import planted_copy
from tests.curate.test_secrets import planted_secrets


@pytest.mark.slow
def test_build_records_curation_decisions(tmp_path):
    rng = random.Random(99)
    core = synthetic_python(rng, functions=20)
    copy, _ = planted_copy(core, rng)
    solution = synthetic_python(rng, functions=3)
    secrets = planted_secrets(rng)
    settings = (
        "import os\n\n" + "\n".join(secrets[k][0] for k in ("aws_access_key_id", "email", "password_assignment")) + "\n"
    )
    app = make_git_repo(
        tmp_path / "src" / "app",
        {
            "LICENSE": MIT,
            "app/core.py": core,
            "app/broken.py": "def f(:\n    return (\nclass\n" * 5,
            "app/settings.py": settings,
            "app/helpers.py": "import sys\n\n\n" + solution + "\n\nprint(sys.argv)\n",
        },
    )
    fork = write_tree(tmp_path / "src" / "fork", {"LICENSE": MIT, "core.py": copy})
    flask = write_tree(tmp_path / "src" / "flask", {"LICENSE": MIT, "src/flask/app.py": "x = 1\n"})
    bench = tmp_path / "bench.jsonl"
    bench.write_text(json.dumps({"id": "B/1", "prompt": "Write it.", "solution": solution}) + "\n")
    out = tmp_path / "out"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "datagen.cli.app",
            "build",
            "cpt-corpus",
            "-i",
            str(app),
            str(fork),
            str(flask),
            "-o",
            str(out),
            "--set",
            f"decontam.benchmarks=[{{name: bench, path: {bench}, fields: [solution], id_field: id}}]",
        ],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "DATAGEN_NO_PROGRESS": "1"},
    )
    assert proc.returncode == 0, proc.stderr

    con = duckdb.connect(str(out / "manifest.duckdb"), read_only=True)
    cur = con.execute("SELECT * FROM files")
    cols = [d[0] for d in cur.description]
    rows = {(r["repo"], r["path"]): r for r in (dict(zip(cols, x)) for x in cur.fetchall())}
    clusters = con.execute("SELECT cluster_id, size, representative FROM clusters").fetchall()
    con.close()

    longer, shorter = sorted([("app", "app/core.py"), ("fork", "core.py")], key=lambda k: (-rows[k]["bytes"], k))
    rep_id = rows[longer]["file_id"]
    assert rows[shorter]["reason"] == "near_duplicate"
    assert rows[shorter]["duplicate_of"] == rep_id
    assert rows[longer]["decision"] == "kept"
    assert rows[longer]["cluster_id"] == rows[shorter]["cluster_id"] == rep_id
    assert clusters == [(rep_id, 2, rep_id)]

    broken = rows[("app", "app/broken.py")]
    assert broken["reason"] == "syntax_errors" and broken["syntax_error_ratio"] > 0.05
    assert rows[longer]["syntax_error_ratio"] == 0.0

    leaked = rows[("app", "app/helpers.py")]
    assert (leaked["reason"], leaked["contamination_source"]) == ("contaminated", "bench:B/1.solution")
    assert leaked["contamination_span"]

    excluded = rows[("flask", "src/flask/app.py")]
    assert excluded["reason"] == "eval_repo"
    assert excluded["contamination_source"] == "eval_repos:swe-bench:pallets/flask"

    kept = rows[("app", "app/settings.py")]
    assert kept["decision"] == "kept" and kept["secrets_redacted"] == 3
    assert json.loads(kept["secret_kinds"]) == {"aws_access_key_id": 1, "email": 1, "password_assignment": 1}
    texts = {
        r["path"]: r["text"] for f in sorted((out / "data").glob("*.parquet")) for r in pq.read_table(f).to_pylist()
    }
    redacted = texts["app/settings.py"]
    for kind in ("aws_access_key_id", "email", "password_assignment"):
        assert secrets[kind][1] not in redacted
    assert "<AWS_ACCESS_KEY_ID>" in redacted and "<EMAIL>" in redacted
    assert set(texts) == {"app/settings.py", longer[1]}
