"""Keep tool output small and printable.

Tool output goes to the model and to terminals, so it is bounded (the head and
the tail survive, with a visible marker between them) and stripped of control
characters that would redraw a terminal or confuse a tokenizer.
"""

from __future__ import annotations

from hermes.text import printable


def marker(dropped: int, unit: str = "characters") -> str:
    """The line that stands in for the middle of a truncated output."""
    return f"\n[... {dropped} {unit} truncated ...]\n"


def clean_text(text: str) -> str:
    """Drop escape sequences and control characters; keep newlines and tabs.

    Carriage returns become newlines so progress bars read as successive lines
    instead of overwriting each other.
    """
    return printable(text.replace("\r\n", "\n").replace("\r", "\n"))


def truncate_middle(text: str, limit: int) -> str:
    """Return ``text`` if it fits in ``limit`` characters, else its head and tail around a marker."""
    if len(text) <= limit:
        return text
    head = limit // 2
    tail = limit - head
    dropped = len(text) - head - tail
    return text[:head] + marker(dropped) + (text[-tail:] if tail else "")


class HeadTailBuffer:
    """Collect a byte stream keeping at most ``limit`` bytes: the first half and the last half.

    Memory stays bounded however much the producer writes; ``total`` counts
    everything that went through.
    """

    def __init__(self, limit: int):
        self.head_limit = limit // 2
        self.tail_limit = limit - self.head_limit
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def write(self, data: bytes) -> None:
        self.total += len(data)
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if not data:
            return
        if len(data) >= self.tail_limit:
            self.tail = (
                bytearray(data[len(data) - self.tail_limit :]) if self.tail_limit else bytearray()
            )
        else:
            self.tail += data
            excess = len(self.tail) - self.tail_limit
            if excess > 0:
                del self.tail[:excess]

    @property
    def dropped(self) -> int:
        return self.total - len(self.head) - len(self.tail)

    def text(self) -> str:
        """Decode (UTF-8, bad bytes replaced), clean, and mark the gap if anything was dropped."""
        if not self.dropped:
            return clean_text(bytes(self.head + self.tail).decode("utf-8", errors="replace"))
        head = clean_text(self.head.decode("utf-8", errors="replace"))
        tail = clean_text(self.tail.decode("utf-8", errors="replace"))
        return head + marker(self.dropped, "bytes") + tail
