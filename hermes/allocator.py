"""Keep a long-running server's memory from creeping up: glibc malloc settings.

The embedding model's matrices (hundreds of KB to tens of MB per batch) are
freed after every batch. glibc's default raises its mmap threshold each time
such a block is freed, so later ones come from the heap, where freed memory
is kept rather than returned; with many threads it also keeps one arena per
thread. Both look like growth in a server that runs for weeks. Fixing the
threshold (which also turns off that dynamic raise) and capping the arenas is
the usual cure; it costs nothing measurable for Hermes' small allocations.
"""

from __future__ import annotations

import ctypes

from hermes.privacy import libc_function

M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
M_ARENA_MAX = -8

MMAP_THRESHOLD = 128 * 1024  # glibc's own starting value, now fixed
TRIM_THRESHOLD = 2 * MMAP_THRESHOLD
ARENA_MAX = 4


def tune_malloc() -> bool:
    """Apply the settings above (Linux with glibc); True if they took, False elsewhere.
    Never raises: another libc just keeps its defaults."""
    mallopt = libc_function("mallopt")
    if mallopt is None:
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    settings = (
        (M_MMAP_THRESHOLD, MMAP_THRESHOLD),
        (M_TRIM_THRESHOLD, TRIM_THRESHOLD),
        (M_ARENA_MAX, ARENA_MAX),
    )
    return all(mallopt(option, value) == 1 for option, value in settings)
