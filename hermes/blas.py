"""One BLAS thread for the whole process.

Every matrix product Hermes makes is small: a query against the 2,000 vectors
left after the coarse stage of a search (hermes/store/vectors.py), MiniLM's
batches of a few dozen texts. BLAS's thread pool gains nothing on those, and
its threads spin between calls: a search at a million messages used 94 ms of
server CPU with the pool and 52 ms without it, in the same wall time, and on a
two-core box that spinning is taken from the answers being streamed.
"""

from __future__ import annotations

import logging

log = logging.getLogger(__name__)


def single_blas_thread() -> bool:
    """Limit every loaded BLAS to one thread; True if it took. Never raises."""
    try:
        import numpy  # noqa: F401  (BLAS is loaded with numpy; the limit applies to what is loaded)
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=1, user_api="blas")
        return True
    except Exception as exc:  # a missing or odd BLAS keeps its defaults
        log.debug("BLAS threads left as they are: %s", exc)
        return False
