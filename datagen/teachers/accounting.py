"""A durable journal of ``teacher_calls`` rows, so a killed run's spending is not lost.

A teacher with a journal appends each paid call's row to a JSONL file the moment the answer
arrives, before the answer is written to the request cache. A resumed run then finds the
answer cached (and records it at 0 tokens) while the paid row waits in the journal. The
build folds the journal into its manifest at start and at end; every row carries a unique
``call_id`` and folding skips ids the manifest already has, so a crash between the insert
and the journal's removal cannot count a row twice.

Each row is one ``write`` to a file opened for appending: a killed process leaves whole
lines (the kernel keeps what was written), and an unreadable trailing line is skipped.
What is lost is only a call whose answer was still on the wire when the process died.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

import pyarrow as pa

from datagen.records.teacher import TeacherCall


def journal_path(manifest: str | Path) -> Path:
    """The journal beside a manifest (a folder or a ``.duckdb`` file)."""
    manifest = Path(manifest)
    if manifest.suffix == ".duckdb":
        return manifest.with_name(manifest.stem + ".teacher_calls.jsonl")
    return manifest / "teacher_calls.jsonl"


class CallJournal:
    """Append ``TeacherCall`` rows to ``path``; ``fold`` moves them into a manifest."""

    def __init__(self, path: str | Path):
        self.path = Path(path)

    def append(self, rows: Iterable[TeacherCall]) -> None:
        data = "".join(row.model_dump_json() + "\n" for row in rows)
        if not data:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, data.encode())
        finally:
            os.close(fd)

    def read(self) -> list[TeacherCall]:
        """The whole rows in the journal, once each (a torn last line is skipped)."""
        try:
            lines = self.path.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return []
        rows: dict[str, TeacherCall] = {}  # by call_id: a repeated line is one row
        for line in lines:
            try:
                row = TeacherCall.model_validate_json(line)
            except ValueError:
                continue
            rows.setdefault(row.call_id, row)
        return list(rows.values())

    def fold(self, manifest) -> int:
        """Insert the journal's rows the manifest lacks (by ``call_id``), then remove the
        journal; returns how many rows were new. ``manifest`` is an open ``Manifest``."""
        rows = self.read()
        added = 0
        if rows:
            table = pa.Table.from_pylist([r.model_dump() for r in rows])
            cols = ", ".join(TeacherCall.columns())
            manifest.con.register("_journal", table)
            try:
                added = manifest.execute(
                    f"INSERT INTO teacher_calls ({cols}) SELECT {cols} FROM _journal "
                    "WHERE call_id NOT IN (SELECT call_id FROM teacher_calls)").fetchone()[0]
            finally:
                manifest.con.unregister("_journal")
        self.path.unlink(missing_ok=True)
        return added
