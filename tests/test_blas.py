"""BLAS runs on one thread in Hermes' processes (see hermes/blas.py)."""

from __future__ import annotations

import json
import subprocess
import sys

PROBE = (
    "import json, threadpoolctl, {module}\n"
    "{call}\n"
    "info = threadpoolctl.threadpool_info()\n"
    "print(json.dumps([i['num_threads'] for i in info if i['user_api'] == 'blas']))\n"
)


def _blas_threads(module: str, call: str = "") -> list[int]:
    out = subprocess.run(
        [sys.executable, "-c", PROBE.format(module=module, call=call)],
        capture_output=True,
        text=True,
        check=True,
        env={"OPENBLAS_NUM_THREADS": "2", "PATH": "/usr/bin:/bin"},
    ).stdout
    return json.loads(out)


def test_the_vector_search_module_limits_blas_to_one_thread():
    assert _blas_threads("numpy") == [2]  # what the machine would use otherwise
    assert _blas_threads("hermes.store.vectors") == [1]


def test_the_limit_is_a_plain_call_that_never_raises():
    assert _blas_threads("hermes.blas", "assert hermes.blas.single_blas_thread() is True") == [1]
