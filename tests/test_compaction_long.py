"""Long sessions never hit the wall: the scripted 400-turn session, restarts, recall.

The fake server here is strict about size like the real APIs: a request whose
prompt plus max_tokens passes its window is refused with the API's own 400
"prompt is too long" / context_length_exceeded, and accepted requests report
the server's own token count (not our estimate) as their input tokens.
"""

from __future__ import annotations

from hermes.runtime import Runtime
from tests.fakes import llm_wire as wf
from tests.fakes.long_session import (
    FACT,
    FACT_TURN,
    QUESTION,
    LongSession,
    is_summarizer,
    user_text,
    write_files,
)

WINDOW = 16_000
TURNS = 400


def make_runtime(make_config, fake_llm, wire: str, **extra) -> Runtime:
    config = make_config(
        **fake_llm.config_overrides(wire), context_window=WINDOW, max_retries=0, **extra
    )
    return Runtime(config)


def run_turn(agent, session_id: int, text: str) -> list:
    events = list(agent.run_turn(session_id, text))
    errors = [e.message for e in events if e.type == "error"]
    assert not errors, errors
    assert events[-1].stop_reason == "end_turn"
    return events


def oversize(fake_llm) -> list[int]:
    """Sizes of the requests the server refused (or would refuse) as over its window."""
    sizes = []
    for request in fake_llm.requests:
        body = request.json
        if isinstance(body, dict) and "messages" in body:
            total = wf.prompt_tokens(body) + wf.requested_output(body)
            if total > WINDOW:
                sizes.append(total)
    return sizes


def unpaired(wire: str, body: dict) -> list[str]:
    """Tool results whose call is not in the message right before them, and calls
    left without a result: what the real APIs refuse with a 400."""
    problems = []
    calls: set[str] = set()
    for message in body["messages"]:
        if wire == "openai":
            if message["role"] == "assistant":
                problems += [f"no result for {c}" for c in calls]
                calls = {c["id"] for c in message.get("tool_calls") or []}
            elif message["role"] == "tool":
                if message["tool_call_id"] not in calls:
                    problems.append(f"orphan result {message['tool_call_id']}")
                calls.discard(message["tool_call_id"])
            continue
        blocks = message["content"] if isinstance(message["content"], list) else []
        if message["role"] == "assistant":
            problems += [f"no result for {c}" for c in calls]
            calls = {b["id"] for b in blocks if b.get("type") == "tool_use"}
        else:
            results = {b["tool_use_id"] for b in blocks if b.get("type") == "tool_result"}
            problems += [f"orphan result {r}" for r in results - calls]
            problems += [f"no result for {c}" for c in calls - results]
            calls = set()
    return problems


def test_a_400_turn_session_with_big_tool_outputs_runs_to_the_end(
    make_config, fake_llm, wire, workspace
):
    write_files(workspace, TURNS)
    fake_llm.context_window = WINDOW
    fake_llm.responder = LongSession(wire)
    runtime = make_runtime(make_config, fake_llm, wire)
    try:
        agent = runtime.agent()
        session_id = runtime.store.create_session().id
        compacted = 0
        for turn in range(1, TURNS + 1):
            events = run_turn(agent, session_id, user_text(turn))
            compacted += sum(1 for e in events if e.type == "compaction")

        # Every request fitted: the server never had to refuse one.
        assert oversize(fake_llm) == []
        # No cut ever split a tool call from its result.
        for request in fake_llm.requests:
            assert unpaired(wire, request.json) == []
        # Without compaction the session would be ~40x the window by now.
        total_chars = sum(len(m.content) for m in runtime.store.history(session_id))
        assert total_chars / 4 > 30 * WINDOW
        summaries = [c for c in runtime.store.compactions(session_id) if c.summary]
        assert compacted >= 20 and len(summaries) >= 5

        # Nothing was lost: all 400 turns are stored and the fact from turn 3 is searchable.
        messages = runtime.store.messages(session_id)
        assert len(messages) == 4 * TURNS
        fact_message = next(m for m in messages if FACT in m.message.content)
        assert fact_message.message.content == user_text(FACT_TURN)
        assert fact_message.id in [hit.message_id for hit in runtime.store.search("launch code")]
        # ...and once a summary has it, every later summary carries it forward.
        carried = ["4417-ALPHA" in c.summary for c in summaries]
        assert True in carried and all(carried[carried.index(True) :])

        # Asked about turn 3 now, the model finds it in its (compacted) request.
        events = run_turn(agent, session_id, QUESTION)
        answer = "".join(e.delta for e in events if e.type == "text")
        assert "4417-ALPHA" in answer
        assert "4417-ALPHA" in str(fake_llm.last_request.json["messages"])
    finally:
        runtime.close()


def test_a_forgetful_summary_still_leaves_search_memory(make_config, fake_llm, wire, workspace):
    """When the summary lost the fact, the model gets it back through search_memory."""
    turns = 30
    write_files(workspace, turns)
    fake_llm.context_window = WINDOW
    script = LongSession(wire)

    def forgetful(body):
        reply = script(body)
        if reply is not None and "## Facts to keep" in reply.text:
            return type(reply)(text=reply.text.split("## Facts to keep")[0] + "## Facts to keep\n")
        return reply

    fake_llm.responder = forgetful
    runtime = make_runtime(make_config, fake_llm, wire)
    try:
        agent = runtime.agent()
        session_id = runtime.store.create_session().id
        for turn in range(1, turns + 1):
            run_turn(agent, session_id, user_text(turn))
        compaction = runtime.store.latest_compaction(session_id)
        assert compaction is not None and compaction.summary
        assert "4417-ALPHA" not in compaction.summary

        events = run_turn(agent, session_id, QUESTION)
        calls = [e for e in events if e.type == "tool_call"]
        results = [e for e in events if e.type == "tool_result"]
        assert [c.name for c in calls] == ["search_memory"]
        assert "4417-ALPHA" in results[0].output
        assert "4417-ALPHA" in "".join(e.delta for e in events if e.type == "text")
    finally:
        runtime.close()


def _run_session(make_config, fake_llm, wire, turns: int, *, restart_every_turn: bool):
    """Run ``turns`` turns, in one Runtime or in a fresh Runtime (a new process's
    state) for every turn. Returns the raw bodies of all the loop's requests."""
    fake_llm.reset()
    runtime = make_runtime(make_config, fake_llm, wire)
    session_id = runtime.store.create_session().id
    agent = runtime.agent()
    try:
        for turn in range(1, turns + 1):
            if restart_every_turn and turn > 1:
                runtime.close()
                runtime = make_runtime(make_config, fake_llm, wire)
                agent = runtime.agent()
            run_turn(agent, session_id, user_text(turn))
        return [r.body for r in fake_llm.requests if not is_summarizer(wire, r.json)]
    finally:
        runtime.close()


def test_after_a_restart_the_next_request_is_byte_identical(
    make_config, fake_llm, wire, workspace, tmp_path
):
    turns = 30
    write_files(workspace, turns)
    fake_llm.context_window = WINDOW
    fake_llm.responder = LongSession(wire)

    def config_in(name):
        home = tmp_path / name
        home.mkdir()

        def make(**overrides):
            return make_config(
                home=home, database_url=f"sqlite:///{home / 'hermes.db'}", **overrides
            )

        return make

    straight = _run_session(config_in("straight"), fake_llm, wire, turns, restart_every_turn=False)
    restarted = _run_session(config_in("restarted"), fake_llm, wire, turns, restart_every_turn=True)
    assert len(straight) == len(restarted) == 2 * turns
    for n, (a, b) in enumerate(zip(straight, restarted, strict=True)):
        assert a == b, f"request {n} differs after a restart"
    # The comparison is meaningful: the session was compacted and summarized on the way.
    assert b"conversation-summary" in restarted[-1]


def test_between_compactions_each_request_extends_the_previous_one(
    make_config, fake_llm, wire, workspace
):
    """The prompt cache keeps hitting: with no compaction in between, a request's
    messages begin with exactly the previous request's messages."""
    turns = 30
    write_files(workspace, turns)
    fake_llm.context_window = WINDOW
    script = LongSession(wire)
    seen = []  # (request body, compactions stored when it was sent)
    runtime = make_runtime(make_config, fake_llm, wire)
    session_id = runtime.store.create_session().id

    def recording(body):
        if not is_summarizer(wire, body):
            seen.append((body, len(runtime.store.compactions(session_id))))
        return script(body)

    fake_llm.responder = recording
    try:
        agent = runtime.agent()
        for turn in range(1, turns + 1):
            run_turn(agent, session_id, user_text(turn))
        pairs = list(zip(seen, seen[1:], strict=False))
        steady = [(a, b) for (a, na), (b, nb) in pairs if na == nb]
        for previous, current in steady:
            old, new = _uncached(previous["messages"]), _uncached(current["messages"])
            assert new[: len(old)] == old
        assert len(steady) > len(pairs) * 2 // 3
        assert len(steady) < len(pairs)  # compactions did happen in between
    finally:
        runtime.close()


def _uncached(messages):
    """Messages without Anthropic's cache_control marks (they move to the last block)."""
    out = []
    for message in messages:
        blocks = message["content"]
        if isinstance(blocks, list):
            blocks = [{k: v for k, v in b.items() if k != "cache_control"} for b in blocks]
        out.append({**message, "content": blocks})
    return out
