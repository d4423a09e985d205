"""Quality heuristics: the fast paths agree with the plain definitions."""

from __future__ import annotations

import pytest

from datagen.curate.quality import Thresholds, count_alnum, quality_reason, quality_scores


@pytest.mark.parametrize("text", [
    "def f(x_1):\n    return x_1 + 2\n", "héllo wörld ✓ 42 — ok", "", "___---===", "ｆｕｌｌｗｉｄｔｈ１２",
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
