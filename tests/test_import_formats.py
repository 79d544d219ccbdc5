"""Imports of realistic, messy exports: what real ChatGPT and Claude files hold,
newer exports of conversations already imported, and broken files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hermes.errors import ImportFileError
from hermes.store.formats.common import MAX_TITLE, BadConversation, fingerprint
from hermes.store.importers import import_file


def _write(tmp_path: Path, content, name: str = "conversations.json") -> Path:
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    return path


def _node(node_id, parent, children, role=None, content=None, created=None, **extra):
    message = None
    if role is not None:
        message = {
            "id": node_id,
            "author": {"role": role, "name": None, "metadata": {}},
            "create_time": created,
            "content": content,
            "status": "finished_successfully",
            "weight": 1.0,
            "metadata": extra.pop("metadata", {}),
            "recipient": extra.pop("recipient", "all"),
        }
    return node_id, {"id": node_id, "message": message, "parent": parent, "children": children}


def _text(*parts):
    return {"content_type": "text", "parts": list(parts)}


def _chatgpt(nodes, current, **fields):
    return {
        "id": "conv-1",
        "conversation_id": "conv-1",
        "title": "Debugging",
        "create_time": 1700000000.0,
        "update_time": 1700000100.0,
        "mapping": dict(nodes),
        "current_node": current,
        **fields,
    }


def _realistic_chatgpt():
    """Image pointers, code and its output, browsing, a hidden system node and
    a first assistant reply without a time, as ChatGPT writes them."""
    return [
        _node("root", None, ["sys"]),
        _node(
            "sys",
            "root",
            ["u1"],
            "system",
            _text(""),
            metadata={"is_visually_hidden_from_conversation": True},
        ),
        _node(
            "u1",
            "sys",
            ["a1"],
            "user",
            {
                "content_type": "multimodal_text",
                "parts": [
                    {"content_type": "image_asset_pointer", "asset_pointer": "file-service://x"},
                    "What is in this image? 🐱",
                ],
            },
            1700000010.0,
        ),
        _node("a1", "u1", ["code"], "assistant", _text("A cat."), None),
        _node(
            "code",
            "a1",
            ["out"],
            "assistant",
            {"content_type": "code", "language": "python", "text": "print(6 * 7)"},
            1700000020.0,
            recipient="python",
        ),
        _node(
            "out",
            "code",
            ["a2"],
            "tool",
            {"content_type": "execution_output", "text": "42"},
            1700000021.0,
        ),
        _node("a2", "out", [], "assistant", _text("It prints 42."), 1700000022.0),
    ]


def test_realistic_chatgpt_conversation(store, tmp_path):
    import_file(store, "chatgpt", _write(tmp_path, [_chatgpt(_realistic_chatgpt(), "a2")]))
    [session] = store.list_sessions()[0]
    stored = store.messages(session.id)
    assert [s.message.content for s in stored] == [
        "What is in this image? 🐱",
        "A cat.",
        "```python\nprint(6 * 7)\n```",
        "It prints 42.",
    ]
    times = [s.created_at for s in stored]
    # The untimed reply sits right after the message before it, not back at the start.
    assert times == sorted(times) and times[1] == times[0]


def test_a_conversation_without_any_times_imports(store, tmp_path):
    nodes = [
        _node("u", None, ["a"], "user", _text("no clock here"), None),
        _node("a", "u", [], "assistant", _text("none at all"), None),
    ]
    conv = _chatgpt(nodes, "a", create_time=None, update_time=None)
    assert import_file(store, "chatgpt", _write(tmp_path, [conv])).messages == 2


def test_newer_export_adds_only_the_new_messages(store, tmp_path):
    nodes = _realistic_chatgpt()
    import_file(store, "chatgpt", _write(tmp_path, [_chatgpt(nodes, "a2")]))
    [session] = store.list_sessions()[0]

    mapping = dict(nodes)
    mapping["a2"] = {**mapping["a2"], "children": ["u3"]}
    later = [
        *mapping.items(),
        _node("u3", "a2", ["a3"], "user", _text("And 7 * 8?"), 1700000200.0),
        _node("a3", "u3", [], "assistant", _text("56."), 1700000201.0),
    ]
    newer = _write(tmp_path, [_chatgpt(later, "a3", update_time=1700000201.0)], "newer.json")
    result = import_file(store, "chatgpt", newer)
    assert (result.conversations, result.extended, result.messages, result.skipped) == (0, 1, 2, 0)
    assert "added new messages to 1" in result.summary()
    [same] = store.list_sessions()[0]
    assert same.id == session.id and same.message_count == 6
    assert [m.content for m in store.history(session.id)][-2:] == ["And 7 * 8?", "56."]
    assert same.updated_at > session.updated_at
    assert store.search("7 * 8")[0].session_id == session.id
    again = import_file(store, "chatgpt", newer)
    assert (again.extended, again.skipped, again.messages) == (0, 1, 0)


def test_a_diverged_conversation_is_left_alone(store, tmp_path):
    nodes = _realistic_chatgpt()
    import_file(store, "chatgpt", _write(tmp_path, [_chatgpt(nodes, "a2")]))
    [session] = store.list_sessions()[0]
    before = store.history(session.id)
    # The user edited their first question in ChatGPT and carried on from there.
    edited = dict(nodes)
    edited["sys"] = {**edited["sys"], "children": ["u1", "e1"]}
    edited.update(
        [
            _node("e1", "sys", ["e2"], "user", _text("Edited question"), 1700000300.0),
            _node("e2", "e1", ["e3"], "assistant", _text("Edited answer"), 1700000301.0),
            _node("e3", "e2", ["e4"], "user", _text("more"), 1700000302.0),
            _node("e4", "e3", ["e5"], "assistant", _text("more still"), 1700000303.0),
            _node("e5", "e4", [], "user", _text("and more"), 1700000304.0),
        ]
    )
    result = import_file(
        store, "chatgpt", _write(tmp_path, [_chatgpt(edited.items(), "e5")], "e.json")
    )
    assert (result.extended, result.skipped, result.messages) == (0, 0, 0)
    assert len(result.diverged) == 1 and "diverged" in result.summary()
    assert store.history(session.id) == before


def test_claude_attachments_files_and_untimed_messages(store, tmp_path):
    conv = {
        "uuid": "c-1",
        "name": "Release plan ✨",
        "created_at": "2024-05-01T10:00:00Z",
        "updated_at": "2024-05-01T10:05:00Z",
        "chat_messages": [
            {
                "sender": "human",
                "text": "",
                "content": [{"type": "text", "text": "Read my notes"}],
                "created_at": "2024-05-01T10:00:01Z",
                "attachments": [
                    {"file_name": "notes.txt", "extracted_content": "ship on ```friday```"}
                ],
                "files": [{"file_name": "diagram.png"}],
            },
            {
                "sender": "assistant",
                "text": "",
                "content": [
                    {"type": "text", "text": "Let me look."},
                    {"type": "tool_use", "name": "web_search", "input": {"q": "x"}},
                    {"type": "tool_result", "content": [{"type": "text", "text": "noise"}]},
                    {"type": "text", "text": "Friday it is."},
                ],
                "created_at": "2024-05-01T10:00:05Z",
            },
            {"sender": "human", "text": "", "files": [{"file_name": "photo.jpg"}]},
            {"sender": "assistant", "content": [{"type": "thinking", "thinking": "hmm"}]},
        ],
    }
    result = import_file(store, "claude", _write(tmp_path, [conv]))
    assert (result.conversations, result.messages) == (1, 3)
    [session] = store.list_sessions()[0]
    stored = store.messages(session.id)
    first, second, third = (s.message.content for s in stored)
    assert first.startswith("Read my notes\n\n[Attachment: notes.txt]\n````\nship on ```friday")
    assert first.endswith("[File: diagram.png]")
    assert second == "Let me look.\n\nFriday it is."
    assert third == "[File: photo.jpg]"
    assert stored[2].created_at == stored[1].created_at  # no time: right after the one before
    assert store.search("friday notes")[0].message_id == stored[0].id


def test_long_titles_from_other_tools_are_cut(store, tmp_path):
    conv = _chatgpt(_realistic_chatgpt(), "a2", title="Cat 🐱\n" + "word " * 3000)
    import_file(store, "chatgpt", _write(tmp_path, [conv]))
    [session] = store.list_sessions()[0]
    assert len(session.title) == MAX_TITLE and session.title.endswith("…")
    assert "\n" not in session.title and session.title.startswith("Cat 🐱 word")


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b"", "is empty"),
        (b"  \n", "is empty"),
        (b'[{"uuid": "a", "name": "cut', "ends too soon, at conversation 0"),
        (b'[{"uuid": "a"}, {"uuid": "b", "chat_messages": [', "ends too soon, at conversation 1"),
        (b'[{"uuid": "a"}', "ends too soon, at conversation 1"),
        (b'{"uuid": "a"}', "not a JSON array"),
    ],
)
def test_empty_and_truncated_files_say_so(store, tmp_path, content, problem):
    path = tmp_path / "conversations.json"
    path.write_bytes(content)
    with pytest.raises(ImportFileError, match=problem) as caught:
        import_file(store, "claude", path)
    assert "\n" not in caught.value.message and " at at " not in caught.value.message
    assert store.list_sessions()[0] == []


def test_bom_and_non_utf8(store, tmp_path):
    conv = {"uuid": "b", "chat_messages": [{"sender": "human", "text": "café ☕"}]}
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps([conv], ensure_ascii=False).encode())
    assert import_file(store, "claude", path).messages == 1
    latin = tmp_path / "latin.json"
    latin.write_bytes('[{"uuid": "l", "name": "café"}]'.encode("latin-1"))
    with pytest.raises(ImportFileError, match="not UTF-8"):
        import_file(store, "claude", latin)


def test_a_conversation_too_deep_to_fingerprint_is_a_bad_conversation():
    deep: list = []
    for _ in range(100_000):  # built in Python: no file decoder would hand this over
        deep = [deep]
    with pytest.raises(BadConversation, match="nested too deeply"):
        fingerprint({"chat_messages": [], "extra": deep})
