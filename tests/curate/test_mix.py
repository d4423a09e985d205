"""The language mix: seeded content-hash down-sampling, capped repetition, counts."""

from __future__ import annotations

import hashlib

import duckdb
import pyarrow as pa

from datagen.config.cpt import MixConfig
from datagen.curate.mix import apply_mix, draw, language_mix_rows, mix_counts


def _files(order: int = 1) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    rows = [{"file_id": f"{lang}{i}", "repo": "held" if i % 10 == 0 else "r", "path": f"{lang}{i}", "lang": lang,
             "bytes": 100, "content_hash": hashlib.sha1(f"{lang}{i}".encode()).hexdigest(), "decision": "kept",
             "reason": None} for lang in ("python", "html", "go") for i in range(600)]
    rows.append({"file_id": "gone", "repo": "r", "path": "gone", "lang": "html", "bytes": 5, "content_hash": "h",
                 "decision": "dropped", "reason": "binary"})
    con.register("_rows", pa.Table.from_pylist(rows[::order]))
    con.execute("CREATE TABLE files AS SELECT *, NULL::INTEGER AS mix_repeats FROM _rows")
    return con


def test_weights_downsample_and_repeat_with_a_cap():
    cfg = MixConfig(weights={"python": 2.5, "html": 0.2, "go": 9.0}, max_repeat=4, seed=7)
    con = _files()
    dropped = apply_mix(con, cfg, holdout=["held"])
    got = dict(con.execute("SELECT lang, list(mix_repeats ORDER BY file_id) FROM files "
                           "WHERE repo = 'r' AND file_id <> 'gone' GROUP BY lang").fetchall())
    html_kept = sum(1 for n in got["html"] if n) / len(got["html"])
    assert 0.14 < html_kept < 0.26 and set(got["html"]) == {0, 1}
    assert set(got["python"]) == {2, 3} and 0.4 < got["python"].count(3) / len(got["python"]) < 0.6
    assert set(got["go"]) == {4}  # 9 copies asked, capped at max_repeat
    assert dropped == got["html"].count(0)
    # dropped with the reason; held-out repos and already dropped files untouched
    (reasons,) = con.execute("SELECT count(*) FROM files WHERE reason = 'mix_downsampled'").fetchone()
    assert reasons == dropped
    assert con.execute("SELECT count(*) FROM files WHERE repo = 'held' AND mix_repeats IS NOT NULL").fetchone() == (0,)
    assert con.execute("SELECT reason, mix_repeats FROM files WHERE file_id = 'gone'").fetchone() == ("binary", None)
    # the draw is the file's content hash and the seed, nothing else (row order, workers)
    other = _files(order=-1)
    apply_mix(other, cfg, holdout=["held"])
    q = "SELECT file_id, mix_repeats, decision FROM files ORDER BY file_id"
    assert con.execute(q).fetchall() == other.execute(q).fetchall()
    h = con.execute("SELECT content_hash, mix_repeats FROM files WHERE lang = 'html' AND repo = 'r' LIMIT 5").fetchall()
    assert all((draw(c, 7) < 0.2) == bool(n) for c, n in h)


def test_counts_before_and_after():
    cfg = MixConfig(weights={"python": 2.0, "html": 0.5})
    con = _files()
    apply_mix(con, cfg, holdout=[])
    counts = {r[0]: r for r in mix_counts(con, cfg)}
    lang, w, fb, fa, down, rep, bb, ba = counts["html"]
    assert (w, fb, bb) == (0.5, 600, 60000) and fa + down == fb and ba == fa * 100
    assert counts["python"][3:8] == (600, 0, 600, 60000, 120000)
    assert counts["go"][1] == 1.0 and counts["go"][6] == counts["go"][7]
    rows = language_mix_rows("r1", list(counts.values()), None, None)
    assert {r.lang for r in rows} == {"python", "html", "go"} and all(r.tokens_before is None for r in rows)
