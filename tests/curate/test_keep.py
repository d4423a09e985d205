"""``dedup.keep``: which copy of an exact or near duplicate survives, with repo metadata."""

from __future__ import annotations

import json

import duckdb
import pyarrow.parquet as pq
import pytest

from datagen.config.cpt import DedupConfig
from datagen.config.curate import NearDedupConfig
from datagen.curate.dedup import exact_dedup
from datagen.curate.keep import keep_rule
from datagen.curate.near_dedup import near_dedup
from datagen.errors import UserError
from tests.curate.helpers import crawl_row, synthetic_python, write_crawl

# repo "a" sorts first, "big" has most stars, "new" the latest date
META = {"a": {"stars": 3, "date": "2020-01-01"}, "big": {"stars": 900, "date": "2021-06-01T10:00:00Z"},
        "new": {"stars": 1, "date": "2024-02-02"}}


@pytest.fixture
def metadata(tmp_path):
    json_file = tmp_path / "meta.json"
    json_file.write_text(json.dumps(META))
    csv_file = tmp_path / "meta.csv"
    csv_file.write_text("repo,stars,date\n" + "".join(f"{r},{m['stars']},{m['date']}\n" for r, m in META.items()))
    return json_file, csv_file


def test_near_dedup_keeps_the_copy_the_rule_names(tmp_path, rng, metadata):
    text = synthetic_python(rng)
    rows = [crawl_row("a", "x.py", text), crawl_row("big", "x.py", text + "\n# c\n"),
            crawl_row("new", "x.py", text + "\n# a longer trailing comment\n"), crawl_row("zz", "x.py", text)]
    crawl = [write_crawl(tmp_path / "c.parquet", rows)]

    def rep(rule) -> str:  # every rule reuses the one signature run (only the clustering differs)
        reps = {r["cluster_id"] for r in pq.read_table(near_dedup(crawl, tmp_path / "w", NearDedupConfig(),
                                                                  keep=rule)).to_pylist()}
        assert len(reps) == 1
        return reps.pop()

    json_file, csv_file = metadata
    assert rep(keep_rule("longest", None)) == "new/x.py"
    assert rep(keep_rule("path", None)) == "a/x.py"
    assert rep(keep_rule("stars", str(json_file))) == "big/x.py"
    assert rep(keep_rule("newest", str(csv_file))) == "new/x.py"
    # a repo the metadata does not name comes last, then the longest decides
    partial = tmp_path / "partial.yaml"
    partial.write_text("a: {date: 2020-01-01}\nbig: {date: 2021-06-01}\n")
    assert rep(keep_rule("newest", str(partial))) == "big/x.py"


def _exact(rule, rows) -> dict[str, str | None]:
    con = duckdb.connect()
    con.execute("CREATE TABLE files (file_id VARCHAR, repo VARCHAR, path VARCHAR, bytes BIGINT, content_hash VARCHAR, "
                "decision VARCHAR, reason VARCHAR, duplicate_of VARCHAR)")
    con.execute("INSERT INTO files VALUES " + ", ".join(f"('{r}/{p}', '{r}', '{p}', {n}, 'h', 'kept', NULL, NULL)"
                                                        for r, p, n in rows))
    exact_dedup(con, keep=rule)
    return dict(con.execute("SELECT file_id, duplicate_of FROM files ORDER BY file_id").fetchall())


def test_exact_dedup_keeps_the_copy_the_rule_names(metadata):
    rows = [("new", "x.py", 10), ("a", "z.py", 10), ("big", "x.py", 12), ("a", "b.py", 11)]
    json_file, _ = metadata
    kept = lambda d: {f for f, dup in d.items() if dup is None}  # noqa: E731
    assert kept(_exact(keep_rule("longest", None), rows)) == {"a/b.py"}  # today's rule: first by (repo, path)
    assert kept(_exact(keep_rule("path", None), rows)) == {"a/b.py"}
    assert kept(_exact(keep_rule("stars", str(json_file)), rows)) == {"big/x.py"}
    newest = _exact(keep_rule("newest", str(json_file)), rows)
    assert kept(newest) == {"new/x.py"} and newest["a/z.py"] == "new/x.py"


def test_bad_metadata_and_missing_file_are_one_line_errors(tmp_path):
    with pytest.raises(UserError, match="cannot read"):
        keep_rule("stars", str(tmp_path / "nope.json"))
    bad = tmp_path / "bad.yaml"
    bad.write_text("a: {stars: many}\n")
    with pytest.raises(UserError, match="bad.yaml"):
        keep_rule("stars", str(bad))
    with pytest.raises(ValueError, match="needs repo_metadata"):
        DedupConfig(keep="newest")
