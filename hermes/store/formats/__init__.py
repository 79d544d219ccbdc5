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

__all__ = [
    "EXPORT_VERSION",
    "PARSERS",
    "BadConversation",
    "parse_chatgpt",
    "parse_claude",
    "parse_hermes",
]
