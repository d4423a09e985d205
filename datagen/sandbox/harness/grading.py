"""Grading: a pure function from per-test results before and after a fix to the task's
FAIL_TO_PASS and PASS_TO_PASS lists. Each side is run several times; a test whose
result differs between runs of one side is flaky and is left out of both lists.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from datagen.sandbox.harness.parsers import TestResults

MISSING = "missing"  # not reported at all (e.g. its module failed to import)


@dataclass(frozen=True)
class Grade:
    fail_to_pass: list[str]
    pass_to_pass: list[str]
    flaky: list[str]

    @property
    def proves_fix(self) -> bool:
        """SWE-bench validity: at least one test flips and at least one keeps passing."""
        return bool(self.fail_to_pass) and bool(self.pass_to_pass)


def flaky_tests(runs: Sequence[TestResults]) -> set[str]:
    """Tests whose status is not the same in every run (absence counts as a status)."""
    names = set().union(*runs) if runs else set()
    return {t for t in names if len({r.get(t, MISSING) for r in runs}) > 1}


def grade(before: Sequence[TestResults], after: Sequence[TestResults]) -> Grade:
    """FAIL_TO_PASS: passes after, failed/errored/missing before. PASS_TO_PASS: passes on
    both sides. Skipped tests are in neither; flaky tests are in neither."""
    if not before or not after:
        raise ValueError("grade needs at least one run per side")
    flaky = flaky_tests(before) | flaky_tests(after)
    b, a = before[0], after[0]
    f2p = sorted(t for t, s in a.items() if s == "pass" and b.get(t, MISSING) in
                 ("fail", "error", MISSING) and t not in flaky)
    p2p = sorted(t for t, s in a.items() if s == "pass" and b.get(t) == "pass" and t not in flaky)
    return Grade(fail_to_pass=f2p, pass_to_pass=p2p, flaky=sorted(flaky))
