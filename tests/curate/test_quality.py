"""Quality heuristics: the fast paths agree with the plain definitions."""

from __future__ import annotations

import pytest

from datagen.curate.quality import Thresholds, count_alnum, quality_reason, quality_scores


@pytest.mark.parametrize("text", [
    "def f(x_1):\n    return x_1 + 2\n", "héllo wörld ✓ 42 — ok", "", "___---===", "ｆｕｌｌｗｉｄｔｈ１２",
    "𝐀𝟏 😀 x\ud800",  # above the BMP, and a lone surrogate
])
def test_count_alnum_matches_isalnum(text):
    assert count_alnum(text) == sum(ch.isalnum() for ch in text)


def test_data_lines_counted_only_where_present():
    code = "x = 1\ny = 2\n"
    table = "DATA = [\n" + "1, 2, 3, 4, 5, 6, 7, 8, 9, 10,\n" * 6 + "]\n"
    blob = "KEY = '" + "QUJD" * 40 + "'\n"
    assert quality_scores(code)["data_line_fraction"] == 0
    assert quality_scores(table)["data_line_fraction"] == pytest.approx(6 / 8)
    assert quality_scores(blob)["data_line_fraction"] == 1.0
    t = Thresholds(max_data_line_fraction=0.5)
    assert quality_reason(quality_scores(table), t) == "data_lines"
    assert quality_reason(quality_scores(code), t) is None


def test_each_threshold_names_its_reason():
    long_line = "x = '" + "a" * 2000 + "'\n"
    assert quality_reason(quality_scores(long_line), Thresholds(max_line_length=1000)) == "max_line_length"
    assert quality_reason(quality_scores("+-*/ " * 50), Thresholds(min_alnum_fraction=0.25)) == "alnum_fraction"
    wide = ("y" * 150 + "\n") * 3
    assert quality_reason(quality_scores(wide), Thresholds(avg_line_length=100)) == "avg_line_length"


DATA_CASES = [
    "x = 1\n",
    "T = [\n" + "1, 2, 3, 4, 5, 6, 7, 8, 9,\n" * 3 + "]\n",
    "T = [1,\n 2,\n 3,\n 4,\n 5,\n 6,\n 7,\n 8,\n 9]\n",  # a list across lines: one match
    "\x1c  1, 2, 3, 4, 5, 6, 7, 8, 9\n",  # str.isspace() whitespace Rust's \s lacks
    "١, ٢, ٣, ٤, ٥, ٦, ٧, ٨, ٩\n",  # Arabic-Indic digits are \d in Python
    "0x1F, -2, +3.5e-3, 4, 5, 6, 7, 8,\n",
    "a\r1, 2, 3, 4, 5, 6, 7, 8, 9,\n",  # a line that only splitlines() cuts
    "KEY = '" + "QUJD" * 30 + "'\n",
    "KEY = '" + "a" * 119 + "'\n",  # one short of a blob
]


def test_batch_gate_gives_the_same_scores_as_one_file_at_a_time():
    from datagen.curate.quality import may_have_data_lines

    gate = may_have_data_lines(DATA_CASES)
    for text, maybe in zip(DATA_CASES, gate, strict=True):
        assert quality_scores(text, maybe) == quality_scores(text), text
    assert gate[0] is False and gate[-1] is False  # it does skip files without data lines


def test_count_alnum_over_every_code_point():
    """The lookup table, the characters above the BMP and lone surrogates."""
    every = "".join(map(chr, range(0x110000)))
    assert count_alnum(every) == sum(ch.isalnum() for ch in every)
