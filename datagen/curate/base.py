"""Per-file steps of the crawl stage.

Every file the crawl sees flows through the steps as a datatrove ``Document`` whose
``metadata`` holds the ``FileRow`` fields. A step only acts on files still ``kept``; the
others pass through untouched so that the writer records every file with its reason.
"""

from __future__ import annotations

from datatrove.data import Document, DocumentsPipeline
from datatrove.pipeline.base import PipelineStep


def drop(doc: Document, reason: str, detail: str | None = None) -> None:
    """Mark ``doc`` dropped. ``reason`` is a short stable key (it becomes a stats key)."""
    doc.metadata["decision"] = "dropped"
    doc.metadata["reason"] = reason if not detail else f"{reason}: {detail}"


def is_kept(doc: Document) -> bool:
    return doc.metadata.get("decision") == "kept"


class FileStep(PipelineStep):
    """Base of per-file steps: implement ``process(doc)``; the base does the plumbing.

    ``process`` may set score fields in ``doc.metadata`` (each must be a ``FileRow``
    field), edit ``doc.text`` (e.g. redaction), or call ``drop(doc, reason)``.
    """

    type = "🧹 - CURATE"

    def run(self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        for doc in data:
            if is_kept(doc):
                with self.track_time():
                    self.process(doc)
                if is_kept(doc):
                    self.stat_update("kept")
                else:
                    self.stat_update(f"dropped/{doc.metadata['reason'].split(':')[0]}")
            yield doc

    def process(self, doc: Document) -> None:  # pragma: no cover - abstract
        raise NotImplementedError
