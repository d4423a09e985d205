"""The learned quality scorer as a file step of the corpus build (``quality_model.enabled``):
writes ``files.quality_score`` (0-5, the teacher's rubric) and drops files under their
language's cut (reason ``quality_model``).

The model file is loaded in each worker on its first batch, never pickled. A file whose
language has no model (and the model file has no pooled one) keeps a null score and is
kept: the scorer only decides where it was trained.
"""

from __future__ import annotations

from typing import ClassVar

from datatrove.data import Document

from datagen.config.quality import QualityModelConfig
from datagen.curate.base import FileStep, drop
from datagen.score.quality_model import QualityModel, load_model


class QualityModelStep(FileStep):
    name = "🎓 quality model"
    section: ClassVar[str] = "quality_model"
    writes: ClassVar[tuple[str, ...]] = ("quality_score",)
    batch_docs: ClassVar[int] = 256  # one matrix product per language per batch

    def __init__(self, cfg: QualityModelConfig):
        super().__init__()
        self.cfg = cfg
        self._model: QualityModel | None = None

    def model(self) -> QualityModel:
        if self._model is None:
            self._model = load_model(self.cfg.path)
        return self._model

    def threshold(self, lang: str | None) -> float:
        """The recipe's cut for ``lang``, else its general one, else the model's own."""
        if lang in self.cfg.lang_thresholds:
            return self.cfg.lang_thresholds[lang]
        return self.cfg.threshold if self.cfg.threshold is not None else self.model().threshold(lang)

    def process_batch(self, docs: list[Document]) -> None:
        scores = self.model().score([d.text for d in docs], [d.metadata.get("lang") for d in docs])
        for doc, score in zip(docs, scores, strict=True):
            self.decide(doc, score)

    def process(self, doc: Document) -> None:
        self.process_batch([doc])

    def decide(self, doc: Document, score: float | None) -> None:
        """Record the score; drop under the language's cut (an unscored file is kept)."""
        if score is None:
            return
        doc.metadata["quality_score"] = score
        cut = self.threshold(doc.metadata.get("lang"))
        if score < cut:
            drop(doc, "quality_model", f"{score:.2f} < {cut}")
