"""One Runtime shared by many threads, as the web server shares it."""

from __future__ import annotations

import logging
import threading

from hermes.logs import log_to_file
from hermes.runtime import Runtime
from hermes.store import Store

THREADS = 8


def all_at_once(work) -> list:
    """Run ``work()`` on THREADS threads released together; their results."""
    barrier = threading.Barrier(THREADS)
    results: list = [None] * THREADS

    def run(n: int) -> None:
        barrier.wait()
        results[n] = work()

    threads = [threading.Thread(target=run, args=(n,)) for n in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return results


def test_every_part_is_built_once_however_many_threads_ask(make_config, fake_llm, monkeypatch):
    runtime = Runtime(make_config(**fake_llm.config_overrides("anthropic")))
    opened = []
    real_open = Store.open.__func__

    def counting_open(cls, config, **options):
        opened.append(threading.current_thread().name)
        return real_open(cls, config, **options)

    monkeypatch.setattr(Store, "open", classmethod(counting_open))
    try:
        parts = all_at_once(
            lambda: (
                runtime.store,
                runtime.skills,
                runtime.tools(),
                runtime.agent(),
                runtime.provider_for("claude-haiku-4-5"),
            )
        )
        for index in range(5):
            assert len({id(p[index]) for p in parts}) == 1
        assert len(opened) == 1  # one store, so the migrations ran once
    finally:
        runtime.close()


def test_each_session_keeps_its_own_model(make_config, fake_llm, wire):
    runtime = Runtime(make_config(**fake_llm.config_overrides(wire)))
    try:
        store = runtime.store
        sessions = {
            "model-a": store.create_session(model="model-a").id,
            "model-b": store.create_session(model="model-b").id,
            runtime.model: store.create_session().id,
        }
        for _ in sessions:
            fake_llm.reply(text="ok")
        agent = runtime.agent()

        def turn(session_id: int) -> None:
            list(agent.run_turn(session_id, "which model are you?"))

        threads = [threading.Thread(target=turn, args=(sid,)) for sid in sessions.values()]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert sorted(r.json["model"] for r in fake_llm.requests) == sorted(sessions)
        assert runtime.model == runtime.config.model  # nobody switched the process's model
    finally:
        runtime.close()


def test_log_to_file_from_many_threads_adds_one_handler(tmp_path):
    all_at_once(lambda: log_to_file(tmp_path))
    handlers = [h for h in logging.getLogger("hermes").handlers if getattr(h, "hermes_log", None)]
    assert len(handlers) == 1
