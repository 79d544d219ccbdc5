"""The turn loop with hostile text: lone surrogates from file names, the model or argv."""

from __future__ import annotations

import os

import pytest

from hermes.runtime import Runtime


@pytest.fixture
def runtime(make_config, fake_llm, wire):
    rt = Runtime(make_config(**fake_llm.config_overrides(wire), max_retries=1))
    yield rt
    rt.close()


def run(runtime: Runtime, text: str):
    session_id = runtime.store.create_session(source="cli").id
    return session_id, list(runtime.agent().run_turn(session_id, text))


def test_a_file_name_that_is_not_utf8_does_not_break_the_turn(runtime, fake_llm, workspace):
    with open(os.path.join(os.fsencode(workspace), b"report-\xff.txt"), "w") as f:
        f.write("x")
    fake_llm.reply(tool_calls=[("list_dir", {}), ("run_bash", {"command": "ls"})])
    fake_llm.reply(text="There is one odd file.")
    session_id, events = run(runtime, "what is here?")

    assert events[-1].stop_reason == "end_turn", [e for e in events if e.type == "error"]
    results = [e for e in events if e.type == "tool_result"]
    assert all("report-" in r.output and not r.is_error for r in results)
    for r in results:
        r.output.encode("utf-8")  # printable and storable
    assert [m.message.role for m in runtime.store.messages(session_id)][-1] == "assistant"


def test_lone_surrogates_from_the_model_and_the_user_are_replaced(runtime, fake_llm):
    fake_llm.reply(
        text="half a pair: \ud83d end", tool_calls=[("list_dir", {"path": "\udcff"})], usage=(1, 1)
    )
    fake_llm.reply(text="done")
    session_id, events = run(runtime, "argv bytes \udcfe here")

    assert events[-1].stop_reason == "end_turn", [e for e in events if e.type == "error"]
    text = "".join(e.delta for e in events if e.type == "text")
    text.encode("utf-8")
    assert "half a pair:" in text and "end" in text
    call = next(e for e in events if e.type == "tool_call")
    str(call.input).encode("utf-8")
    stored = runtime.store.messages(session_id)
    assert "argv bytes" in stored[0].message.content
