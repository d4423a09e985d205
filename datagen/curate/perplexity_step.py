"""Perplexity as a file step of the corpus build (``perplexity.enabled``): the same
scorer the rl-pool build uses, writing ``files.perplexity`` and dropping by the recipe's
absolute cut (reason ``perplexity``).

Files are scored in batches of ``batch_docs`` kept files (the scorer sorts each batch by
length); the scorer model is loaded in the worker on its first batch, never pickled.
This is the one place where the score room builds on curate's ``FileStep`` base.
"""

from __future__ import annotations

import math
from typing import ClassVar

from datatrove.data import Document, DocumentsPipeline

from datagen.config.score import CorpusPerplexityConfig
from datagen.curate.base import FileStep, drop, is_kept
from datagen.score.perplexity import PerplexityScorer, get_scorer


class PerplexityStep(FileStep):
    name = "🧮 perplexity"
    section: ClassVar[str] = "perplexity"
    writes: ClassVar[tuple[str, ...]] = ("perplexity",)

    def __init__(self, cfg: CorpusPerplexityConfig):
        super().__init__()
        self.cfg = cfg
        self._scorer: PerplexityScorer | None = None

    def scorer(self) -> PerplexityScorer:
        if self._scorer is None:
            self._scorer = get_scorer(self.cfg)
            self._scorer.load()
        return self._scorer

    def run(self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        """Pass every file through in order; score kept ones a batch at a time."""
        held: list[Document] = []
        for doc in data:
            held.append(doc)
            if sum(map(is_kept, held)) >= self.cfg.batch_docs:
                yield from self._flush(held)
                held = []
        yield from self._flush(held)

    def _flush(self, docs: list[Document]) -> list[Document]:
        kept = [d for d in docs if is_kept(d)]
        if kept:
            with self.track_time():
                values = self.scorer().score([d.text for d in kept])
            for doc, value in zip(kept, values):
                self.decide(doc, value)
                self.stat_update("kept" if is_kept(doc) else "dropped/perplexity")
        return docs

    def decide(self, doc: Document, value: float) -> None:
        """Record the score; drop outside [min, max] (an unscorable file is kept)."""
        if math.isnan(value):
            return
        doc.metadata["perplexity"] = round(float(value), 4)
        low = self.cfg.min if self.cfg.min is not None else -math.inf
        high = self.cfg.max if self.cfg.max is not None else math.inf
        if not low <= value <= high:
            drop(doc, "perplexity", f"{value:.2f} outside [{low}, {high}]")
