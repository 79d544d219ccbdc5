"""Read a top-level JSON array one element at a time, without loading the file.

ChatGPT and Claude exports are one big ``[ {...}, {...} ]``; a few years of
chats can be hundreds of megabytes. This reads the file in chunks and lets the
stdlib decoder (``raw_decode``) parse each element as soon as it is complete.
"""

from __future__ import annotations

import codecs
import json
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from hermes.errors import ImportFileError

CHUNK = 1 << 16
_WHITESPACE = " \t\n\r"


def iter_json_array(
    path: Path,
    *,
    on_progress: Callable[[int], None] | None = None,
    chunk_size: int = CHUNK,
) -> Iterator[tuple[int, Any]]:
    """Yield ``(index, element)`` for each element of the array in ``path``.

    ``on_progress`` gets the number of bytes read so far. Raises
    ImportFileError naming the element when the JSON is broken.
    """
    reader = _Reader(path, chunk_size, on_progress)
    with reader:
        first = reader.next_char()
        if first == "":
            raise ImportFileError(
                f"{path.name} is empty, not a JSON array of conversations; use the "
                "conversations.json from the export as it was downloaded."
            )
        if first != "[":
            raise ImportFileError(
                f"{path.name} is not a JSON array: expected a list of conversations "
                "starting with '['. Is this the conversations.json from the export?"
            )
        reader.pos += 1
        if reader.next_char() == "]":
            reader.pos += 1
            reader.expect_end()
            return
        index = 0
        while True:
            yield index, reader.decode(index)
            separator = reader.next_char()
            if separator == "":
                raise reader.truncated(index + 1)
            reader.pos += 1
            if separator == "]":
                reader.expect_end()
                return
            if separator != ",":
                raise reader.error(index, f"expected ',' or ']' after element, found {separator!r}")
            index += 1


EXPORT_MEMBER = "conversations.json"


def open_export(path: Path) -> BinaryIO:
    """The export's bytes: the file itself, or ``conversations.json`` inside a zip
    (ChatGPT and Claude offer their data as a zip download)."""
    try:
        if not zipfile.is_zipfile(path):
            return open(path, "rb")
        archive = zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise ImportFileError(f"Cannot read {path}: {reason}.") from None
    member = _export_member(archive, path)
    try:
        return _Member(archive, archive.open(member))
    except (RuntimeError, NotImplementedError, zipfile.BadZipFile) as exc:
        archive.close()
        raise ImportFileError(f"Cannot read {member.filename} in {path.name}: {exc}.") from None


class _Member:
    """A file inside a zip that closes the zip with it."""

    def __init__(self, archive: zipfile.ZipFile, handle: BinaryIO):
        self.archive = archive
        self.handle = handle

    def read(self, size: int = -1) -> bytes:
        try:
            return self.handle.read(size)
        except (zipfile.BadZipFile, EOFError, OSError) as exc:
            raise ImportFileError(f"The zip is damaged: {exc}.") from None

    def close(self) -> None:
        self.handle.close()
        self.archive.close()


def export_size(path: Path) -> int:
    """How many bytes :func:`open_export` will give (for progress bars)."""
    try:
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as archive:
                return _export_member(archive, path).file_size
        return path.stat().st_size
    except (OSError, zipfile.BadZipFile):
        return 0


def _export_member(archive: zipfile.ZipFile, path: Path) -> zipfile.ZipInfo:
    found = [
        info
        for info in archive.infolist()
        if not info.is_dir() and info.filename.replace("\\", "/").split("/")[-1] == EXPORT_MEMBER
    ]
    if not found:
        archive.close()
        raise ImportFileError(
            f"{path.name} is a zip without a {EXPORT_MEMBER}; give the data export zip as "
            f"downloaded, or the {EXPORT_MEMBER} from it."
        )
    # The top-level one if there are several (a zip of zips' folders, say).
    return min(found, key=lambda info: (info.filename.count("/"), info.filename))


class _Reader:
    def __init__(self, path: Path, chunk_size: int, on_progress):
        self.path = path
        self.chunk_size = chunk_size
        self.on_progress = on_progress
        self.decoder = json.JSONDecoder()
        self.utf8 = codecs.getincrementaldecoder("utf-8-sig")(errors="strict")
        self.buffer = ""
        self.pos = 0
        self.offset = 0  # characters dropped from the front of the buffer
        self.bytes_read = 0
        self.eof = False

    def __enter__(self):
        self.file = open_export(self.path)  # closed in __exit__
        return self

    def __exit__(self, *exc):
        self.file.close()

    def fill(self, at_least: int) -> bool:
        """Read more text; False at end of file."""
        if self.eof:
            return False
        if self.pos > len(self.buffer) // 2:
            # Drop what has been consumed so the buffer does not grow with the file.
            self.offset += self.pos
            self.buffer = self.buffer[self.pos :]
            self.pos = 0
        raw = self.file.read(max(self.chunk_size, at_least))
        self.bytes_read += len(raw)
        try:
            self.buffer += self.utf8.decode(raw, final=not raw)
        except UnicodeDecodeError:
            raise ImportFileError(
                f"{self.path.name} is not UTF-8 text near byte {self.bytes_read}; "
                "use the conversations.json from the export as it was downloaded."
            ) from None
        if self.on_progress:
            self.on_progress(self.bytes_read)
        if not raw:
            self.eof = True
        return bool(raw)

    def next_char(self) -> str:
        """Skip whitespace; the next character without consuming it ('' at end)."""
        while True:
            while self.pos < len(self.buffer) and self.buffer[self.pos] in _WHITESPACE:
                self.pos += 1
            if self.pos < len(self.buffer):
                return self.buffer[self.pos]
            if not self.fill(0):
                return ""

    def decode(self, index: int) -> Any:
        if self.next_char() == "":
            raise self.truncated(index)
        while True:
            try:
                value, end = self.decoder.raw_decode(self.buffer, self.pos)
            except json.JSONDecodeError as exc:
                # Probably just incomplete: read more (doubling, so a huge
                # element costs O(n log n), not O(n^2)) and try again.
                if self.fill(len(self.buffer) - self.pos):
                    continue
                if _cut_short(exc, self.buffer):
                    raise self.truncated(index) from None
                raise self.error(index, f"{exc.msg} (character {self.offset + exc.pos})") from None
            except RecursionError:
                # "[[[[..." hundreds of thousands deep: the decoder recurses per level.
                raise self.error(index, "it is nested too deeply") from None
            # A number cut at the chunk edge ("7" of "7.5") decodes "successfully";
            # it is only complete once a separator follows it.
            scalar = not isinstance(value, dict | list | str)
            cut = end == len(self.buffer) or self.buffer[end] not in _WHITESPACE + ",]"
            if scalar and cut and self.fill(0):
                continue
            self.pos = end
            return value

    def expect_end(self) -> None:
        if self.next_char() != "":
            raise ImportFileError(
                f"{self.path.name} has data after the closing ']' "
                f"(at character {self.offset + self.pos})."
            )

    def truncated(self, index: int) -> ImportFileError:
        return ImportFileError(
            f"{self.path.name} ends too soon, at conversation {index} (truncated?); "
            "download the export again. Nothing was imported."
        )

    def error(self, index: int, problem: str) -> ImportFileError:
        return ImportFileError(
            f"{self.path.name}: conversation {index} is not valid JSON: {problem}. "
            "Nothing was imported."
        )


def _cut_short(exc: json.JSONDecodeError, text: str) -> bool:
    """Whether the decoder failed only because the text stopped (at end of file)."""
    # An open string is reported where it starts; everything else where it stopped.
    return exc.msg.startswith("Unterminated string") or exc.pos >= len(text.rstrip())
