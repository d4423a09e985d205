"""Grading is a pure function of per-test results before and after the fix."""

import pytest

from datagen.sandbox.harness.grading import flaky_tests, grade


def test_fail_to_pass_and_pass_to_pass():
    before = {"t::a": "fail", "t::b": "pass", "t::c": "error", "t::d": "skip", "t::e": "pass"}
    after = {"t::a": "pass", "t::b": "pass", "t::c": "pass", "t::d": "pass", "t::e": "fail",
             "t::new": "pass"}
    g = grade([before] * 3, [after] * 3)
    assert g.fail_to_pass == ["t::a", "t::c", "t::new"]  # missing before counts as failing
    assert g.pass_to_pass == ["t::b"]
    assert g.flaky == []
    assert g.proves_fix


def test_tests_that_change_between_reruns_are_flaky_and_excluded():
    before = [{"a": "fail", "b": "pass", "c": "pass"}, {"a": "fail", "b": "fail", "c": "pass"},
              {"a": "fail", "b": "pass", "c": "pass"}]
    after = [{"a": "pass", "b": "pass", "c": "pass"}, {"a": "pass", "b": "pass"},
             {"a": "pass", "b": "pass", "c": "pass"}]
    g = grade(before, after)
    assert g.flaky == ["b", "c"]  # b flips before; c vanishes in one run after
    assert g.fail_to_pass == ["a"]
    assert g.pass_to_pass == []
    assert not g.proves_fix


def test_flaky_tests_counts_absence_as_a_status():
    assert flaky_tests([{"x": "pass"}, {}]) == {"x"}
    assert flaky_tests([{"x": "skip"}, {"x": "skip"}]) == set()


def test_grade_needs_runs_on_both_sides():
    with pytest.raises(ValueError):
        grade([], [{"a": "pass"}])
