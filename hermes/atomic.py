"""Write a file so that readers see the old version or the new one, never half of one."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO


@contextmanager
def replacing(path: Path, binary: bool = False, *, mode: int | None = None) -> Iterator[IO]:
    """Open a temporary file beside ``path``; on success it replaces ``path``.

    The data is flushed to disk before the rename. If the block raises, the
    temporary file is removed and ``path`` is left as it was. ``mode`` sets the
    new file's permission bits (e.g. to keep an edited file's own). OSError
    from creating, writing or renaming reaches the caller, who words it.
    """
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        if binary:
            handle: IO = os.fdopen(fd, "wb")
        else:
            handle = os.fdopen(fd, "w", encoding="utf-8", newline="\n")
        with handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(temp, mode)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically, creating missing folders.

    Used for files under HERMES_HOME only: the new file is 0600 (``mkstemp``) and
    a folder made for it 0700, private to the user.
    """
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    with replacing(path) as handle:
        handle.write(text)
