"""Two real processes writing at the same moment never see "database is locked"."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from hermes.messages import Message

WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from hermes.config import Config
    from hermes.messages import Message
    from hermes.store import Store

    home, session_id, name, count = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    config = Config(home=home, workspace=home, database_url=f"sqlite:///{home / 'hermes.db'}")
    store = Store.open(config)
    for i in range(count):
        store.add_message(session_id, Message("user", f"{name} writes number {i}"))
        own = store.create_session(title=f"{name} {i}")
        store.update_session(own.id, summary=f"summary by {name}")
        store.start_turn(own.id, f"{name}-{i}")
        store.finish_turn(f"{name}-{i}", "end_turn")
    store.close()
    print("done")
    """
)


def test_two_processes_and_a_thread_write_at_once(store, config):
    session = store.create_session(title="shared")
    count = 60
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(config.home), str(session.id), name, str(count)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("cli", "web")
    ]
    for i in range(count):  # this process writes too
        store.add_message(session.id, Message("assistant", f"main writes number {i}"))
    outputs = [p.communicate(timeout=120) for p in processes]
    for process, (out, err) in zip(processes, outputs, strict=True):
        assert process.returncode == 0, err
        assert "database is locked" not in err
        assert out.strip() == "done"
    messages = store.messages(session.id)
    assert len(messages) == 3 * count == store.get_session(session.id).message_count
    assert [m.message.content for m in messages if "cli" in m.message.content] == [
        f"cli writes number {i}" for i in range(count)
    ]
    assert len(store.search("writes number", limit=100)) == 100


def test_a_waiting_writer_of_this_process_goes_in_as_soon_as_the_last_one_commits(store):
    """Writers of one process queue on a lock of their own, not on SQLite's busy timeout.

    SQLite's timeout polls with growing sleeps (by one second of waiting they are
    100 ms long), so the lock sat free while a dozen web turns slept on it. Here a
    writer waits a second behind another; what counts is how long after that
    commit it gets in: at SQLite's poll it would be up to 100 ms, ~50 on average.
    Best of five, so one slow wake-up on a loaded machine does not decide.
    """
    import threading
    import time

    from hermes.store.engine import write_transaction

    session = store.create_session(title="queue")

    def one_lag() -> float:
        holding, committed, entered = threading.Event(), [], []

        def first():
            with write_transaction(store.engine) as connection:
                connection.exec_driver_sql(
                    "UPDATE sessions SET title = 'held' WHERE id = ?", (session.id,)
                )
                holding.set()
                time.sleep(1.0)
            committed.append(time.monotonic())

        def second():
            holding.wait()
            with write_transaction(store.engine):
                entered.append(time.monotonic())

        threads = [threading.Thread(target=first), threading.Thread(target=second)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        return entered[0] - committed[0]

    lags = [one_lag() for _ in range(5)]
    assert min(lags) < 0.02, lags
