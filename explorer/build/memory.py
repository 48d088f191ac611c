"""Give freed heap memory back to the operating system between the build's heavy steps.

glibc keeps memory that torch, UMAP and BERTopic free in its arenas, so a build's resident
size only ever grows: each stage's peak lands on top of the previous stage's leftovers.
`malloc_trim` returns those free pages. Measured on ICML 2013-2019 (bfloat16), RSS after
the embed stage fell from 1,174 to 740 MB. It is a no-op where glibc is not the allocator.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from functools import lru_cache


@lru_cache(maxsize=1)
def _libc():
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
    except OSError:
        return None
    return libc if libc is not None and hasattr(libc, "malloc_trim") else None


def release_freed_memory() -> None:
    """Return free heap pages to the OS (glibc only; elsewhere nothing to do)."""
    libc = _libc()
    if libc is not None:
        libc.malloc_trim(0)
