"""sha256 of everything a cpt-corpus build wrote that must not change between code versions.

For an output folder: the sha256 of every file under ``data/`` and ``tokens/``, and of
every non-empty manifest table's rows (all columns but ``run_id``, rows in sorted order,
as DuckDB prints them), the ``runs`` table left out (times and versions). Prints one
``name sha256`` line each; two builds of the same recipe on the same files must print
the same lines whatever code built them (``diff`` the outputs of two checkouts).

    python benchmarks/output_digest.py OUT [OUT2]   # with two: exits 1 when they differ
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import duckdb

SKIP_TABLES = {"runs"}  # start/finish times, datagen version


def digest(out: Path) -> dict[str, str]:
    """name -> sha256 for the output folder ``out`` (see the module docstring)."""
    found: dict[str, str] = {}
    for sub in ("data", "tokens"):
        for f in sorted((out / sub).rglob("*")):
            if f.is_file():
                found[str(f.relative_to(out))] = hashlib.sha256(f.read_bytes()).hexdigest()
    con = duckdb.connect(str(out / "manifest.duckdb"), read_only=True)
    try:
        tables = [t for (t,) in con.execute(
            "SELECT table_name FROM information_schema.tables ORDER BY 1").fetchall()]
        for t in tables:
            if t in SKIP_TABLES:
                continue
            cols = [c for (c, *_) in con.execute(f'DESCRIBE "{t}"').fetchall() if c != "run_id"]
            if not cols:
                continue
            h = hashlib.sha256()
            n = 0
            sel = ", ".join(f'"{c}"' for c in cols)
            cur = con.execute(f'SELECT {sel} FROM "{t}" ORDER BY ALL')
            while rows := cur.fetchmany(10_000):
                for row in rows:
                    h.update(repr(row).encode("utf-8", "surrogatepass") + b"\n")
                    n += 1
            if n:
                found[f"manifest.{t} ({n} rows)"] = h.hexdigest()
    finally:
        con.close()
    return found


def main() -> int:
    outs = [Path(a) for a in sys.argv[1:]]
    if not 1 <= len(outs) <= 2:
        sys.exit(__doc__)
    digests = [digest(o) for o in outs]
    for name, sha in digests[0].items():
        print(f"{name} {sha}")
    if len(digests) == 2:
        diff = sorted(k for k in digests[0].keys() | digests[1].keys() if digests[0].get(k) != digests[1].get(k))
        for k in diff:
            print(f"DIFFERS: {k}", file=sys.stderr)
        print("identical" if not diff else f"{len(diff)} differ", file=sys.stderr)
        return 1 if diff else 0
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
