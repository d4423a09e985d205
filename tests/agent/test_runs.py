"""Agent runs through the real mini-swe-agent package, in every language with a sample repo:
a scripted stand-in policy behind a real OpenAI-compatible server on 127.0.0.1 explores the
task's sandboxed working copy with shell commands and then writes the gold fix (pass), gives
up (fail), edits the tests (refused), or loops (step limit); a server that drops a request gets
that run masked and run again. Each run's diff is graded by the grader's code."""

from __future__ import annotations

import pytest

from tests.agent import standin
from tests.agent.helpers import scorer
from tests.agent.standin import ScriptedPolicy

pytestmark = pytest.mark.slow
SCRIPTS = [standin.solve, standin.give_up, standin.edit_tests, standin.loop]


# half the languages here, half in test_runs_more.py: CI spreads the suite one file per worker
HERE = ("c", "cpp", "go", "python", "rust")


@pytest.mark.parametrize("language", HERE)
def test_scripted_runs_in_every_language(language, lang_tasks, tmp_path):
    check_scripted_runs(language, lang_tasks, tmp_path)


def check_scripted_runs(language, lang_tasks, tmp_path) -> None:
    """K=4 runs (solve, give up, edit the tests, loop), the server dropping one request."""
    task, base, folder = lang_tasks(language)
    with ScriptedPolicy([task], SCRIPTS, drops=1) as server:
        report = scorer(server, folder, tmp_path, k=len(SCRIPTS), step_limit=8).score([(task, base)], "r1")
    runs = {}
    for run in report.runs:
        runs.setdefault(run.sample, []).append(run)
    masked = [r for r in report.runs if r.masked]
    # the dropped request: one run masked as a model error, and its sample run again
    assert [(r.exit_status, r.reason) for r in masked] == [("model_error", "model_error")], report.runs
    assert all(not rs[-1].masked for rs in runs.values()) and len(runs[masked[0].sample]) == 2
    final = {s: rs[-1] for s, rs in runs.items()}
    solved, gave_up, edited, looped = (final[i] for i in range(4))
    assert solved.exit_status == "submitted" and solved.passed, (solved.reason, solved.detail, solved.diff)
    assert solved.steps == 6 and solved.diff.strip() and solved.tokens_in > 0 and solved.tokens_out > 0
    assert gave_up.exit_status == "submitted" and not gave_up.passed and gave_up.reason == "empty_answer"
    assert edited.exit_status == "submitted" and not edited.passed
    assert edited.reason.startswith("forbidden_"), edited.reason
    assert looped.exit_status == "step_limit" and looped.steps == 8 and not looped.passed
    (row,) = report.tasks
    assert row.k == 4 and row.passes == 1 and row.pass_vector == [True, False, False, False]
    (totals,) = report.totals
    assert (totals.runs, totals.masked, totals.measured, totals.passes) == (5, 1, 4, 1)
    assert totals.pass_at_1 == 0.25 and totals.pass_at_k == 1.0 and totals.seconds > 0


def test_solving_gives_pass_at_k_one_and_giving_up_zero(lang_tasks, tmp_path):
    task, base, folder = lang_tasks("python")
    outcome = {}
    for name, script in (("solve", standin.solve), ("give_up", standin.give_up)):
        with ScriptedPolicy([task], script) as server:
            report = scorer(server, folder, tmp_path / name, k=2).score([(task, base)], "r1")
        outcome[name] = (report.totals[0].pass_at_1, report.totals[0].pass_at_k, report.tasks[0].pass_rate)
    assert outcome == {"solve": (1.0, 1.0, 1.0), "give_up": (0.0, 0.0, 0.0)}
