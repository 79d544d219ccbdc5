"""The OpenAI ``/v1/embeddings`` wire format for the scripted server, with
deterministic vectors: a hashed bag of words (each lowercase word adds +1 or -1
to a few of ``DIM`` components chosen by its SHA-256), so texts sharing words
are similar and the same text always gets the same vector, in any process.

A request whose model is ``"broken-model"`` gets a 404 like a server without it.
"""

from __future__ import annotations

import base64
import hashlib
import re
import struct
from typing import Any

DIM = 64
_WORD = re.compile(r"\w+")


def vector(text: str, dim: int = DIM) -> list[float]:
    out = [0.0] * dim
    for word in _WORD.findall(text.lower()):
        digest = hashlib.sha256(word.encode("utf-8")).digest()
        for n in range(3):
            index = digest[n] % dim
            out[index] += 1.0 if digest[n + 3] & 1 else -1.0
    if not any(out):
        out[0] = 1e-3  # a real model never returns an all-zero vector either
    return out


def respond(body: Any) -> tuple[int, dict[str, Any]]:
    """(status, JSON payload) for one embeddings request body."""
    if not isinstance(body, dict) or "input" not in body:
        return 400, {"error": {"message": "fake LLM: embeddings need 'input'", "type": "invalid"}}
    model = body.get("model") or "fake-embedding"
    if model == "broken-model":
        return 404, {"error": {"message": f"model {model!r} not found", "type": "not_found"}}
    texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
    if not all(isinstance(t, str) and t for t in texts):
        return 400, {"error": {"message": "fake LLM: every input must be a non-empty string"}}
    data = []
    for index, text in enumerate(texts):
        values = vector(text)
        if body.get("encoding_format") == "base64":
            encoded: Any = base64.b64encode(struct.pack(f"<{len(values)}f", *values)).decode()
        else:
            encoded = values
        data.append({"object": "embedding", "index": index, "embedding": encoded})
    tokens = sum(len(_WORD.findall(t)) for t in texts)
    return 200, {
        "object": "list",
        "model": model,
        "data": data,
        "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
    }
