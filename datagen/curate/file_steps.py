"""The per-file steps of the crawl stage, in the order they run.

Cheapest drop first (the learned quality model, a hashed-n-gram linear model, before the
tree-sitter parse); redaction after the checks (it edits the text they read), the
model-based perplexity score last (the most expensive, on redacted text); the import
specifiers for repo ordering (``imports_step``) run after these when ``pack.order`` asks.
Every step lives beside this list in ``curate/``; the two model-backed ones take their
scorer from ``score/``. To add a step: write its class (a ``FileStep`` with ``section``,
``writes`` and ``process``), add its recipe section, and add it to this list.
"""

from __future__ import annotations

from datagen.curate.base import FileStep
from datagen.curate.decontam import DecontamStep
from datagen.curate.perplexity_step import PerplexityStep
from datagen.curate.quality import QualityStep
from datagen.curate.quality_model_step import QualityModelStep
from datagen.curate.secrets import SecretsStep
from datagen.curate.syntax import SyntaxStep

FILE_STEPS: list[type[FileStep]] = [
    QualityStep, DecontamStep, QualityModelStep, SyntaxStep, SecretsStep, PerplexityStep,
]

__all__ = ["FILE_STEPS"]
