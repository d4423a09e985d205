"""The crawl step that reads each file's import specifiers for repo ordering.

The crawl already holds every file's text in a worker, so the import specifiers are read
there, in parallel, once: ``ImportsStep`` stores ``extract_imports`` of the final text
(after redaction) as JSON in the crawl output's ``imports`` column, and repo ordering
(``import_graph``) reads them instead of parsing the file again.
"""

from __future__ import annotations

from datatrove.data import Document

from datagen.curate.base import FileStep
from datagen.pack.extract import SUPPORTED, extract_imports


class ImportsStep(FileStep):
    """Writes ``imports`` (``Imports.to_json``) for kept files in a language with an import
    query; never drops a file. Runs last: it must see the text the shards will hold."""

    name = "import specifiers"
    section = "pack"  # the build adds it when ``pack.order`` is ``imports`` (not a FILE_STEPS entry)
    writes = ("imports",)  # a crawl column, not a FileRow field

    def process(self, doc: Document) -> None:
        lang = doc.metadata.get("lang")
        if lang in SUPPORTED:
            doc.metadata["imports"] = extract_imports(lang, doc.metadata.get("path", ""), doc.text).to_json()
