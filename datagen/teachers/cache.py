"""Content-addressed request cache: one JSON file per request key.

Why files and not SQLite: teacher runs on a cluster share the cache folder across nodes
on NFS or Lustre, where SQLite's locking (WAL needs shared memory on one host) is not
reliable. One file per key needs no lock at all: a writer writes a private temporary file
in the same folder and ``os.replace``-s it onto ``<key>.json``, which is atomic on POSIX,
so readers see either nothing or a whole entry, and two writers of one key (the same
answer, or an equally valid one) simply leave the last. Keys are spread over 256
sub-folders so no folder grows huge. An unreadable entry (a crash mid-write on a
filesystem that lost the rename) counts as a miss and is overwritten.

Every answer the model gave is cached: ``ok``, ``truncated`` and ``invalid`` (the answer
still broke the schema after the bounded re-asks; asking again with the same request and
seed would pay for the same answer, and a rebuild must not differ from the first build).
Transport errors (``error``: timeouts, HTTP 5xx after the retries) are not, so a re-run
asks again.
"""

from __future__ import annotations

import json
from pathlib import Path

from datagen.runtime.atomic import atomic_write
from datagen.teachers.types import TeacherResult

CACHEABLE = ("ok", "truncated", "invalid")
_FIELDS = (
    "key", "status", "error", "texts", "finish_reasons", "parsed", "token_logprobs", "tokens",
    "usage", "latency_s", "attempts", "request_id", "created",
)


class RequestCache:
    """Get and put ``TeacherResult``s by request key under ``root``."""

    def __init__(self, root: str | Path):
        self.root = Path(root)

    def path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> TeacherResult | None:
        try:
            data = json.loads(self.path(key).read_bytes())
            result = TeacherResult.model_validate(data)
        except (OSError, ValueError):
            return None
        if result.key != key or result.status not in CACHEABLE:
            return None
        return result.model_copy(update={"cached": True})

    def put(self, result: TeacherResult) -> bool:
        """Store a result if it is an answer; returns whether it was stored."""
        if result.status not in CACHEABLE:
            return False
        target = self.path(result.key)
        target.parent.mkdir(parents=True, exist_ok=True)
        data = result.model_dump(mode="json", include=set(_FIELDS))
        atomic_write(target, json.dumps(data, ensure_ascii=False, sort_keys=True))
        return True

    def count(self) -> int:
        """Entries on disk (walks the folder: for tests and reports, not hot paths)."""
        return sum(1 for _ in self.root.glob("??/*.json")) if self.root.exists() else 0
