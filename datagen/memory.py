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
