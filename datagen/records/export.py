"""Generate ``schemas/`` from the record models: ``python -m datagen.records.export``.

Writes one JSON Schema per record (``<table or record>.schema.json``) and the manifest
DDL (``manifest.sql``). A test regenerates them in memory and fails on drift.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from datagen.records import DATASET_RECORDS, TABLES
from datagen.records.base import Record, manifest_ddl


def schema_name(record: type[Record]) -> str:
    return record.__table__ or record.__name__


def render_schemas() -> dict[str, str]:
    """File name -> content of every generated schema file."""
    files = {"manifest.sql": "-- Generated from datagen.records by `python -m datagen.records.export`.\n"
             "-- Do not edit by hand.\n\n" + manifest_ddl(TABLES)}
    for record in [*TABLES, *DATASET_RECORDS]:
        schema = record.model_json_schema()
        files[f"{schema_name(record)}.schema.json"] = json.dumps(schema, indent=2, sort_keys=True) + "\n"
    return files


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    target = Path(argv[0]) if argv else Path(__file__).resolve().parents[2] / "schemas"
    target.mkdir(parents=True, exist_ok=True)
    for name, content in render_schemas().items():
        (target / name).write_text(content, encoding="utf-8")
    print(f"wrote {len(render_schemas())} files to {target}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
