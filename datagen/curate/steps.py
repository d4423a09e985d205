"""The per-file steps of the crawl stage, in the order they run.

Cheapest drop first; redaction last (it edits the text the others read). To add a step:
write its class (a ``FileStep`` with ``section``, ``writes`` and ``process``), add its
recipe section, and add it to this list.
"""

from __future__ import annotations

from datagen.curate.base import FileStep
from datagen.curate.decontam import DecontamStep
from datagen.curate.quality import QualityStep
from datagen.curate.secrets import SecretsStep
from datagen.curate.syntax import SyntaxStep

FILE_STEPS: list[type[FileStep]] = [QualityStep, DecontamStep, SyntaxStep, SecretsStep]

__all__ = ["FILE_STEPS"]
