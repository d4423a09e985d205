"""Scorers shared by builds: perplexity of texts under a scorer model (transformers, vLLM,
or an OpenAI-compatible endpoint) and difficulty (K policy attempts graded in the sandbox).

Scorers only score; the build that calls them decides (thresholds, bands) and records why.
Nothing heavy is imported here: torch, transformers and vllm load in a scorer's ``load()``.
"""

from datagen.score.perplexity import PerplexityScorer, get_scorer, perplexity, scorer_name

__all__ = ["PerplexityScorer", "get_scorer", "perplexity", "scorer_name"]
