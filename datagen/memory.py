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


# glibc's mallopt parameter number, and the size from which its allocations get their own
# mapping (the default, before glibc starts moving it; see ``steady_heap``)
_M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 256 << 10


@functools.cache
def _libc():
    try:
        return ctypes.CDLL("libc.so.6")
    except OSError:
        return None


def _malloc_trim():
    return getattr(_libc(), "malloc_trim", None)  # glibc only


@functools.cache
def steady_heap() -> None:
    """Keep large C-heap allocations (texts of big files, token arrays, packing buffers)
    out of the heap: each gets its own mapping, returned whole when freed.

    glibc raises its mapping threshold to the size of each large block freed (up to
    32 MB), so after the first ones, blocks of a few MB land in the heap between small
    long-lived objects (the tokenizer's caches, Python objects) and the freed space can
    be neither reused whole nor trimmed: the process grew with the corpus it packed.
    A fixed threshold also turns that adjustment off. Called once per process."""
    mallopt = getattr(_libc(), "mallopt", None)  # glibc only
    if mallopt is not None:
        mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)


def release_memory() -> None:
    """Return freed Arrow-pool and C-heap memory to the system (where the allocator can)."""
    pa.default_memory_pool().release_unused()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)
