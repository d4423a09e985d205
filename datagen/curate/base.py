"""Per-file steps of the crawl stage.

Every file the crawl sees flows through the steps as a datatrove ``Document`` whose
``metadata`` holds the ``FileRow`` fields. A step only acts on files still ``kept``; the
others pass through untouched so that the writer records every file with its reason.

A step declares the recipe section that configures it (``section``: ``cfg.<section>``,
with an ``enabled`` switch) and the ``FileRow`` fields it writes (``writes``); the build
wires every step of ``datagen.curate.file_steps.FILE_STEPS`` the same way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from datatrove.data import Document, DocumentsPipeline
from datatrove.pipeline.base import PipelineStep

from datagen.records import DropReason


def drop(doc: Document, reason: DropReason, detail: str | None = None) -> None:
    """Mark ``doc`` dropped. ``reason`` is a short stable key (it becomes a stats key)."""
    doc.metadata["decision"] = "dropped"
    doc.metadata["reason"] = reason if not detail else f"{reason}: {detail}"


def is_kept(doc: Document) -> bool:
    return doc.metadata.get("decision") == "kept"


@dataclass(frozen=True)
class StepContext:
    """What the build knows that a step may need besides its recipe section."""

    remotes: dict[str, str] = field(default_factory=dict)  # repo name -> git remote URL


class FileStep(PipelineStep):
    """Base of per-file steps: implement ``process(doc)``; the base does the plumbing.

    ``process`` may set the fields named in ``writes`` (each a ``FileRow`` field; the crawl
    writer refuses any other), edit ``doc.text`` (e.g. redaction), or call
    ``drop(doc, reason)``.
    """

    type = "🧹 - CURATE"
    section: ClassVar[str]  # the recipe section that configures this step
    writes: ClassVar[tuple[str, ...]] = ()
    # Kept files handed to ``process_batch`` at once: a step whose cheap check runs over a
    # whole batch (a Rust regex in polars) sets it higher.
    batch_docs: ClassVar[int] = 1

    @classmethod
    def from_recipe(cls, config: Any, context: StepContext) -> FileStep:
        """The step for its recipe section (override to use ``context``)."""
        return cls(config)

    def run(self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        batch: list[Document] = []
        for doc in data:
            batch.append(doc)
            if len(batch) >= self.batch_docs:
                yield from self._run_batch(batch)
                batch = []
        yield from self._run_batch(batch)

    def _run_batch(self, docs: list[Document]) -> DocumentsPipeline:
        kept = [doc for doc in docs if is_kept(doc)]
        if kept:
            with self.track_time(None if self.batch_docs == 1 else "batch"):
                self.process_batch(kept)
        for doc in kept:
            if is_kept(doc):
                self.stat_update("kept")
            else:
                self.stat_update(f"dropped/{doc.metadata['reason'].split(':')[0]}")
        yield from docs

    def process_batch(self, docs: list[Document]) -> None:
        """``process`` each of ``docs`` (kept files, in order); override to share work."""
        for doc in docs:
            self.process(doc)

    def process(self, doc: Document) -> None:  # pragma: no cover - abstract
        raise NotImplementedError
