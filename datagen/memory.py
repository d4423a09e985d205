"""Give memory that a stage has freed back to the system.

Freed memory stays with the allocator that held it: Arrow's pool (mimalloc) keeps freed
pages for reuse and glibc keeps its arenas, so after a stage the process still counts
most of its peak, and the next stage's peak comes on top of it. ``release_memory``
returns both to the system; the builds call it where a stage or a batch of it ends, so a
process holds what its current work needs rather than what its largest work needed.
"""

from __future__ import annotations

import ctypes
import functools

import pyarrow as pa


@functools.cache
def _malloc_trim():
    try:
        return ctypes.CDLL("libc.so.6").malloc_trim  # glibc only
    except (OSError, AttributeError):
        return None


def release_memory() -> None:
    """Return freed Arrow-pool and C-heap memory to the system (where the allocator can)."""
    pa.default_memory_pool().release_unused()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)
