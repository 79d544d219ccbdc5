from pathlib import Path

import pytest

from hermes.atomic import replacing, write_text


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path):
    target = tmp_path / "notes.md"
    target.write_text("old\n")
    with pytest.raises(RuntimeError), replacing(target) as handle:
        handle.write("half of the new")
        raise RuntimeError("disk pulled out")
    assert target.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.md"]


def test_write_text_creates_folders_and_keeps_modes_when_asked(tmp_path: Path):
    target = tmp_path / "a" / "b.txt"
    write_text(target, "hello\n")
    assert target.read_text() == "hello\n"
    with replacing(target, binary=True, mode=0o600) as handle:
        handle.write(b"bytes\n")
    assert target.read_bytes() == b"bytes\n"
    assert target.stat().st_mode & 0o777 == 0o600
