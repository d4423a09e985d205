"""MinHash signatures of code, batched: polars tokenizes and hashes words (Rust, no
per-shingle Python), numpy combines word hashes into n-gram shingle hashes, and rensa
computes the MinHash matrix from the flat shingle buffer.

Shingles are ``ngram`` consecutive whitespace-separated tokens, case and punctuation kept
(code is case sensitive). A file with fewer than ``ngram`` tokens has no shingles and no
signature; callers leave it out of LSH.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pyarrow as pa
import rensa

Texts = list[str] | pa.Array | pa.ChunkedArray

# Odd 64-bit constants (splitmix64 / golden ratio) used to mix hashes.
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_GOLD = np.uint64(0x9E3779B97F4A7C15)


def _mix(x: np.ndarray, tmp: np.ndarray | None = None) -> np.ndarray:
    """splitmix64 finalizer, vectorized (uint64 arithmetic wraps), in place: ``x`` is
    overwritten and returned. ``tmp`` is a scratch array of ``x``'s shape (made when not
    given), so no new array is made per operation (a batch's shingle hashes are millions
    of values)."""
    tmp = np.empty_like(x) if tmp is None else tmp
    for shift, mult in ((30, _M1), (27, _M2), (31, None)):
        np.right_shift(x, np.uint64(shift), out=tmp)
        x ^= tmp
        if mult is not None:
            x *= mult
    return x


def shingle_hashes(texts: Texts, ngram: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Hash every ``ngram``-token shingle of every text.

    Returns ``(hashes, offsets)``: the shingles of text ``i`` are
    ``hashes[offsets[i]:offsets[i + 1]]`` (uint64 both).
    """
    n_docs = len(texts)
    words = (
        pl.DataFrame(
            {"text": texts if isinstance(texts, list) else pl.from_arrow(texts)},
            schema={"text": pl.String},
        )
        .lazy()  # one query: polars drops each intermediate column as soon as it can
        .with_row_index("doc")
        .select("doc", pl.col("text").str.extract_all(r"\S+").alias("w"))
        .explode("w")
        .drop_nulls("w")
        .select("doc", pl.col("w").hash(seed=seed).alias("h"))
        .collect()
    )
    wh = words["h"].to_numpy()
    doc = words["doc"].to_numpy()
    del words
    count = len(wh) - ngram + 1
    if count <= 0:
        return np.zeros(0, np.uint64), np.zeros(n_docs + 1, np.uint64)
    with np.errstate(over="ignore"):
        # Position-weighted sum of word hashes (distinct odd weights), then one mix.
        sh = wh[:count].copy()
        tmp = np.empty_like(sh)
        for k in range(1, ngram):
            np.multiply(wh[k : k + count], np.uint64(2 * k + 1) * _GOLD, out=tmp)
            sh += tmp
        del wh
        _mix(sh, tmp)
        del tmp
    # A shingle is valid when its first and last token belong to the same text.
    valid = doc[:count] == doc[ngram - 1 : ngram - 1 + count]
    sh = sh[valid]
    counts = np.bincount(doc[:count][valid], minlength=n_docs)
    offsets = np.zeros(n_docs + 1, np.uint64)
    np.cumsum(counts, out=offsets[1:])
    return sh, offsets


def signatures(texts: Texts, ngram: int, num_perm: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """MinHash signatures ``(N, num_perm) uint32`` and a mask of texts that had shingles."""
    sh, offsets = shingle_hashes(texts, ngram, seed)
    has = np.diff(offsets) > 0
    if len(texts) == 0:
        return np.zeros((0, num_perm), np.uint32), has
    matrix = rensa.RMinHash.digest_matrix_from_flat_token_hashes(sh, offsets, num_perm, seed)
    sigs = np.asarray(matrix.to_rows(), dtype=np.uint32).reshape(len(texts), num_perm)
    return sigs, has


def band_hashes(sigs: np.ndarray, bands: int, rows: int) -> np.ndarray:
    """One 64-bit hash per (text, band) of the band's ``rows`` signature values."""
    n = sigs.shape[0]
    out = np.empty((n, bands), np.uint64)
    s = sigs.astype(np.uint64)
    tmp = np.empty(n, np.uint64)
    with np.errstate(over="ignore"):
        for b in range(bands):
            h = np.full(n, np.uint64(b + 1) * _GOLD, np.uint64)
            for r in range(rows):
                h ^= s[:, b * rows + r]
                _mix(h, tmp)
            out[:, b] = h
    return out


def estimated_jaccard(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise share of equal signature values (the MinHash Jaccard estimate)."""
    return (a == b).mean(axis=1)
