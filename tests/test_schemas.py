"""schemas/ is generated from the record models; this fails when they drift apart."""

from datagen.records.export import render_schemas
from datagen.resources import data_dir


def test_schemas_folder_matches_the_records():
    folder = data_dir("schemas")
    expected = render_schemas()
    on_disk = {p.name: p.read_text() for p in folder.iterdir() if p.suffix in (".json", ".sql")}
    assert set(on_disk) == set(expected), "run: python -m datagen.records.export"
    for name, content in expected.items():
        assert on_disk[name] == content, f"{name} drifted; run: python -m datagen.records.export"


def test_manifest_ddl_creates_every_table(tmp_path):
    import duckdb

    con = duckdb.connect(str(tmp_path / "m.duckdb"))
    con.execute(render_schemas()["manifest.sql"])
    tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    assert {"runs", "files", "shards"} <= tables
