"""Writing message vectors: the resumable backfill (``hermes db reindex``) and the
background indexer that embeds new messages a moment after they are stored.

Both do the same thing: take the oldest messages of the current vector space
that have no vector yet, embed a batch, and store the vectors in one short
write transaction. Nothing else is stored, so either can stop at any moment
and the next run resumes where it stopped (the background indexer keeps, in
memory only, how far it has looked: see FULL_PASS_SECONDS). A vector is
stored only if the message still has the text that was embedded (a streaming
answer may have grown meanwhile; its vector is then made on the next pass).

Search never waits for this: messages without a vector are found by the
lexical index alone.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from sqlalchemy import Engine, text

from hermes.embeddings import Embedder, EmbeddingError
from hermes.store import vectors
from hermes.store.engine import read_transaction, write_transaction

log = logging.getLogger(__name__)

BATCH = 256
# What a message's vector is made of: the start of the turn before it (a reply
# like "Love it, going with that" means what it answers) and the message itself.
PREVIOUS_CHARS = 200
PENDING = """
    FROM messages m
    WHERE m.role IN ('user', 'assistant') AND m.content != ''
      AND NOT EXISTS (
        SELECT 1 FROM message_vectors v WHERE v.space_id = :space AND v.message_id = m.id
      )
"""


@dataclass(frozen=True)
class Progress:
    done: int
    total: int
    seconds: float

    @property
    def rate(self) -> float:
        return self.done / self.seconds if self.seconds > 0 else 0.0

    @property
    def remaining_seconds(self) -> float | None:
        return (self.total - self.done) / self.rate if self.rate > 0 else None


def ensure_space(engine: Engine, embedder: Embedder) -> int:
    with write_transaction(engine) as connection:
        return vectors.space_id(connection, embedder.space, embedder.dim, create=True)


def pending_count(engine: Engine, space: int) -> int:
    with read_transaction(engine) as connection:
        return connection.execute(text(f"SELECT count(*) {PENDING}"), {"space": space}).scalar()


def embed_batch(
    engine: Engine, embedder: Embedder, space: int, after: int, batch: int = BATCH
) -> tuple[int, int, int]:
    """Embed up to ``batch`` pending messages with ids above ``after``: how many
    were looked at, the last id, and how many vectors were stored (0, 0, 0 when
    nothing was pending). Fewer are stored than looked at when a message's text
    changed meanwhile: it stays pending."""
    with read_transaction(engine) as connection:
        rows = connection.execute(
            text(
                "SELECT m.id, m.content, "
                f"(SELECT substr(p.content, 1, {PREVIOUS_CHARS}) FROM messages p "
                " WHERE p.session_id = m.session_id AND p.position = m.position - 1 "
                "   AND p.role != 'tool') AS previous "
                f"{PENDING} AND m.id > :after ORDER BY m.id LIMIT :batch"
            ),
            {"space": space, "after": after, "batch": batch},
        ).all()
    if not rows:
        return 0, 0, 0
    embedded = embedder.embed([embedding_text(row.content, row.previous) for row in rows])
    blobs = vectors.quantize(embedded)
    with write_transaction(engine) as connection:
        stored = connection.execute(
            text(
                "INSERT OR IGNORE INTO message_vectors(space_id, message_id, vector) "
                "SELECT :space, id, :vector FROM messages WHERE id = :id AND content = :content"
            ),
            [
                {"space": space, "id": row.id, "vector": blob, "content": row.content}
                for row, blob in zip(rows, blobs, strict=True)
            ],
        ).rowcount
    return len(rows), rows[-1].id, stored


def embedding_text(content: str, previous: str | None) -> str:
    if previous:
        return f"{previous}\n{content}"
    return content


def reindex(engine: Engine, embedder: Embedder, *, batch: int = BATCH) -> Iterator[Progress]:
    """Embed every message that has no vector in the embedder's space, yielding progress."""
    space = ensure_space(engine, embedder)
    total = pending_count(engine, space)
    started = time.perf_counter()
    done = 0
    after = 0
    yield Progress(0, total, 0.0)
    while True:
        count, after, _stored = embed_batch(engine, embedder, space, after, batch)
        if not count:
            break
        done += count
        # Messages added meanwhile are embedded too: let the total grow with them.
        total = max(total, done)
        yield Progress(done, total, time.perf_counter() - started)


START_DELAY = 3.0
# Embedding is CPU work (the default model takes most of a core), and on a small box it would
# slow the answers being streamed. So the background indexer
# - embeds BACKGROUND_BATCH messages at a time: a batch holds the model (a query's embedding,
#   for a search or a turn's skill selection, waits for it) for a fraction of a second, and
#   the check below comes round often;
# - before each batch, waits while its Store has a turn running (``busy``), checking every
#   DEFER_POLL seconds; after DEFER_MAX seconds of waiting it embeds one batch anyway, so a long stretch
#   of turns never leaves the index far behind;
# - runs at the lowest CPU priority (nice 19, this thread only), so whatever else is runnable
#   goes first.
BACKGROUND_BATCH = 16
DEFER_POLL = 0.25
DEFER_MAX = 30.0
# Looking for pending messages from the first one costs a pass over every
# message (0.25-1.2 s of CPU at a million, by how warm the cache is), so the
# background indexer remembers a floor: messages at or below it had vectors
# when it last looked. A poke that names the message it is about lowers the
# floor to it. A poke that names none (start, an import) starts from the first
# message, and so does a pass at least every FULL_PASS_SECONDS, which catches
# a change nobody poked about.
FULL_PASS_SECONDS = 600.0
NO_POKE = 1 << 62  # "nothing poked about during this pass": above every message id


class BackgroundIndexer:
    """A daemon thread that embeds pending messages whenever it is poked.

    It starts working ``delay`` seconds after the first poke, so a one-shot
    command (``hermes chat -q``, ``hermes search``) finishes and exits without
    competing with it; the REPL and the web server, which live on, embed.
    """

    def __init__(
        self,
        engine: Engine,
        embedder: Embedder,
        *,
        delay: float = START_DELAY,
        busy: Callable[[], bool] = lambda: False,
    ):
        self.engine = engine
        self.embedder = embedder
        self.delay = delay
        self.busy = busy  # True while something more urgent runs (the Store's turns)
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._idle = threading.Event()
        self._idle.set()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._floor = 0  # ids at or below it had their vectors at the last look
        self._lowest = NO_POKE  # the lowest id poked about during the current pass
        self._full_at: float | None = None  # monotonic time of the last full pass

    def poke(self, message_id: int | None = None) -> None:
        """There may be new messages (or changed ones): embed them soon.

        ``message_id`` is the message written (new or changed); without one the
        next pass looks at every message."""
        since = 0 if message_id is None else max(int(message_id) - 1, 0)
        with self._lock:
            self._floor = min(self._floor, since)
            self._lowest = min(self._lowest, since)
            self._idle.clear()
            self._wake.set()
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._run, name="hermes-indexer", daemon=True
                )
                self._thread.start()

    def wait_idle(self, timeout: float = 60.0) -> bool:
        """Block until nothing is pending (tests, benches); False on timeout."""
        return self._idle.wait(timeout)

    def stop(self, timeout: float = 1.0) -> None:
        self._stop.set()
        self._wake.set()
        thread = self._thread
        if thread is not None:
            thread.join(timeout)

    def _defer(self) -> None:
        """Wait while ``busy()`` says so, for at most DEFER_MAX seconds."""
        waited = 0.0
        while self.busy() and not self._stop.is_set() and waited < DEFER_MAX:
            self._stop.wait(DEFER_POLL)
            waited += DEFER_POLL

    def _run(self) -> None:
        _lowest_priority()
        try:
            if self._stop.wait(self.delay):
                return
            space = ensure_space(self.engine, self.embedder)
            while not self._stop.is_set():
                self._wake.clear()
                self._one_pass(space)
                with self._lock:
                    if not self._wake.is_set():
                        # Nothing new arrived while we worked: sleep until poked.
                        self._idle.set()
                        self._thread = None
                        return
        except EmbeddingError as exc:
            log.warning("background indexing stopped: %s", exc)
        except Exception:  # never let vectors take the process down
            log.exception("background indexing failed")
        finally:
            self._idle.set()

    def _one_pass(self, space: int) -> None:
        """Embed every pending message above the floor (or all of them, see
        FULL_PASS_SECONDS), then raise the floor to what was looked at."""
        now = time.monotonic()
        with self._lock:
            full = self._full_at is None or now - self._full_at >= FULL_PASS_SECONDS
            after = 0 if full else self._floor
            self._lowest = NO_POKE
        if full:
            self._full_at = now
        with read_transaction(self.engine) as connection:
            top = connection.execute(text("SELECT coalesce(max(id), 0) FROM messages")).scalar()
        start, clean = after, True
        while not self._stop.is_set():
            self._defer()
            count, last, stored = embed_batch(
                self.engine, self.embedder, space, after, BACKGROUND_BATCH
            )
            if not count:
                break
            clean = clean and stored == count
            after = last
        with self._lock:
            # Skipped rows (their text changed) and anything poked about meanwhile
            # stay above the floor; so does what was written after the pass began.
            reached = min(top, after) if self._stop.is_set() else top
            self._floor = min(reached if clean else start, self._lowest)


def _lowest_priority() -> None:
    """Nice 19 for the calling thread (Linux keeps a nice value per thread); elsewhere, or
    where it is not allowed, the thread keeps the process's priority."""
    with contextlib.suppress(AttributeError, OSError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
