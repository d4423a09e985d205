"""The crawl stage's reader: a datatrove step that reads this rank's slice of the listing.

Each listed file becomes one ``Document`` (id = file_id, metadata = ``FileRow`` fields).
Skipped files flow on with ``decision='dropped'`` and empty text so that the writer
records them; readable files get their content checks here (binary, UTF-8, language,
generated/minified markers), everything else is a later ``FileStep``'s job.
"""

from __future__ import annotations

import os
import subprocess

import pyarrow.parquet as pq
import xxhash
from datatrove.data import Document, DocumentsPipeline
from datatrove.pipeline.base import PipelineStep

from datagen.config.cpt import CrawlConfig
from datagen.crawl.language import detect_language
from datagen.crawl.paths import os_path
from datagen.crawl.rules import CrawlRules
from datagen.crawl.sources import file_id
from datagen.records import DropReason


def normalize(text: str) -> str:
    """Normalization for exact dedup: line endings, trailing spaces, outer blank lines."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return "\n".join(line.rstrip() for line in lines).strip("\n")


def content_hash(text: str) -> str:
    return xxhash.xxh3_128_hexdigest(normalize(text).encode("utf-8", "surrogatepass"))


class GitBlobStream:
    """One long-lived ``git cat-file --batch`` per repo, read blob by blob."""

    def __init__(self, root: str):
        self.proc = subprocess.Popen(
            ["git", "-C", root, "cat-file", "--batch"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        )

    def read(self, oid: str) -> bytes | None:
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(oid.encode() + b"\n")
        self.proc.stdin.flush()
        header = self.proc.stdout.readline().split()
        if len(header) < 3 or header[1] == b"missing":
            return None
        data = self.proc.stdout.read(int(header[2]))
        self.proc.stdout.read(1)
        return data

    def close(self) -> None:
        for pipe in (self.proc.stdin, self.proc.stdout):
            try:
                if pipe:
                    pipe.close()
            except OSError:  # git already gone: nothing left to flush
                pass
        self.proc.wait()


def inspect_content(
    data: bytes, path: str, lang: str | None, rules: CrawlRules
) -> tuple[DropReason | None, str, str | None]:
    """Content checks of one file: (reason or None, decoded text, language)."""
    if not data:
        return "empty", "", lang
    if b"\0" in data:
        return "binary", "", lang
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return "invalid_utf8", "", lang
    if lang is None:
        lang = detect_language(path, data[:256])
        if lang is None:
            return "unknown_lang", "", None
    if rules.has_generated_marker(data):
        return "generated", text, lang
    return None, text, lang


class RepoFileReader(PipelineStep):
    """Reads rank ``r``'s slice of the listing parquet; yields one Document per file."""

    name = "repo files"
    type = "📖 - READER"

    def __init__(self, listing: str, files_per_task: int, crawl: CrawlConfig):
        super().__init__()
        self.listing = listing
        self.files_per_task = files_per_task
        self.crawl = crawl

    def run(self, data: DocumentsPipeline = None, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        rules = CrawlRules.from_config(self.crawl)
        listing = pq.ParquetFile(self.listing)
        if listing.metadata.num_row_groups and listing.metadata.row_group(0).num_rows == self.files_per_task:
            rows = listing.read_row_group(rank).to_pylist() if rank < listing.num_row_groups else []
        else:  # a listing written with other row groups: slice the whole table
            rows = listing.read().slice(rank * self.files_per_task, self.files_per_task).to_pylist()
        streams: dict[str, GitBlobStream] = {}
        try:
            for row in rows:
                with self.track_time():
                    doc = self._read_one(row, rules, streams)
                self.stat_update("files", doc.metadata["decision"])
                yield doc
        finally:
            for s in streams.values():
                s.close()

    def _read_one(self, row: dict, rules: CrawlRules, streams: dict[str, GitBlobStream]) -> Document:
        name = os_path(row["path"], row.get("path_raw"))
        meta = {
            "file_id": file_id(row["repo"], name),
            "repo": row["repo"],
            "path": row["path"],
            "path_raw": row.get("path_raw"),
            "lang": row["lang"],
            "license": row["license"],
            "bytes": row["size"],
            "content_hash": None,
            "decision": "dropped",
            "reason": row["skip"],
            "duplicate_of": None,
            "source": row["source"],
        }
        text = ""
        if row["skip"] is None:
            try:
                if row["kind"] == "dir":
                    with open(os.path.join(row["root"], name), "rb") as fh:
                        data = fh.read(rules.max_file_bytes + 1)
                else:
                    stream = streams.get(row["root"])
                    if stream is None:
                        stream = streams[row["root"]] = GitBlobStream(row["root"])
                    data = stream.read(row["git_oid"])
                    if data is None:
                        raise OSError("blob missing from the object store")
            except OSError as exc:
                dead = streams.pop(row["root"], None)  # a broken git process: reopen for the next file
                if dead is not None:
                    dead.close()
                meta["reason"] = f"unreadable: {exc.strerror or exc}"
                return Document(text="", id=meta["file_id"], metadata=meta)
            if len(data) > rules.max_file_bytes:  # grew since the listing
                meta["reason"] = "too_large"
                return Document(text="", id=meta["file_id"], metadata=meta)
            meta["bytes"] = len(data)
            reason, text, meta["lang"] = inspect_content(data, row["path"], row["lang"], rules)
            if text:
                meta["content_hash"] = content_hash(text)
            if reason is None and _looks_minified(text, meta["lang"], rules):
                reason = "minified"
            meta["decision"] = "kept" if reason is None else "dropped"
            meta["reason"] = reason
        return Document(text=text, id=meta["file_id"], metadata=meta)


def _looks_minified(text: str, lang: str | None, rules: CrawlRules) -> bool:
    if lang not in ("javascript", "typescript", "css") or not text:
        return False
    lines = text.count("\n") + 1
    return len(text) / lines > rules.minified_avg_line_length
