"""gunicorn settings for the dashboard (the Procfile's web line: `gunicorn --config gunicorn.conf.py wsgi:app`).

Hermes runs each chat turn on a server thread owned by an in-process pool,
and a streaming response holds a worker thread for its whole life. Every
setting below follows from those two facts; the comment on each says why.
"""

import os
import signal
import threading

from hermes.privacy import hide_process

# The master holds the same keys in its environment as the worker it forks:
# neither may be readable through /proc/<pid>/environ by the model's commands.
hide_process()

# Railway, Render, Fly and Heroku tell the app its port in $PORT; 8000 locally.
bind = f"0.0.0.0:{os.environ.get('PORT', '8000')}"

# ONE process: the live turns and their event buffers live in this process's
# memory, so a second worker would not see a turn the first one started (its
# replay and cancel would answer 404). Scale with threads, not processes.
workers = 1

# gthread: each request gets a real thread, and a streaming response keeps
# its thread while it streams. Turns themselves run on the pool's own threads.
worker_class = "gthread"

# Threads must exceed open streams plus ordinary requests: 32 browser tabs
# following turns still leave 32 threads for page loads, saves and searches.
# An idle thread costs little (its stack is virtual memory until used).
threads = 64

# Connections the worker holds at once, counting idle kept-alive ones
# (gthread parks those off-thread); comfortably above the threads.
worker_connections = 1000

# For gthread this is the worker's heartbeat to the master, not a per-request
# limit: the main loop beats every second while threads stream, so it only
# fires when the worker is truly stuck. Streams themselves end before 14
# minutes (HERMES_WEB_STREAM_MAX_SECONDS) to stay under Railway's 15-minute cap.
timeout = 60

# On SIGTERM, running turns are cancelled at their next safe point (see
# post_worker_init), their streams end with done "cancelled", and gunicorn
# waits this long for open responses. Cancelled turns stop within a second or
# two; 30 s leaves room for a slow final write. On Railway set
# RAILWAY_DEPLOYMENT_DRAINING_SECONDS=30 so the container is not killed after
# its default 3 s.
graceful_timeout = 30

# Above Railway's 60 s proxy keep-alive (and nginx's 75 s default), so the
# proxy, not gunicorn, closes idle connections: a proxy that reuses a
# connection gunicorn just closed answers the user 502.
keepalive = 75

# No max_requests: recycling the worker would kill every running turn and
# drop every replay buffer. Memory is bounded by the pool instead.
max_requests = 0

# Log to stdout/stderr, where platforms collect them. The access log's line
# has no query string secrets (the API takes none) and no cookies.
accesslog = "-"
errorlog = "-"
loglevel = os.environ.get("GUNICORN_LOG_LEVEL", "info")

# No control socket (gunicorn 25.1+): its default path is one per user, so two
# servers on one machine would fight over it, and it could raise the worker
# count that must stay at one. Older gunicorns ignore this name.
control_socket_disable = True

# wsgi:app is imported in the worker, after fork: the pool's threads and the
# database connections belong to the process that serves them.
preload_app = False


def _pool(worker):
    """The app's TurnPool (web.turns.init_app put it there), or None."""
    extensions = getattr(getattr(worker, "wsgi", None), "extensions", None) or {}
    return extensions.get("hermes.pool")


def _warm_up(worker):
    """Build the model provider's SDK client now, not in the first user's turn.

    Importing an SDK (anthropic, openai) takes seconds of CPU; paid at boot on a
    background thread, the first turn after a deploy streams as fast as the rest.
    """
    from hermes.errors import HermesError

    runtime = (getattr(worker.wsgi, "extensions", None) or {}).get("hermes.runtime")
    if runtime is None:
        return
    try:
        runtime.provider.client()
        import hermes.agent.loop  # noqa: F401  (the turn loop and its tools)
    except HermesError as exc:
        # No provider configured yet: the dashboard still serves; turns say what to set.
        worker.log.warning("model provider not ready: %s", exc.message)


def post_worker_init(worker):
    """Warm the provider up, and on SIGTERM cancel running turns at a safe point.

    gunicorn's own SIGTERM handler only stops accepting; open streams would
    then follow their turns until the graceful timeout. Cancelling makes each
    turn save what it has and send done "cancelled", so streams end at once
    and, after the restart, no session is left busy.
    """
    threading.Thread(target=_warm_up, args=(worker,), name="warm-up", daemon=True).start()
    stop_accepting = worker.handle_exit

    def handle_exit(sig, frame):
        stop_accepting(sig, frame)
        pool = _pool(worker)
        if pool is not None:
            # A signal handler must not block: the waiting happens on a thread.
            threading.Thread(
                target=pool.shutdown,
                kwargs={"timeout": graceful_timeout - 5},
                name="turns-shutdown",
                daemon=True,
            ).start()

    worker.handle_exit = handle_exit
    signal.signal(signal.SIGTERM, handle_exit)


def worker_exit(server, worker):
    """Give turns no reader was waiting for a last moment to save before the process ends."""
    pool = _pool(worker)
    if pool is not None:
        pool.shutdown(timeout=5)
