"""Imports: ChatGPT and Claude data exports, and our own JSON export.

Each format is a top-level JSON array of conversations, streamed with
``iter_json_array``. The import makes two passes over the file: the first only
parses and checks every conversation, so a malformed file is refused before
anything is written; the second adds the conversations in batches of about
``BATCH_MESSAGES`` messages, each batch one transaction, so a conversation is
never half-stored.

Conversations already present (same external id or, for our own exports, the
same session uid) are not added again, which makes importing the same file
twice a no-op. A newer export of a stored conversation whose stored messages
are exactly its beginning adds just the new messages; one that has diverged
is skipped (see ``hermes.store.bulk``). The parsers, one per format, live in
``hermes.store.formats``.
"""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from hermes.errors import ImportFileError
from hermes.store import bulk
from hermes.store.formats import EXPORT_VERSION, PARSERS, BadConversation, detect_format
from hermes.store.jsonstream import export_size, iter_json_array
from hermes.store.store import SessionRecord, Store
from hermes.text import plural

FORMATS = ("chatgpt", "claude", "hermes")
FORMAT_NAMES = {"chatgpt": "ChatGPT", "claude": "Claude", "hermes": "Hermes"}
# Conversations are committed in groups of about this many messages (each one
# still all-or-nothing in its own savepoint): short enough that the web server
# waits only a moment for the write lock, long enough to keep imports fast.
BATCH_MESSAGES = 2000

# progress(phase, bytes_done, bytes_total); phase is "checking" or "importing".
Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class ImportResult:
    """Counts of an import. ``messages`` includes those appended to ``extended``
    conversations (stored ones that a newer export continued); ``diverged`` holds
    the titles of stored conversations the export changed before their end."""

    conversations: int
    messages: int
    skipped: int
    empty: int
    extended: int = 0
    diverged: tuple[str, ...] = ()

    def summary(self) -> str:
        text = (
            f"imported {plural(self.conversations, 'conversation')}, "
            f"{plural(self.messages, 'message')}; "
        )
        if self.extended:
            text += f"added new messages to {self.extended} already present; "
        text += f"skipped {self.skipped} already present"
        if self.empty:
            text += f", {self.empty} with no messages"
        for title in self.diverged:
            text += (
                f"\ndiverged: {title!r} was edited in the other tool before its end, so it no "
                "longer continues the copy stored here; the stored copy was kept as it is"
            )
        return text


def import_file(
    store: Store, kind: str, path: Path, *, progress: Progress | None = None
) -> ImportResult:
    """Import an export file of ``kind`` (chatgpt, claude or hermes) into ``store``.

    ``path`` is the ``conversations.json`` or the zip the service offers for
    download (its ``conversations.json`` is read from inside).
    """
    if kind not in FORMATS:
        raise ImportFileError(f"Unknown import format {kind!r}: use one of {', '.join(FORMATS)}.")
    path = Path(path)
    if not path.is_file():
        raise ImportFileError(f"{path} is not a file; give the path of the conversations.json.")
    total = export_size(path)

    def reporter(phase: str):
        return (lambda done: progress(phase, done, total)) if progress else None

    for _ in read_records(kind, path, on_progress=reporter("checking")):
        pass
    counts = dict.fromkeys((bulk.ADDED, bulk.EXTENDED, bulk.SKIPPED, bulk.DIVERGED), 0)
    messages = empty = 0
    diverged: list[str] = []
    for batch in _batches_in_background(
        read_records(kind, path, on_progress=reporter("importing"))
    ):
        # Another tool's conversation with nothing visible in it is noise; an
        # empty session of our own export is restored like any other.
        worth = [record for record in batch if record.messages or kind == "hermes"]
        empty += len(batch) - len(worth)
        for record, outcome in zip(worth, store.merge_session_records(worth), strict=True):
            counts[outcome.action] += 1
            messages += outcome.messages
            if outcome.action == bulk.DIVERGED:
                diverged.append(record.title or f"session {outcome.session_id}")
    return ImportResult(
        counts[bulk.ADDED],
        messages,
        counts[bulk.SKIPPED],
        empty,
        counts[bulk.EXTENDED],
        tuple(diverged),
    )


def _batches_in_background(records: Iterator[SessionRecord]) -> Iterator[list[SessionRecord]]:
    """Group records into batches of about BATCH_MESSAGES messages, parsed on a thread.

    Parsing is Python work and inserting is mostly SQLite work (which releases
    the GIL), so reading the next batch while the last one is written makes
    imports markedly faster. Errors from the reader are re-raised here.
    """
    ready: queue.Queue = queue.Queue(maxsize=2)
    stop = threading.Event()

    def produce() -> None:
        try:
            batch: list[SessionRecord] = []
            count = 0
            for record in records:
                if stop.is_set():
                    return
                batch.append(record)
                count += len(record.messages) + 1
                if count >= BATCH_MESSAGES:
                    ready.put(batch)
                    batch, count = [], 0
            ready.put(batch)
            ready.put(None)
        except BaseException as exc:  # handed to the consumer, which re-raises it
            ready.put(exc)

    worker = threading.Thread(target=produce, name="hermes-import-reader", daemon=True)
    worker.start()
    try:
        while True:
            item = ready.get()
            if item is None:
                return
            if isinstance(item, BaseException):
                raise item
            if item:
                yield item
    finally:
        stop.set()
        while worker.is_alive():  # unblock a producer waiting on a full queue
            with contextlib.suppress(queue.Empty):
                ready.get(timeout=0.05)
        worker.join()


def read_records(
    kind: str, path: Path, *, on_progress: Callable[[int], None] | None = None
) -> Iterator[SessionRecord]:
    """Parse and check each conversation of the file, as a SessionRecord."""
    parse = PARSERS[kind]
    for index, item in iter_json_array(path, on_progress=on_progress):
        looks_like = detect_format(item)
        if looks_like is not None and looks_like != kind:
            raise ImportFileError(
                f"{path.name}: this looks like a {FORMAT_NAMES[looks_like]} export, not a "
                f"{FORMAT_NAMES[kind]} one; use `hermes import {looks_like} {path}`. "
                "Nothing was imported."
            )
        try:
            yield parse(item)
        except BadConversation as exc:
            raise ImportFileError(
                f"{path.name}: conversation {index} is not a valid {kind} export: {exc}. "
                "Nothing was imported."
            ) from None


__all__ = ["EXPORT_VERSION", "FORMATS", "ImportResult", "import_file", "read_records"]
