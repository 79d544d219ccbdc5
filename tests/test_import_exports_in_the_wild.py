"""Exports as users download them: zipped, edited since the last import, or the
other service's. Driven through the real ``hermes import``."""

from __future__ import annotations

import copy
import json
import zipfile
from pathlib import Path

import pytest

from tests.helpers import clean_environ, run_hermes

DATA = Path(__file__).parent / "data"
CHATGPT = DATA / "chatgpt_conversations.json"


@pytest.fixture
def hermes(hermes_home: Path, tmp_path: Path):
    env = clean_environ(HERMES_HOME=str(hermes_home), HERMES_WORKSPACE=str(tmp_path))

    def run(*args: str):
        return run_hermes(list(args), env=env, cwd=tmp_path)

    return run


def node(node_id: str, parent: str, role: str, text: str, children: list[str]) -> dict:
    return {
        "id": node_id,
        "parent": parent,
        "children": children,
        "message": {
            "id": node_id,
            "author": {"role": role},
            "create_time": 1709290000.0,
            "content": {"content_type": "text", "parts": [text]},
        },
    }


def edited_export(tmp_path: Path, *, longer: bool) -> Path:
    """The same export after the user edited their second question in ChatGPT."""
    conversations = json.loads(CHATGPT.read_text())
    nginx = copy.deepcopy(conversations[0])
    mapping = nginx["mapping"]
    mapping["n-assistant-1"]["children"].append("n-user-2c")
    mapping["n-user-2c"] = node(
        "n-user-2c", "n-assistant-1", "user", "Edited: what about websockets?", ["n-assistant-2c"]
    )
    last = "n-assistant-2c"
    mapping[last] = node(last, "n-user-2c", "assistant", "Add the Upgrade headers.", [])
    if longer:
        mapping[last]["children"] = ["n-user-3c"]
        mapping["n-user-3c"] = node("n-user-3c", last, "user", "Thanks!", ["n-assistant-3c"])
        mapping["n-assistant-3c"] = node(
            "n-assistant-3c", "n-user-3c", "assistant", "Any time.", []
        )
        last = "n-assistant-3c"
    nginx["current_node"] = last
    conversations[0] = nginx
    path = tmp_path / f"newer-{longer}.json"
    path.write_text(json.dumps(conversations))
    return path


@pytest.mark.parametrize("longer", [True, False])
def test_an_edited_conversation_is_reported_as_diverged(hermes, tmp_path, longer):
    assert hermes("import", "chatgpt", str(CHATGPT)).returncode == 0
    result = hermes("import", "chatgpt", str(edited_export(tmp_path, longer=longer)))
    assert result.returncode == 0, result.stderr
    assert "skipped 1 already present" in result.stdout
    assert "diverged: 'Nginx reverse proxy help' was edited in the other tool" in result.stdout
    sessions = json.loads(hermes("sessions", "--json").stdout)
    assert sorted(s["message_count"] for s in sessions) == [2, 4]  # nothing rewritten


def test_the_chatgpt_zip_download_is_read_directly(hermes, tmp_path):
    download = tmp_path / "chatgpt-export.zip"
    with zipfile.ZipFile(download, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("chat.html", "<html></html>")
        zf.write(CHATGPT, "conversations.json")
        zf.writestr("user.json", "{}")
    result = hermes("import", "chatgpt", str(download))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == (
        "imported 2 conversations, 6 messages; skipped 0 already present"
    )
    empty_zip = tmp_path / "photos.zip"
    with zipfile.ZipFile(empty_zip, "w") as zf:
        zf.writestr("a.txt", "x")
    refused = hermes("import", "chatgpt", str(empty_zip))
    assert refused.returncode == 1 and "without a conversations.json" in refused.stderr


def test_importing_a_file_as_the_wrong_service_says_which_it_is(hermes):
    result = hermes("import", "claude", str(CHATGPT))
    assert result.returncode == 1
    assert "this looks like a ChatGPT export" in result.stderr
    assert "hermes import chatgpt" in result.stderr
    other = hermes("import", "chatgpt", str(DATA / "claude_conversations.json"))
    assert other.returncode == 1 and "looks like a Claude export" in other.stderr
    assert json.loads(hermes("sessions", "--json").stdout) == []


def test_counts_read_as_english(hermes, tmp_path):
    one = tmp_path / "one.json"
    one.write_text(json.dumps(json.loads(CHATGPT.read_text())[1:]))
    result = hermes("import", "chatgpt", str(one))
    assert result.stdout.startswith("imported 1 conversation, 2 messages;"), result.stdout
