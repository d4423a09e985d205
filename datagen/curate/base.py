"""Per-file curation steps: the base class does the plumbing, a step only implements
``process(doc)`` for files that are still kept."""

from __future__ import annotations

from datatrove.data import Document
from datatrove.pipeline.base import PipelineStep


class FileStep(PipelineStep):
    """A datatrove step over crawled files; ``process`` sees only kept files."""

    type = "curate"

    def run(self, data, rank: int = 0, world_size: int = 1):
        for doc in data:
            if doc.metadata["decision"] == "kept":
                self.process(doc)
            yield doc

    def process(self, doc: Document) -> None:
        """Score, edit or drop one kept file (in place)."""
        raise NotImplementedError


def drop(doc: Document, reason: str, detail: str | None = None) -> None:
    """Mark a file dropped with ``reason`` (it stays in the manifest)."""
    doc.metadata["decision"] = "dropped"
    doc.metadata["reason"] = reason
