"""The gate in the real turn loop: the scripted model asks for dangerous things,
a thread plays the user, and the tool messages record every decision."""

from __future__ import annotations

import json
import stat
import threading
import time

import pytest

from hermes.approvals.gate import ApprovalDesk, Approvals, NobodyToAsk
from hermes.runtime import Runtime


@pytest.fixture
def make_runtime(make_config, fake_llm):
    made = []

    def make(**overrides):
        overrides.setdefault("approval_timeout", 20.0)
        rt = Runtime(
            make_config(**fake_llm.config_overrides("anthropic"), max_retries=1, **overrides)
        )
        made.append(rt)
        return rt

    yield make
    for rt in made:
        rt.close()


class User:
    """Answers each approval request the desk receives with the next scripted decision."""

    def __init__(self, desk: ApprovalDesk, decisions: list[str]):
        self.desk = desk
        self.decisions = list(decisions)
        self.seen = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.stop.is_set() and self.decisions:
            for request in self.desk.pending():
                self.seen.append(request)
                assert self.desk.answer(request.id, self.decisions.pop(0), turn_id=request.turn_id)
            time.sleep(0.02)


def turn(runtime, approvals, text="go", session_id=None):
    if session_id is None:
        session_id = runtime.store.create_session(source="cli").id
    events = list(runtime.agent(approvals).run_turn(session_id, text))
    return session_id, events


def tool_messages(runtime, session_id):
    return [m.message for m in runtime.store.messages(session_id) if m.message.role == "tool"]


def test_once_runs_the_command_after_the_approval_event(make_runtime, fake_llm, workspace):
    runtime = make_runtime()
    desk = ApprovalDesk()
    approvals = Approvals(runtime.config, desk)
    (workspace / "build").mkdir()
    fake_llm.reply(tool_calls=[("run_bash", {"command": "rm -rf build && echo gone"})])
    fake_llm.reply(text="Deleted.")
    user = User(desk, ["once"])
    session_id, events = turn(runtime, approvals)

    kinds = [e.type for e in events]
    assert kinds.index("tool_call") < kinds.index("approval") < kinds.index("tool_result")
    approval = next(e for e in events if e.type == "approval")
    assert approval.tool == "run_bash" and approval.input["command"] == "rm -rf build && echo gone"
    assert "recursively" in approval.reason
    assert user.seen[0].id == approval.id
    result = next(e for e in events if e.type == "tool_result")
    assert "gone" in result.output and not result.is_error
    assert result.approval["decision"] == "once" and result.approval["by"] == "user"
    assert not (workspace / "build").exists()
    [message] = tool_messages(runtime, session_id)
    assert message.approval["decision"] == "once"
    assert message.approval["what"] == "rm -rf build && echo gone"
    assert message.approval["at"].endswith("Z")


def test_deny_keeps_the_command_from_running_and_tells_the_model(make_runtime, fake_llm, workspace):
    runtime = make_runtime()
    desk = ApprovalDesk()
    (workspace / "keep").mkdir()
    fake_llm.reply(tool_calls=[("run_bash", {"command": "rm -rf keep"})])
    fake_llm.reply(text="OK, I left it.")
    User(desk, ["deny"])
    session_id, events = turn(runtime, Approvals(runtime.config, desk))
    assert (workspace / "keep").is_dir()
    result = next(e for e in events if e.type == "tool_result")
    assert result.is_error and "denied by the user" in result.output
    # The model saw the denial as the tool result.
    sent = json.dumps(fake_llm.requests[-1].json["messages"])
    assert "denied by the user" in sent
    [message] = tool_messages(runtime, session_id)
    assert message.approval["decision"] == "deny" and message.approval["by"] == "user"
    assert events[-1].stop_reason == "end_turn"


def test_session_approval_covers_the_rest_of_the_session_only(make_runtime, fake_llm, workspace):
    runtime = make_runtime()
    desk = ApprovalDesk()
    approvals = Approvals(runtime.config, desk)
    for name in ("a", "b", "c"):
        (workspace / name).mkdir()
    fake_llm.reply(tool_calls=[("run_bash", {"command": "rm -r a"})])
    fake_llm.reply(text="done")
    User(desk, ["session"])
    session_id, _ = turn(runtime, approvals)
    assert not (workspace / "a").exists()

    fake_llm.reply(tool_calls=[("run_bash", {"command": "rm -r b"})])
    fake_llm.reply(text="done")
    _, events = turn(runtime, approvals, session_id=session_id)
    assert "approval" not in [e.type for e in events]
    assert not (workspace / "b").exists()
    assert tool_messages(runtime, session_id)[-1].approval["by"] == "earlier decision"

    # Another session is asked again (and here times out: nobody answers).
    fast = Approvals(runtime.config.with_overrides(approval_timeout=0.3), desk)
    fast.sessions = approvals.sessions
    fake_llm.reply(tool_calls=[("run_bash", {"command": "rm -r c"})])
    fake_llm.reply(text="not done")
    other, events = turn(runtime, fast)
    assert "approval" in [e.type for e in events]
    assert (workspace / "c").is_dir()
    record = tool_messages(runtime, other)[-1].approval
    assert (record["decision"], record["by"]) == ("deny", "timeout")


def test_always_is_stored_privately_and_outlives_the_process(make_runtime, fake_llm, hermes_home):
    runtime = make_runtime()
    desk = ApprovalDesk()
    fake_llm.reply(tool_calls=[("run_bash", {"command": "git reset --hard"})])
    fake_llm.reply(text="reset")
    User(desk, ["always"])
    turn(runtime, Approvals(runtime.config, desk))
    stored = hermes_home / "approvals.json"
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600
    assert [g["rule"] for g in json.loads(stored.read_text())["always"]] == ["git-reset-hard"]

    # A fresh policy object (a new process) lets it through without asking anyone.
    fake_llm.reply(tool_calls=[("run_bash", {"command": "git reset --hard HEAD"})])
    fake_llm.reply(text="reset again")
    session_id, events = turn(runtime, Approvals(runtime.config, NobodyToAsk("no one")))
    assert "approval" not in [e.type for e in events]
    assert tool_messages(runtime, session_id)[-1].approval["decision"] == "always"


def test_three_denials_end_the_turn(make_runtime, fake_llm, workspace):
    runtime = make_runtime()
    for attempt in ("rm -rf x", "rm -r -f x", "find x -delete"):
        fake_llm.reply(tool_calls=[("run_bash", {"command": attempt})])
    fake_llm.reply(tool_calls=[("run_bash", {"command": "echo never asked"})])
    session_id, events = turn(runtime, Approvals(runtime.config, NobodyToAsk("chat -q")))
    assert len(fake_llm.requests) == 3, "no model call after the third denial"
    error = next(e for e in events if e.type == "error")
    assert "3 actions were denied" in error.message
    assert events[-1].stop_reason == "error"
    assert len(tool_messages(runtime, session_id)) == 3


def test_forbidden_never_reaches_a_shell_even_in_auto(make_runtime, fake_llm, workspace):
    runtime = make_runtime(approvals="auto")
    fake_llm.reply(tool_calls=[("run_bash", {"command": "touch ran; rm -rf /"})])
    fake_llm.reply(tool_calls=[("run_bash", {"command": "touch ran2; rm -rf build"})])
    fake_llm.reply(text="ok")
    session_id, events = turn(runtime, Approvals(runtime.config, NobodyToAsk("x")))
    assert not (workspace / "ran").exists()
    assert (workspace / "ran2").exists(), "auto runs dangerous commands"
    first, second = tool_messages(runtime, session_id)
    assert first.is_error and "forbidden" in first.content
    assert first.approval["decision"] == "refused" and first.approval["level"] == "forbidden"
    assert second.approval["decision"] == "auto"


def test_deny_mode_refuses_without_asking(make_runtime, fake_llm, workspace):
    runtime = make_runtime(approvals="deny")
    desk = ApprovalDesk()
    fake_llm.reply(tool_calls=[("run_bash", {"command": "touch ran && git clean -fdx"})])
    fake_llm.reply(text="ok")
    session_id, events = turn(runtime, Approvals(runtime.config, desk))
    assert "approval" not in [e.type for e in events]
    assert not (workspace / "ran").exists()
    assert "HERMES_APPROVALS=deny" in tool_messages(runtime, session_id)[0].content


def test_file_tools_ask_before_changing_files_the_turn_did_not_create(
    make_runtime, fake_llm, workspace
):
    runtime = make_runtime()
    desk = ApprovalDesk()
    (workspace / "old.txt").write_text("precious\n")
    fake_llm.reply(
        tool_calls=[
            ("write_file", {"path": "new.txt", "content": "one"}),
            ("write_file", {"path": "new.txt", "content": "two"}),
            ("write_file", {"path": "old.txt", "content": "overwritten"}),
            ("edit_file", {"path": "old.txt", "old": "precious", "new": "gone"}),
        ]
    )
    fake_llm.reply(text="done")
    user = User(desk, ["deny", "deny"])
    _, events = turn(runtime, Approvals(runtime.config, desk))
    approvals = [e for e in events if e.type == "approval"]
    assert [a.tool for a in approvals] == ["write_file", "edit_file"]
    assert "old.txt" in approvals[0].reason
    assert (workspace / "new.txt").read_text() == "two"
    assert (workspace / "old.txt").read_text() == "precious\n"
    assert len(user.seen) == 2


def test_an_agent_without_approvals_denies_dangerous_commands(make_runtime, fake_llm, workspace):
    runtime = make_runtime()
    fake_llm.reply(tool_calls=[("run_bash", {"command": "touch ran && sudo true"})])
    fake_llm.reply(text="ok")
    session_id, _ = turn(runtime, None)
    assert not (workspace / "ran").exists()
    assert tool_messages(runtime, session_id)[0].approval["by"] == "policy"


def test_a_cancelled_turn_stops_waiting(make_runtime, fake_llm):
    runtime = make_runtime()
    desk = ApprovalDesk()
    fake_llm.reply(tool_calls=[("run_bash", {"command": "sudo ls"})])
    cancel = threading.Event()
    session_id = runtime.store.create_session(source="cli").id
    started = time.monotonic()
    events = []
    for event in runtime.agent(Approvals(runtime.config, desk)).run_turn(
        session_id, "go", cancel=cancel
    ):
        events.append(event)
        if event.type == "approval":
            threading.Timer(0.2, cancel.set).start()
    assert time.monotonic() - started < 60
    assert events[-1].stop_reason == "cancelled"
    assert tool_messages(runtime, session_id)[0].approval["by"] == "cancelled"
