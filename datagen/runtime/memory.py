"""Give memory that a stage has freed back to the system.

Freed memory stays with the allocator that held it: Arrow's pool (mimalloc) keeps freed
pages for reuse, glibc keeps its arenas and polars' jemalloc keeps freed pages for 10 s,
so after a stage the process still counts most of its peak, and the next stage's peak
comes on top of it. ``release_memory`` returns Arrow's and glibc's to the system; the
builds call it where a stage or a batch of it ends, so a process holds what its current
work needs rather than what its largest work needed. Polars' jemalloc cannot be asked
from Python: ``release_polars_memory_in_workers`` makes it return freed pages at once in
the worker processes started after it.
"""

from __future__ import annotations

import ctypes
import functools
import os

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


# Read by the jemalloc inside polars when a process first allocates (the variable name is
# that of the Rust ``tikv-jemallocator`` build polars ships).
_POLARS_JEMALLOC_ENV = "_RJEM_MALLOC_CONF"


def release_polars_memory_in_workers() -> None:
    """Worker processes started from now on give polars' freed memory back at once.

    By default polars' jemalloc keeps freed pages for 10 s: a near-dedup signature worker,
    which runs batch after batch through polars, held some 50 MB more than its batch
    needs. This process (polars loaded already) is unaffected. A setting the user made
    is left alone."""
    os.environ.setdefault(_POLARS_JEMALLOC_ENV, "dirty_decay_ms:0,muzzy_decay_ms:0")
