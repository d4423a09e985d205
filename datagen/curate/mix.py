"""The language mix (``mix.weights``), applied to the build's ``files`` table after dedup.

A file of a language with weight ``w`` gets ``floor(w)`` copies plus one more when its
draw ``u < w - floor(w)``, capped at ``mix.max_repeat``; zero copies drops it
(``mix_downsampled``). ``u`` is a uniform number from the file's content hash and
``mix.seed`` (the first 52 bits of ``md5(content_hash || ':' || seed)``), so the choice is
the same on every run and machine, and independent of file order, paths and workers:
down-sampling keeps a content-hash subset, up-sampling repeats (OpenCoder-style language
rebalancing). ``files.mix_repeats`` holds the copies of every file the mix saw; held-out
repos (the validation split) are not mixed.
"""

from __future__ import annotations

import duckdb

from datagen.config.cpt import MixConfig
from datagen.records.pack import LanguageMixRow

_U = "(CAST(('0x' || left(md5(content_hash || ':' || {seed}), 13)) AS BIGINT) / 4503599627370496.0)"


def draw(content_hash: str, seed: int) -> float:
    """The file's uniform draw in [0, 1), as the SQL computes it (for tests and docs)."""
    import hashlib

    return int(hashlib.md5(f"{content_hash}:{seed}".encode()).hexdigest()[:13], 16) / float(1 << 52)


def apply_mix(con: duckdb.DuckDBPyConnection, cfg: MixConfig, holdout: list[str]) -> int:
    """Set ``mix_repeats`` on kept files outside ``holdout`` repos and drop those with none;
    returns the files dropped. Table ``mix_before(lang, files, bytes)`` keeps the counts
    before the mix, for ``language_mix``."""
    con.execute("CREATE OR REPLACE TEMP TABLE _mix_w (lang VARCHAR, w DOUBLE)")
    if cfg.weights:
        con.executemany("INSERT INTO _mix_w VALUES (?, ?)", sorted(cfg.weights.items()))
    scope = "decision = 'kept' AND repo NOT IN (SELECT unnest(?::VARCHAR[]))"
    con.execute(
        "CREATE OR REPLACE TABLE mix_before AS SELECT coalesce(lang, '') AS lang, count(*)::BIGINT AS files, "
        f"sum(bytes)::BIGINT AS bytes FROM files WHERE {scope} GROUP BY 1 ORDER BY 1", [holdout])
    u = _U.format(seed=int(cfg.seed))
    con.execute(
        f"""
        CREATE OR REPLACE TEMP TABLE _mix AS
        SELECT file_id, least({cfg.max_repeat}, floor(w)::BIGINT
                    + CASE WHEN {u} < w - floor(w) THEN 1 ELSE 0 END)::INTEGER AS repeats
        FROM (SELECT f.file_id, f.content_hash, coalesce(m.w, {float(cfg.default_weight)}) AS w
              FROM files f LEFT JOIN _mix_w m ON m.lang = f.lang WHERE {scope.replace('decision', 'f.decision')
                                                                       .replace('repo NOT', 'f.repo NOT')})
        """, [holdout])
    con.execute("UPDATE files SET mix_repeats = x.repeats FROM _mix x WHERE files.file_id = x.file_id")
    con.execute("UPDATE files SET decision = 'dropped', reason = 'mix_downsampled' "
                "WHERE mix_repeats = 0 AND decision = 'kept'")
    (n,) = con.execute("SELECT count(*) FROM _mix WHERE repeats = 0").fetchone()
    con.execute("DROP TABLE _mix")
    con.execute("DROP TABLE _mix_w")
    return n


def mix_counts(con: duckdb.DuckDBPyConnection, cfg: MixConfig) -> list[tuple]:
    """(lang, weight, files_before, files_after, downsampled, repeated, bytes_before,
    bytes_after) per language the mix saw, by language."""
    rows = con.execute(
        """
        SELECT b.lang, b.files, b.bytes,
               count(*) FILTER (f.decision = 'kept')::BIGINT,
               count(*) FILTER (f.reason = 'mix_downsampled')::BIGINT,
               count(*) FILTER (f.mix_repeats > 1)::BIGINT,
               coalesce(sum(f.bytes * f.mix_repeats) FILTER (f.decision = 'kept'), 0)::BIGINT
        FROM mix_before b LEFT JOIN files f ON coalesce(f.lang, '') = b.lang AND f.mix_repeats IS NOT NULL
        GROUP BY b.lang, b.files, b.bytes ORDER BY b.lang
        """).fetchall()
    return [(lang, cfg.weights.get(lang, cfg.default_weight), fb, fa, down, rep, bb, ba)
            for lang, fb, bb, fa, down, rep, ba in rows]


def language_mix_rows(run_id: str, counts: list[tuple], token_counts: list | None,
                      before_tokens: dict[str, int] | None, split: str = "train") -> list[LanguageMixRow]:
    """``language_mix`` rows from ``mix_counts`` and, with packing, the train split's
    tokens (``token_counts``: after, copies included) and ``before_tokens`` per language."""
    after: dict[str, int] | None = None
    if token_counts is not None and before_tokens is not None:
        after = {}
        for t in token_counts:
            if t.split == split and t.lang:
                after[t.lang] = after.get(t.lang, 0) + t.tokens
    return [LanguageMixRow(run_id=run_id, lang=lang, weight=w, files_before=fb, files_after=fa, downsampled=down,
                           repeated=rep, bytes_before=bb, bytes_after=ba,
                           tokens_before=None if after is None else before_tokens.get(lang, 0),
                           tokens_after=None if after is None else after.get(lang, 0))
            for lang, w, fb, fa, down, rep, bb, ba in counts]
