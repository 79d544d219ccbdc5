"""The turn loop driven through the real SDKs against the scripted model server."""

from __future__ import annotations

import threading

import pytest

from hermes.messages import mark_interrupted
from hermes.runtime import Runtime


@pytest.fixture
def runtime(make_config, fake_llm, wire):
    rt = Runtime(make_config(**fake_llm.config_overrides(wire), max_retries=1))
    yield rt
    rt.close()


def run(runtime: Runtime, text: str, session_id: int | None = None, cancel=None):
    if session_id is None:
        session_id = runtime.store.create_session(source="cli").id
    events = list(runtime.agent().run_turn(session_id, text, cancel=cancel))
    return session_id, events


def types(events) -> list[str]:
    return [e.type for e in events]


def test_plain_answer_streams_and_is_stored(runtime, fake_llm):
    fake_llm.reply(text="Hello there, how can I help?", usage=(21, 7))
    session_id, events = run(runtime, "hi")

    assert types(events)[0] == "turn_start"
    assert types(events)[-2:] == ["usage", "done"]
    text = "".join(e.delta for e in events if e.type == "text")
    assert text == "Hello there, how can I help?"
    assert len([e for e in events if e.type == "text"]) > 1, "answer should arrive in pieces"
    usage, done = events[-2], events[-1]
    assert (usage.input_tokens, usage.output_tokens) == (21, 7)
    assert done.stop_reason == "end_turn"

    stored = runtime.store.messages(session_id)
    assert [m.message.role for m in stored] == ["user", "assistant"]
    assert stored[1].id == done.assistant_message_id
    assert stored[1].message.content == text
    assert runtime.store.get_session(session_id).title == "hi"


def test_tool_call_runs_and_result_goes_back_to_the_model(runtime, fake_llm, workspace):
    (workspace / "notes.txt").write_text("the launch code is 1234\n")
    fake_llm.reply(tool_calls=[("read_file", {"path": "notes.txt"})])
    fake_llm.reply(text="The code is 1234.")
    session_id, events = run(runtime, "what is in notes.txt?")

    call = next(e for e in events if e.type == "tool_call")
    result = next(e for e in events if e.type == "tool_result")
    assert (call.name, call.input) == ("read_file", {"path": "notes.txt"})
    assert result.id == call.id and not result.is_error
    assert "the launch code is 1234" in result.output
    assert events[-1].stop_reason == "end_turn"

    # The second request carries the tool result back to the model.
    second = fake_llm.requests[1].json
    assert "the launch code is 1234" in str(second["messages"])
    roles = [m.message.role for m in runtime.store.messages(session_id)]
    assert roles == ["user", "assistant", "tool", "assistant"]
    stored_call = runtime.store.messages(session_id)[1].message.tool_calls[0]
    assert stored_call.name == "read_file"


def test_tool_failures_go_back_to_the_model_and_the_turn_goes_on(runtime, fake_llm):
    fake_llm.reply(
        tool_calls=[
            ("no_such_tool", {}),
            ("read_file", {"path": "../outside.txt"}),
            ("read_file", {"wrong_argument": 1}),
        ]
    )
    fake_llm.reply(text="Sorry, I could not read it.")
    _, events = run(runtime, "read the file outside")

    results = [e for e in events if e.type == "tool_result"]
    assert [r.is_error for r in results] == [True, True, True]
    # Each call is announced right before its own result.
    tool_events = [e for e in events if e.type in ("tool_call", "tool_result")]
    assert [e.type for e in tool_events] == ["tool_call", "tool_result"] * 3
    assert all(a.id == b.id for a, b in zip(tool_events[::2], tool_events[1::2], strict=True))
    assert "unknown tool" in results[0].output
    assert "outside the workspace" in results[1].output
    assert "wrong_argument" in results[2].output
    assert events[-1].stop_reason == "end_turn"


def test_iteration_limit_ends_the_turn(make_config, fake_llm, wire):
    runtime = Runtime(make_config(**fake_llm.config_overrides(wire), max_iterations=2))
    for _ in range(2):
        fake_llm.reply(tool_calls=[("list_dir", {})])
    _, events = run(runtime, "loop forever")
    runtime.close()
    assert events[-1].stop_reason == "max_iterations"
    assert len(fake_llm.requests) == 2


def test_cut_stream_keeps_partial_text_and_reports_error(runtime, fake_llm):
    fake_llm.reply(text="The first part of a long answer that never finishes", cut_after=4)
    session_id, events = run(runtime, "tell me a story")

    partial = "".join(e.delta for e in events if e.type == "text")
    assert partial
    assert "The first part of a long answer that never finishes".startswith(partial)
    assert partial != "The first part of a long answer that never finishes"
    error = next(e for e in events if e.type == "error")
    assert error.retryable
    done = events[-1]
    assert done.stop_reason == "error"
    stored = runtime.store.messages(session_id)
    assert stored[-1].message.content == mark_interrupted(partial)
    assert stored[-1].id == done.assistant_message_id


def test_server_error_ends_with_a_clear_message(runtime, fake_llm):
    for _ in range(3):
        fake_llm.error(500)
    _, events = run(runtime, "hello?")
    error = next(e for e in events if e.type == "error")
    assert "500" in error.message or "server" in error.message.lower()
    assert events[-1].stop_reason == "error"


def test_rate_limit_is_retried(runtime, fake_llm):
    fake_llm.error(429, retry_after=0)
    fake_llm.reply(text="Made it.")
    _, events = run(runtime, "hello?")
    assert "".join(e.delta for e in events if e.type == "text") == "Made it."
    assert events[-1].stop_reason == "end_turn"
    assert len(fake_llm.requests) == 2


def test_cancel_before_tools_records_cancelled_results(runtime, fake_llm):
    cancel = threading.Event()
    fake_llm.reply(tool_calls=[("list_dir", {}), ("list_dir", {"path": "."})])
    session_id = runtime.store.create_session().id
    events = []
    for event in runtime.agent().run_turn(session_id, "look around", cancel=cancel):
        events.append(event)
        if event.type == "tool_result":
            cancel.set()
    results = [e for e in events if e.type == "tool_result"]
    assert not results[0].is_error
    assert results[1].output == "cancelled by the user"
    assert events[-1].stop_reason == "cancelled"
    # Every tool call still has its result, so the history stays valid for the next turn.
    roles = [m.message.role for m in runtime.store.messages(session_id)]
    assert roles == ["user", "assistant", "tool", "tool"]
    fake_llm.reply(text="ok")
    _, events = run(runtime, "continue", session_id=session_id)
    assert events[-1].stop_reason == "end_turn"


def test_system_prompt_is_identical_across_calls_and_turns(runtime, fake_llm):
    fake_llm.reply(tool_calls=[("list_dir", {})])
    fake_llm.reply(text="done")
    session_id, _ = run(runtime, "first")
    fake_llm.reply(text="again")
    run(runtime, "second", session_id=session_id)

    systems = [str(r.json.get("system") or r.json["messages"][0]) for r in fake_llm.requests]
    assert len(set(systems)) == 1
    tools = [str(r.json["tools"]) for r in fake_llm.requests]
    assert len(set(tools)) == 1


def test_three_tool_calls_reach_the_curator_and_two_do_not(runtime, fake_llm, workspace):
    (workspace / "app.py").write_text("print('hi')\n")
    fake_llm.reply(tool_calls=[("list_dir", {}), ("read_file", {"path": "app.py"})])
    fake_llm.reply(text="It prints hi.")
    _, events = run(runtime, "what does app.py do?")
    assert "skill" not in types(events)
    assert len(fake_llm.requests) == 2  # no curator call

    fake_llm.reply(tool_calls=[("list_dir", {}), ("read_file", {"path": "app.py"})])
    fake_llm.reply(tool_calls=[("run_bash", {"command": "python app.py"})])
    fake_llm.reply(text="Ran it: it prints hi.")
    fake_llm.reply(
        text=(
            "NAME: run-python-script\n"
            "DESCRIPTION: Run a Python script in the workspace and report its output. "
            "Use when asked to run or check a script.\n"
            "TRIGGERS: python, run, script\n"
            "BODY:\n1. List the workspace.\n2. Read the script.\n3. Run it with python.\n"
        )
    )
    session_id, events = run(runtime, "run app.py and tell me what it prints")
    skill = next(e for e in events if e.type == "skill")
    assert (skill.action, skill.name, skill.version) == ("created", "run-python-script", 1)
    # Done first (the session is free), the curator's skill after it.
    assert types(events)[-3:] == ["usage", "done", "skill"]
    # The turn's usage: three answer calls at (10, 5) each; the session's
    # totals add the curator's own call at (10, 5).
    usage = events[-3]
    assert (usage.input_tokens, usage.output_tokens) == (30, 15)
    totals = runtime.store.get_session(session_id)
    assert (totals.input_tokens, totals.output_tokens) == (40, 20)
    created = runtime.skills.get("run-python-script")
    assert created.source_session in (session_id, str(session_id))

    # The next related message finds the skill in what is sent to the model.
    fake_llm.reply(text="Sure.")
    run(runtime, "please run the python script again")
    assert "run-python-script" in str(fake_llm.requests[-1].json["messages"])


def test_cancel_while_the_model_is_silent_ends_the_turn_at_once(runtime, fake_llm):
    fake_llm.reply(text="Volcanoes form where magma rises", stall=8.0, stall_after=4)
    cancel = threading.Event()
    session_id = runtime.store.create_session().id
    events = []
    for event in runtime.agent().run_turn(session_id, "tell me about volcanoes", cancel=cancel):
        events.append(event)
        if event.type == "text":
            # The model goes quiet after this; the cancel must not wait for it.
            threading.Timer(0.2, cancel.set).start()
    done = events[-1]
    assert done.stop_reason == "cancelled"
    partial = "".join(e.delta for e in events if e.type == "text")
    assert runtime.store.messages(session_id)[-1].message.content == mark_interrupted(partial)
    assert "error" not in types(events)


def test_a_tool_that_times_out_is_an_error_result(make_config, fake_llm, wire):
    runtime = Runtime(make_config(**fake_llm.config_overrides(wire), bash_timeout=1.0))
    fake_llm.reply(tool_calls=[("run_bash", {"command": "sleep 30"})])
    fake_llm.reply(text="That command hangs.")
    _, events = run(runtime, "run the slow thing")
    runtime.close()
    result = next(e for e in events if e.type == "tool_result")
    assert result.is_error and "timed out" in result.output
    assert result.duration_ms < 10_000
    assert events[-1].stop_reason == "end_turn"


def test_a_huge_tool_output_is_cut_before_it_reaches_the_model(runtime, fake_llm):
    fake_llm.reply(
        tool_calls=[("run_bash", {"command": "yes 'all work and no play' | head -c 5000000"})]
    )
    fake_llm.reply(text="That was a lot of output.")
    session_id, events = run(runtime, "print a lot")
    result = next(e for e in events if e.type == "tool_result")
    assert "truncated" in result.output
    assert len(result.output) <= runtime.config.tool_output_limit + 200
    sent = str(fake_llm.requests[1].json["messages"])
    assert "truncated" in sent and len(sent) < 100_000
    stored = runtime.store.messages(session_id)[2].message
    assert stored.role == "tool" and stored.content == result.output


def _without_cache_markers(value):
    # Anthropic's cache_control moves to the newest block on every call; the
    # cached content itself must not change.
    if isinstance(value, dict):
        return {k: _without_cache_markers(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_without_cache_markers(v) for v in value]
    return value


def test_every_call_extends_the_previous_prompt_byte_for_byte(runtime, fake_llm, workspace):
    (workspace / "a.txt").write_text("alpha\n")
    fake_llm.reply(tool_calls=[("read_file", {"path": "a.txt"})])
    fake_llm.reply(text="It says alpha.")
    session_id, _ = run(runtime, "read a.txt")
    fake_llm.reply(text="Still alpha.")
    run(runtime, "and now?", session_id=session_id)

    sent = [_without_cache_markers(r.json["messages"]) for r in fake_llm.requests]
    for earlier, later in zip(sent, sent[1:], strict=False):
        assert later[: len(earlier)] == earlier


def test_usage_adds_up_every_call_with_its_cost(runtime, fake_llm):
    from hermes.events import Usage
    from hermes.providers.pricing import cost

    fake_llm.reply(tool_calls=[("list_dir", {})], usage=(100, 20))
    fake_llm.reply(text="Done.", usage=(150, 30))
    _, events = run(runtime, "look")
    usage = events[-2]
    assert (usage.input_tokens, usage.output_tokens) == (250, 50)
    model = runtime.provider.model
    expected = cost(model, Usage(100, 20)) + cost(model, Usage(150, 30))
    assert usage.cost_usd == pytest.approx(expected)
    assert usage.cost_usd > 0


def test_cost_is_unknown_for_an_unpriced_model(make_config, fake_llm, wire):
    runtime = Runtime(make_config(**fake_llm.config_overrides(wire, model="my-local-llama")))
    fake_llm.reply(text="Hi.", usage=(10, 5))
    _, events = run(runtime, "hi")
    runtime.close()
    assert events[-2].input_tokens == 10 and events[-2].cost_usd is None


def test_what_the_agent_remembers_reaches_the_next_session(runtime, fake_llm, wire):
    fake_llm.reply(
        tool_calls=[("remember", {"action": "add", "target": "user", "text": "Prefers tabs."})]
    )
    fake_llm.reply(text="Noted.")
    first, _ = run(runtime, "I prefer tabs over spaces")
    assert "Prefers tabs." in runtime.profile.read("user")
    # The session that learned it keeps its frozen prompt (prompt caching)...
    fake_llm.reply(text="Sure.")
    run(runtime, "thanks", session_id=first)
    # ...and the next session starts with it.
    fake_llm.reply(text="Tabs, as you like.")
    run(runtime, "format my code")

    def system_text(request) -> str:
        body = request.json
        return str(body["system"]) if wire == "anthropic" else body["messages"][0]["content"]

    assert "Prefers tabs." not in system_text(fake_llm.requests[2])
    assert "Prefers tabs." in system_text(fake_llm.requests[3])


def test_using_a_skill_loads_its_body_and_counts_the_use(runtime, fake_llm):
    runtime.skills.create(
        "rotate-logs",
        "Rotate and compress old log files. Use when logs fill the disk.",
        "1. Find logs older than 7 days.\n2. gzip them.\n",
        triggers=["logs", "disk"],
        created_by="user",
    )
    fake_llm.reply(tool_calls=[("use_skill", {"name": "rotate-logs"})])
    fake_llm.reply(text="Following rotate-logs.")
    _, events = run(runtime, "my disk is full of logs")

    # The relevant skill was offered ahead of the message...
    assert "rotate-logs" in str(fake_llm.requests[0].json["messages"])
    # ...its body came back through the tool, and the use was counted.
    result = next(e for e in events if e.type == "tool_result")
    assert "gzip them" in result.output
    skill = next(e for e in events if e.type == "skill")
    assert (skill.action, skill.name, skill.version) == ("used", "rotate-logs", 1)
    assert runtime.skills.get("rotate-logs").uses == 1


SKILL_ANSWER = (
    "NAME: count-python-files\n"
    "DESCRIPTION: Count the Python files in a folder. Use when asked how many .py files exist.\n"
    "TRIGGERS: python, files, count\n"
    "BODY:\n1. list_dir the folder.\n2. Count names ending in .py.\n{extra}"
)


def three_tool_turn(fake_llm, answer: str) -> None:
    fake_llm.reply(tool_calls=[("list_dir", {}), ("list_dir", {"path": "."})])
    fake_llm.reply(tool_calls=[("search_files", {"pattern": "import"})])
    fake_llm.reply(text="There are 2 Python files.")
    fake_llm.reply(text=answer)


def test_the_same_procedure_twice_refines_one_skill(runtime, fake_llm, workspace, hermes_home):
    (workspace / "a.py").write_text("import os\n")
    (workspace / "b.py").write_text("import sys\n")
    three_tool_turn(fake_llm, SKILL_ANSWER.format(extra=""))
    first, events = run(runtime, "how many python files are here?")
    assert next(e for e in events if e.type == "skill").action == "created"

    three_tool_turn(fake_llm, SKILL_ANSWER.format(extra="3. Skip __init__.py if asked.\n"))
    second, events = run(runtime, "count the python files again")
    skill = next(e for e in events if e.type == "skill")
    assert (skill.action, skill.name, skill.version) == ("refined", "count-python-files", 2)

    folders = [p.name for p in (hermes_home / "skills").iterdir() if not p.name.startswith(".")]
    assert folders == ["count-python-files"]
    refined = runtime.skills.get("count-python-files")
    assert "Skip __init__.py" in refined.body
    assert refined.source_session in (second, str(second))
    assert [v.version for v in runtime.skills.versions("count-python-files")] == [1, 2]


def test_small_talk_never_reaches_the_curator(runtime, fake_llm):
    fake_llm.reply(text="Hello! How are you?")
    _, events = run(runtime, "hi there")
    assert len(fake_llm.requests) == 1
    assert "skill" not in types(events)


def test_input_billed_for_cut_streams_is_counted_once_retried(make_config, fake_llm):
    """Anthropic bills a request's input once message_start is out; a stream cut after it
    and retried still cost that much, in the session totals and the turn's usage."""
    runtime = Runtime(make_config(**fake_llm.config_overrides("anthropic"), max_retries=2))
    try:
        fake_llm.reply(text="", usage=(1000, 5), cut_after=1)  # message_start, then cut
        fake_llm.reply(text="", usage=(1000, 5), cut_after=1)
        fake_llm.reply(text="ok", usage=(1000, 5))
        session_id = runtime.store.create_session().id
        events = list(runtime.agent().run_turn(session_id, "hi"))
        assert events[-1].stop_reason == "end_turn" and len(fake_llm.requests) == 3
        [usage] = [e for e in events if e.type == "usage"]
        assert usage.input_tokens == 3000 and usage.cost_usd is not None  # still priced
        assert runtime.store.get_session(session_id).input_tokens == 3000

        for _ in range(3):  # every attempt cut: the error still counts what was billed
            fake_llm.reply(text="", usage=(1000, 5), cut_after=1)
        events = list(runtime.agent().run_turn(session_id, "again"))
        assert events[-1].stop_reason == "error"
        assert runtime.store.get_session(session_id).input_tokens == 6000
    finally:
        runtime.close()
