"""Parsers for the conversation exports ``hermes import`` reads: one module per format.

Each parser takes one decoded conversation (any JSON value: the file is
hostile input) and returns a checked ``SessionRecord`` or raises
``BadConversation`` saying what is wrong with it.
"""

from hermes.store.formats.chatgpt import parse_chatgpt
from hermes.store.formats.claude import parse_claude
from hermes.store.formats.common import BadConversation
from hermes.store.formats.hermes_json import EXPORT_VERSION, parse_hermes

PARSERS = {"chatgpt": parse_chatgpt, "claude": parse_claude, "hermes": parse_hermes}


def detect_format(item: object) -> str | None:
    """Which export one conversation comes from, by the keys only that format has."""
    if not isinstance(item, dict):
        return None
    if "hermes_export" in item:
        return "hermes"
    if isinstance(item.get("mapping"), dict):
        return "chatgpt"
    if isinstance(item.get("chat_messages"), list):
        return "claude"
    return None


__all__ = [
    "EXPORT_VERSION",
    "PARSERS",
    "BadConversation",
    "detect_format",
    "parse_chatgpt",
    "parse_claude",
    "parse_hermes",
]
