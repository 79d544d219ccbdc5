"""Session summaries written in the background when the user starts a new chat.

The chat the user leaves gets its note-to-self (``Runtime.summarize_session``)
on a daemon thread, so "New chat" answers at once however slow the model is.
Only a session worth it is summarized: two or more user messages, no summary
yet, no turn running. A failure is logged and forgotten: a summary is a
courtesy, never a reason for an error on the page.
"""

from __future__ import annotations

import logging
import threading

from hermes.errors import HermesError

log = logging.getLogger("hermes.web.summaries")

_lock = threading.Lock()
_running: set[tuple[int, int]] = set()  # (id of the runtime, session id) being summarized


def needs_summary(runtime, session_id: int) -> bool:
    """Whether the session should get a summary now (cheap: no transcript is loaded)."""
    store = runtime.store
    try:
        info = store.get_session(session_id)
    except HermesError:
        return False
    # Two user messages need at least three messages; the exact count is summarize_session's.
    enough = info.message_count >= 3 and not info.summary
    return enough and store.running_turn(session_id) is None


def summarize_in_background(runtime, session_id: int) -> threading.Thread | None:
    """Start summarizing ``session_id`` on a thread, unless it needs none or one is running."""
    if not needs_summary(runtime, session_id):
        return None
    key = (id(runtime), session_id)
    with _lock:
        if key in _running:
            return None
        _running.add(key)
    thread = threading.Thread(
        target=_summarize, args=(runtime, session_id, key), name=f"summary-{session_id}"
    )
    thread.daemon = True  # a summary must never hold a shutdown up
    thread.start()
    return thread


def _summarize(runtime, session_id: int, key: tuple[int, int]) -> None:
    try:
        summary = runtime.summarize_session(session_id)
        if summary:
            log.info("session %s summarized", session_id)
    except HermesError as exc:
        log.warning("could not summarize session %s: %s", session_id, exc.message)
    except Exception:
        log.exception("summarizing session %s failed", session_id)
    finally:
        with _lock:
            _running.discard(key)
