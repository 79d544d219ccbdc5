"""glibc's malloc settings for the server: applied where glibc is, harmless elsewhere."""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest

from hermes.allocator import tune_malloc


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="mallopt is glibc's")
def test_the_settings_take_on_glibc():
    assert tune_malloc() is True


def test_a_process_that_tuned_malloc_still_allocates_and_frees_big_blocks():
    code = (
        "from hermes.allocator import tune_malloc; tune_malloc()\n"
        "import numpy as np\n"
        "for n in range(50):\n"
        "    a = np.ones((512, 1024), dtype=np.float32); del a\n"
        "print('ok')"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
