"""One graded policy attempt: what the scorer found, and what feedback needs to explain it.

Kept apart from ``difficulty`` so that ``feedback.hint_for`` (a pure function of an
attempt) and the grading code share it without importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from datagen.records.score import AttemptRow


@dataclass(frozen=True)
class AttemptResult:
    """A policy's attempt at one task, applied and tested in a fresh working copy.

    ``reason`` is None when it passed, else one of: ``policy_error``, ``empty_answer``,
    ``no_diff``, ``forbidden_edits_tests``, ``forbidden_deletes_tests``,
    ``forbidden_skips_tests``, ``patch_does_not_apply``, ``test_patch_does_not_apply``,
    ``timeout`` (or another limit name), ``no_report``, ``tests_failed``.
    """

    instance_id: str
    sample: int
    passed: bool
    reason: str | None
    patch: str = ""
    detail: str = ""  # the evidence: git's error, the forbidden file, the report problem
    required: tuple[str, ...] = ()  # FAIL_TO_PASS then PASS_TO_PASS
    results: dict[str, str] = field(default_factory=dict)  # test id -> pass/fail/error/skip
    report: str = ""  # the JUnit XML the test run wrote ('' if none)
    log: str = ""  # stdout then stderr of the test run (capped by the sandbox)
    workdir: str = ""  # the working copy's path, stripped from locations in hints
    duration_s: float = 0.0
    tokens: int = 0
    hint: str | None = None

    @property
    def failing(self) -> list[str]:
        """Required tests that did not pass (missing ones included), in task order."""
        return [t for t in self.required if self.results.get(t) != "pass"]

    def row(self, run_id: str, policy_id: str) -> AttemptRow:
        return AttemptRow(
            run_id=run_id, instance_id=self.instance_id, policy_id=policy_id, sample=self.sample,
            passed=self.passed, reason=self.reason, patch=self.patch, hint=self.hint,
            duration_s=round(self.duration_s, 3), tokens=self.tokens,
        )
