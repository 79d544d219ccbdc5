"""A content guard for text that reaches a prompt from somewhere other than the user's turn.

Profile memory entries and imported skills are read by the model on every
session, so text planted there (by a web page the agent read, or a skill file
from the internet) is a standing instruction. :func:`scan` looks for the
common shapes of that: instruction overrides, fake role markers, commands
that send secrets off the machine, and invisible Unicode that hides text from
the person reviewing it. It is a tripwire, not a proof of safety: a hit means
"show this to the user instead of the model".
"""

from __future__ import annotations

import re
import unicodedata

_OVERRIDE = re.compile(
    r"\b(?:ignore|disregard|forget|override|bypass)\b[\s,]+(?:all\s+|any\s+|the\s+|of\s+)*"
    r"(?:previous|prior|above|earlier|preceding|your|system|existing|original)\s+"
    r"(?:instructions?|prompts?|rules|directions|directives|guidelines|messages|context)",
    re.IGNORECASE,
)
_OVERRIDE_PHRASES = re.compile(
    r"\b(?:you\s+are\s+now\s+(?:in\s+)?(?:dan|developer\s+mode|jailbroken|unrestricted)"
    r"|new\s+system\s+prompt|(?:reveal|print|repeat)\s+(?:your|the)\s+system\s+prompt"
    r"|do\s+not\s+(?:tell|inform|mention\s+(?:this\s+)?to)\s+the\s+user)\b",
    re.IGNORECASE,
)
_ROLE_MARKER = re.compile(
    r"<\|(?:im_start|im_end|system|assistant|user|endoftext)\|>|\[/?INST\]|<</?SYS>>"
    r"|</?(?:system|assistant)>|^\s*#{0,4}\s*(?:system|developer)\s*(?:prompt)?\s*:",
    re.IGNORECASE | re.MULTILINE,
)
_NETWORK = re.compile(
    r"\b(?:curl|wget|nc|ncat|netcat|scp|rsync|sftp|ftp|telnet|socat|Invoke-WebRequest"
    r"|Invoke-RestMethod|requests\.post)\b",
    re.IGNORECASE,
)
_SECRET = re.compile(
    r"\$\{?[A-Z0-9_]*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL)[A-Z0-9_]*\}?"
    r"|\bprintenv\b|\benv\s*\||\$\(\s*env\s*\)|/proc/self/environ"
    r"|~/\.ssh|\.ssh/|id_rsa|id_ed25519|(?:^|[\s/'\"=@<])\.env\b|\.aws/credentials"
    r"|\.netrc|/etc/(?:passwd|shadow)|\.git-credentials",
    re.IGNORECASE | re.MULTILINE,
)
# Zero-width and bidi controls, soft hyphen, fillers that render as nothing,
# interlinear annotations, and the tag and variation-selector blocks that can
# smuggle whole sentences past a reader (U+FE0F, the emoji selector, is fine).
_INVISIBLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f"
    "\u202a-\u202e\u2060-\u2064\u2066-\u206f\u3164\ufeff\uffa0\ufff9-\ufffb"
    "\U0001d173-\U0001d17a\U000e0000-\U000e007f\U000e0100-\U000e01ef]"
)


def scan(text: str) -> list[str]:
    """Reasons ``text`` looks like prompt injection or exfiltration; empty when clean."""
    if not text:
        return []
    reasons = []
    # Fullwidth and other compatibility forms ("ｉｇｎｏｒｅ") read as plain letters.
    folded = unicodedata.normalize("NFKC", text)
    for pattern in (_OVERRIDE, _OVERRIDE_PHRASES):
        match = pattern.search(text) or pattern.search(folded)
        if match:
            reasons.append(f"instruction override ({_quote(match.group(0))})")
            break
    match = _ROLE_MARKER.search(text) or _ROLE_MARKER.search(folded)
    if match:
        reasons.append(f"role marker ({_quote(match.group(0))})")
    for line in _command_lines(folded):
        network = _NETWORK.search(line)
        secret = _SECRET.search(line)
        if network and secret:
            reasons.append(
                f"secret exfiltration ({network.group(0)} with {_quote(secret.group(0))})"
            )
            break
    hidden = sorted({char for char in _INVISIBLE.findall(text)})
    if hidden:
        names = ", ".join(f"U+{ord(c):04X} {unicodedata.name(c, 'TAG')}" for c in hidden[:3])
        reasons.append(f"invisible Unicode ({names})")
    return reasons


def _command_lines(text: str) -> list[str]:
    # A command and its secret usually share a line; `cat .env | curl` spans a pipe.
    return [line for line in text.splitlines() if line.strip()]


def _quote(fragment: str) -> str:
    fragment = " ".join(fragment.split())
    return repr(fragment[:60])
