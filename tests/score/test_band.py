"""The pass-rate band and the Wilson interval, as tables; diff extraction and forbidden
operations, as tables."""

from __future__ import annotations

import pytest

from datagen.config.score import DifficultyConfig
from datagen.score.difficulty import band_decision, changed_lines, wilson_interval
from datagen.score.patches import extract_diff, file_changes, forbidden_operation, is_test_path


# 95% Wilson intervals to 4 places (81/263 is the worked example of Newcombe 1998, Stat Med).
@pytest.mark.parametrize(("passes", "k", "low", "high"), [
    (0, 10, 0.0, 0.2775),
    (1, 10, 0.0179, 0.4042),
    (5, 10, 0.2366, 0.7634),
    (10, 10, 0.7225, 1.0),
    (81, 263, 0.2553, 0.3662),
    (0, 8, 0.0, 0.3244),
    (8, 8, 0.6756, 1.0),
])
def test_wilson_interval_matches_published_values(passes, k, low, high):
    got = wilson_interval(passes, k, 0.95)
    assert got == (pytest.approx(low, abs=1e-4), pytest.approx(high, abs=1e-4))


def test_wilson_interval_edges():
    assert wilson_interval(0, 0) == (0.0, 1.0)
    narrow, wide = wilson_interval(4, 8, 0.8), wilson_interval(4, 8, 0.99)
    assert wide[0] < narrow[0] < 0.5 < narrow[1] < wide[1]


DEFAULT = DifficultyConfig()
BAND = DifficultyConfig(band_low=0.05, band_high=0.95)
BAND_WILSON = DifficultyConfig(band_low=0.05, band_high=0.95, wilson=True)


@pytest.mark.parametrize(("passes", "k", "cfg", "expected"), [
    (0, 8, DEFAULT, (False, "unsolved")),
    (1, 8, DEFAULT, (True, None)),
    (7, 8, DEFAULT, (True, None)),
    (8, 8, DEFAULT, (False, "too_easy")),
    (None, 0, DEFAULT, (True, None)),  # difficulty off: unknown, kept
    (0, 0, DEFAULT, (False, "no_attempts")),
    (1, 8, BAND, (True, None)),  # 0.125 > 0.05
    (1, 8, BAND_WILSON, (False, "too_hard")),  # but its interval starts at 0.022: luck?
    (4, 8, BAND_WILSON, (True, None)),
    (7, 8, BAND_WILSON, (False, "too_easy")),  # interval reaches 0.98
    (0, 8, BAND_WILSON, (False, "unsolved")),
    (8, 8, BAND_WILSON, (False, "too_easy")),
    (1, 40, BAND_WILSON, (False, "too_hard")),
    (20, 40, BAND_WILSON, (True, None)),
    (3, 4, DifficultyConfig(band_high=0.75), (False, "too_easy")),  # the band is open
    (1, 4, DifficultyConfig(band_low=0.25), (False, "too_hard")),
])
def test_band_decision(passes, k, cfg, expected):
    assert band_decision(passes, k, cfg) == expected


def test_band_must_be_open():
    with pytest.raises(ValueError, match="band_low must be below"):
        DifficultyConfig(band_low=0.5, band_high=0.5)


FIX = ("diff --git a/calc.py b/calc.py\n--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n"
       " def add(a, b):\n-    return a - b\n+    return a + b\n")


@pytest.mark.parametrize(("answer", "expected"), [
    (f"Sure.\n```diff\n{FIX}```\nDone.", FIX),
    (f"```patch\n{FIX}```", FIX),
    (f"```\n{FIX}```", FIX),
    (f"```python\nprint(1)\n```\nand\n```diff\n{FIX}```", FIX),  # the block that is a diff
    (f"The diff:\n{FIX}", FIX),  # raw, after prose
    (FIX.rstrip("\n"), FIX),  # a newline is added
    (f"```diff\n{FIX}", FIX),  # unterminated fence (a truncated answer)
    ("--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b", "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n"),
    ("I would change add() to use +.", ""),
    ("```python\ndef add(a, b):\n    return a + b\n```", ""),
    ("", ""),
])
def test_extract_diff(answer, expected):
    assert extract_diff(answer) == expected


DELETE = "diff --git a/tests/test_a.py b/tests/test_a.py\ndeleted file mode 100644\n--- a/tests/test_a.py\n" \
         "+++ /dev/null\n@@ -1 +0,0 @@\n-def test_a(): pass\n"
SKIP = "--- a/calc.py\n+++ b/calc.py\n@@ -1 +1,2 @@\n+import pytest; pytest.skip('no', allow_module_level=True)\n" \
       " x = 1\n"
NEW_CONFTEST = "diff --git a/conftest.py b/conftest.py\nnew file mode 100644\n--- /dev/null\n" \
               "+++ b/conftest.py\n@@ -0,0 +1 @@\n+collect_ignore = ['tests']\n"


@pytest.mark.parametrize(("diff", "extra", "expected"), [
    (FIX, (), None),
    (DELETE, (), ("forbidden_deletes_tests", "tests/test_a.py")),
    (SKIP, (), ("forbidden_skips_tests", "calc.py: import pytest; pytest.skip('no', allow_module_level=True)")),
    (NEW_CONFTEST, (), ("forbidden_edits_tests", "conftest.py")),
    (FIX, ("calc.py",), ("forbidden_edits_tests", "calc.py")),  # a task's own test file
    (FIX.replace("calc.py", "calc/calc_test.go"), (), ("forbidden_edits_tests", "calc/calc_test.go")),
    (FIX.replace("calc.py", "src/test/java/CalcT.java"), (), ("forbidden_edits_tests", "src/test/java/CalcT.java")),
    (FIX.replace("calc.py", "spec/calc_spec.rb"), (), ("forbidden_edits_tests", "spec/calc_spec.rb")),
    (FIX.replace("calc.py", "jest.config.js"), (), ("forbidden_edits_tests", "jest.config.js")),
    (FIX.replace("calc.py", "tests/api.rs"), (), ("forbidden_edits_tests", "tests/api.rs")),
    (FIX.replace("calc.py", "lib/calc.test.ts"), (), ("forbidden_edits_tests", "lib/calc.test.ts")),
    (FIX.replace("calc.py", "phpunit.xml.dist"), (), ("forbidden_edits_tests", "phpunit.xml.dist")),
    (FIX.replace("calc.py", "src/lib.rs").replace("+    return a + b", "+#[ignore]"), (),
     ("forbidden_skips_tests", "src/lib.rs: #[ignore]")),
])
def test_forbidden_operations(diff, extra, expected):
    assert forbidden_operation(diff, extra) == expected


def test_file_changes_reads_git_and_bare_diffs():
    changes = file_changes(FIX + DELETE + NEW_CONFTEST)
    assert [(c.path, c.op) for c in changes] == [
        ("calc.py", "modify"), ("tests/test_a.py", "delete"), ("conftest.py", "add")]
    bare = "--- a.py\n+++ a.py\n@@ -1 +1 @@\n-x\n+y\n--- b.py\n+++ b.py\n@@ -1 +1 @@\n-p\n+q\n"
    assert [(c.path, c.added) for c in file_changes(bare)] == [("a.py", ("y",)), ("b.py", ("q",))]
    assert changed_lines(FIX) == 2


@pytest.mark.parametrize(("path", "is_test"), [
    ("tests/test_x.py", True), ("src/pkg/tests/helpers.py", True), ("test_x.py", True),
    ("pkg/x_test.py", True), ("conftest.py", True), ("web/a.spec.ts", True),
    ("src/testing_utils.py", False), ("pkg/contest.py", False), ("calc.py", False),
])
def test_is_test_path(path, is_test):
    assert is_test_path(path) is is_test
