"""Scorers shared by builds: perplexity of texts under a scorer model (transformers, vLLM,
or an OpenAI-compatible endpoint) and difficulty (K policy attempts graded in the sandbox),
with directed feedback for failed attempts; grading one patch on one task (``grading``: the
core of ``datagen serve grader``).

Scorers only score; the build that calls them decides (thresholds, ``band_decision``) and
records why. torch, transformers and vllm are imported in a scorer's ``load()`` only.

    scorer = get_scorer(recipe.perplexity)
    values = scorer.score([t.problem_statement for t in tasks])      # ScoreRow(scorer=scorer.name)
    report = DifficultyScorer(recipe.difficulty, make_teacher(recipe.policy), sandbox,
                              limits=..., env=...).score(tasks_with_bases, run_id)
    kept, reason = band_decision(row.passes, row.k, recipe.difficulty)
    result = TaskGrader({task.instance_id: (task, base)}, sandbox).grade(task.instance_id, diff)
"""

import importlib
from typing import TYPE_CHECKING, Any

from datagen.score.attempt import AttemptResult
from datagen.score.perplexity import PerplexityScorer, get_scorer, perplexity, scorer_name

# Imported on first use, so that importing the corpus build's perplexity step does not
# import the sandbox and teachers that difficulty scoring needs.
_LAZY = {
    "DifficultyReport": "difficulty",
    "DifficultyScorer": "difficulty",
    "band_decision": "difficulty",
    "best_attempts": "difficulty",
    "GradeResult": "grading",
    "TaskGrader": "grading",
    "wilson_interval": "difficulty",
    "hint_for": "feedback",
}

if TYPE_CHECKING:
    from datagen.score.difficulty import (
        DifficultyReport,
        DifficultyScorer,
        band_decision,
        best_attempts,
        wilson_interval,
    )
    from datagen.score.feedback import hint_for
    from datagen.score.grading import GradeResult, TaskGrader


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"datagen.score.{_LAZY[name]}"), name)


__all__ = [
    "AttemptResult", "DifficultyReport", "DifficultyScorer", "GradeResult", "PerplexityScorer", "TaskGrader",
    "band_decision", "best_attempts", "get_scorer", "hint_for", "perplexity", "scorer_name", "wilson_interval",
]
