"""The file tools on real files: confinement, binary refusal, atomic writes, caps."""

from __future__ import annotations

import os
import resource
import signal
from pathlib import Path

import pytest

from hermes.errors import ToolError
from hermes.tools.files import edit_file, list_dir, read_file, write_file
from hermes.tools.registry import Tool, ToolContext
from hermes.tools.search import search_files
from hermes.tools.workspace import resolve_in_workspace

SECRET = "TOP-SECRET-CONTENT"


@pytest.fixture
def ctx(make_config) -> ToolContext:
    return ToolContext(config=make_config())


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder next to the workspace holding a file the tools must never reach."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.txt").write_text(SECRET + "\n")
    return folder


def call(t: Tool, ctx: ToolContext, **arguments) -> str:
    """Call a tool the way the turn loop does: validate the arguments, then run it."""
    return t.function(ctx, **t.validate(arguments))


def refused(t: Tool, ctx: ToolContext, **arguments) -> str:
    with pytest.raises(ToolError) as raised:
        call(t, ctx, **arguments)
    return raised.value.message


# -- confinement -----------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    ["../outside/secret.txt", "sub/../../outside/secret.txt", "/etc/passwd", "~/.bashrc", "a\x00b"],
)
def test_paths_outside_the_workspace_are_refused(workspace, outside, path):
    with pytest.raises(ToolError) as raised:
        resolve_in_workspace(workspace, path, home=None)
    assert SECRET not in raised.value.message


def test_escape_message_names_the_workspace(workspace, outside):
    with pytest.raises(ToolError, match="outside the workspace") as raised:
        resolve_in_workspace(workspace, "../outside/secret.txt", home=None)
    assert f"HERMES_WORKSPACE={workspace.resolve()}" in raised.value.message


def test_paths_inside_are_resolved(workspace):
    (workspace / "sub").mkdir()
    assert resolve_in_workspace(workspace, "sub/../a.txt", home=None) == workspace / "a.txt"
    assert resolve_in_workspace(workspace, str(workspace / "sub"), home=None) == workspace / "sub"
    assert resolve_in_workspace(workspace, ".", home=None) == workspace
    assert (
        resolve_in_workspace(workspace, "new/dir/file.txt", home=None)
        == workspace / "new/dir/file.txt"
    )
    with pytest.raises(ToolError, match="does not exist"):
        resolve_in_workspace(workspace, "missing.txt", home=None, must_exist=True)


def test_workspace_reached_through_a_symlink_still_works(tmp_path, workspace):
    alias = tmp_path / "alias"
    alias.symlink_to(workspace)
    (workspace / "a.txt").write_text("x")
    assert resolve_in_workspace(alias, "a.txt", home=None) == workspace / "a.txt"


def test_symlinks_pointing_outside_are_refused_for_every_tool(ctx, workspace, outside):
    (workspace / "link.txt").symlink_to(outside / "secret.txt")
    (workspace / "linkdir").symlink_to(outside)
    (workspace / "dangling.txt").symlink_to(outside / "new.txt")
    attempts = [
        (read_file, {"path": "link.txt"}),
        (read_file, {"path": "linkdir/secret.txt"}),
        (write_file, {"path": "link.txt", "content": "overwritten"}),
        (write_file, {"path": "linkdir/new.txt", "content": "planted"}),
        (write_file, {"path": "dangling.txt", "content": "planted"}),
        (edit_file, {"path": "link.txt", "old": "TOP", "new": "BOTTOM"}),
        (list_dir, {"path": "linkdir"}),
        (search_files, {"pattern": "SECRET", "path": "linkdir"}),
    ]
    for t, arguments in attempts:
        message = refused(t, ctx, **arguments)
        assert "outside the workspace" in message, (t.name, message)
        assert SECRET not in message
    assert (outside / "secret.txt").read_text() == SECRET + "\n"
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]


def test_symlinks_inside_the_workspace_work(ctx, workspace):
    (workspace / "real").mkdir()
    (workspace / "real" / "a.txt").write_text("one\n")
    (workspace / "alias").symlink_to(workspace / "real")
    assert call(read_file, ctx, path="alias/a.txt") == "     1\tone"
    call(write_file, ctx, path="alias/a.txt", content="two\n")
    assert (workspace / "real" / "a.txt").read_text() == "two\n"
    assert (workspace / "alias").is_symlink()


# -- read_file -------------------------------------------------------------------


def test_read_file_numbers_lines_and_takes_ranges(ctx, workspace):
    (workspace / "poem.txt").write_text("one\ntwo\r\nthree\nfour\n")
    assert (
        call(read_file, ctx, path="poem.txt")
        == "     1\tone\n     2\ttwo\n     3\tthree\n     4\tfour"
    )
    assert (
        call(read_file, ctx, path="poem.txt", start_line=2, end_line=3)
        == "     2\ttwo\n     3\tthree"
    )
    assert call(read_file, ctx, path=str(workspace / "poem.txt"), start_line=4) == "     4\tfour"


def test_read_file_errors_are_clear(ctx, workspace):
    (workspace / "short.txt").write_text("a\nb\n")
    (workspace / "folder").mkdir()
    assert "does not exist" in refused(read_file, ctx, path="nope.txt")
    assert "is a directory" in refused(read_file, ctx, path="folder")
    assert "past the end of short.txt (2 lines)" in refused(
        read_file, ctx, path="short.txt", start_line=9
    )
    assert "before start_line" in refused(
        read_file, ctx, path="short.txt", start_line=2, end_line=1
    )
    assert "counts from 1" in refused(read_file, ctx, path="short.txt", start_line=0)


def test_read_file_empty(ctx, workspace):
    (workspace / "empty.txt").write_text("")
    assert call(read_file, ctx, path="empty.txt") == "(empty.txt is empty)"


def test_read_file_refuses_binary_and_non_utf8(ctx, workspace):
    (workspace / "image.png").write_bytes(
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256))
    )
    (workspace / "latin1.txt").write_bytes("caf\xe9 cr\xe8me\n".encode("latin-1"))
    assert "binary" in refused(read_file, ctx, path="image.png")
    assert "binary" in refused(read_file, ctx, path="latin1.txt")


def test_read_file_accepts_utf8_cut_at_the_sniff_boundary(ctx, workspace):
    # 8191 ASCII bytes then a 2-byte character straddling the 8 KB sniff window.
    (workspace / "edge.txt").write_text("a" * 8191 + "é\n")
    assert call(read_file, ctx, path="edge.txt") == "     1\t" + "a" * 8191 + "é"


def test_big_file_stops_at_the_limit_and_says_where_to_go_on(make_config, workspace):
    ctx = ToolContext(config=make_config(read_file_limit=2000, tool_output_limit=20_000))
    (workspace / "big.txt").write_text("".join(f"line {i}\n" for i in range(1, 10_001)))
    out = call(read_file, ctx, path="big.txt")
    last = out.splitlines()[-1]
    assert last.startswith("[output limit reached; big.txt is 98894 bytes")
    next_line = int(last.split("start_line=")[1].split(" ")[0])
    shown = out.splitlines()[:-1]
    assert shown[-1] == f"{next_line - 1:>6}\tline {next_line - 1}"
    assert len(out) < 2000
    follow = call(read_file, ctx, path="big.txt", start_line=next_line, end_line=next_line + 1)
    assert follow == f"{next_line:>6}\tline {next_line}\n{next_line + 1:>6}\tline {next_line + 1}"


def test_one_huge_line_shows_its_start(make_config, workspace):
    ctx = ToolContext(config=make_config(read_file_limit=1000))
    (workspace / "min.js").write_text("x" * 1_000_000 + "\nsecond\n")
    out = call(read_file, ctx, path="min.js")
    assert out.splitlines()[0].startswith("     1\txxxx")
    assert "[... line truncated ...]" in out
    assert "start_line=2" in out
    assert len(out) < 1500


# -- write_file ------------------------------------------------------------------


def test_write_file_creates_parents_and_reports_bytes(ctx, workspace):
    assert call(write_file, ctx, path="a/b/c.txt", content="héllo\n") == (
        "Wrote 7 bytes to a/b/c.txt (new file)"
    )
    assert (workspace / "a/b/c.txt").read_text() == "héllo\n"
    assert call(write_file, ctx, path="a/b/c.txt", content="") == "Wrote 0 bytes to a/b/c.txt"
    assert os.listdir(workspace / "a/b") == ["c.txt"]  # no temporary files left


def test_write_file_keeps_the_mode_of_an_existing_file(ctx, workspace):
    script = workspace / "run.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    call(write_file, ctx, path="run.sh", content="#!/bin/sh\necho hi\n")
    assert script.stat().st_mode & 0o777 == 0o755


def test_write_file_refusals(ctx, workspace):
    (workspace / "folder").mkdir()
    (workspace / "file.txt").write_text("x")
    assert "is a directory" in refused(write_file, ctx, path="folder", content="x")
    assert "could not create the folder" in refused(write_file, ctx, path="file.txt/x", content="x")
    assert "outside the workspace" in refused(write_file, ctx, path="../escape.txt", content="x")
    assert not (workspace.parent / "escape.txt").exists()
    # A trailing slash names a folder: never quietly write a file called "notes".
    assert "ends with '/'" in refused(write_file, ctx, path="notes/", content="x")
    assert not (workspace / "notes").exists()


def test_failed_write_leaves_the_old_file_whole(ctx, workspace):
    # A file-size limit makes the write fail halfway (EFBIG), even for root.
    (workspace / "keep.txt").write_text("original")
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    previous = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (1000, hard))
    try:
        message = refused(write_file, ctx, path="keep.txt", content="x" * 5000)
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, previous)
    assert message == "could not write keep.txt: File too large"
    assert (workspace / "keep.txt").read_text() == "original"
    assert os.listdir(workspace) == ["keep.txt"]


# -- edit_file -------------------------------------------------------------------


def test_edit_file_replaces_a_unique_match(ctx, workspace):
    (workspace / "app.py").write_text("def a():\n    return 1\n\n\ndef b():\n    return 2\n")
    out = call(edit_file, ctx, path="app.py", old="    return 2\n", new="    x = 2\n    return x\n")
    assert out == "Edited app.py: replaced line 6 with lines 6-7"
    assert (workspace / "app.py").read_text() == (
        "def a():\n    return 1\n\n\ndef b():\n    x = 2\n    return x\n"
    )
    assert os.listdir(workspace) == ["app.py"]


def test_edit_file_not_found_suggests_read_file(ctx, workspace):
    (workspace / "app.py").write_text("print('hi')\n")
    message = refused(edit_file, ctx, path="app.py", old="print('bye')", new="x")
    assert "not found in app.py" in message
    assert "read_file" in message
    assert (workspace / "app.py").read_text() == "print('hi')\n"


def test_edit_file_ambiguous_match_lists_lines(ctx, workspace):
    (workspace / "app.py").write_text("x = 1\ny = 2\nx = 1\n")
    message = refused(edit_file, ctx, path="app.py", old="x = 1", new="x = 3")
    assert "occurs 2 times in app.py (at lines 1, 3)" in message
    assert "more surrounding lines" in message
    assert (workspace / "app.py").read_text() == "x = 1\ny = 2\nx = 1\n"


def test_edit_file_matches_crlf_files(ctx, workspace):
    (workspace / "win.txt").write_bytes(b"alpha\r\nbeta\r\ngamma\r\n")
    out = call(edit_file, ctx, path="win.txt", old="alpha\nbeta", new="ALPHA\nBETA")
    assert out.startswith("Edited win.txt")
    assert (workspace / "win.txt").read_bytes() == b"ALPHA\r\nBETA\r\ngamma\r\n"


def test_edit_file_deletes_and_refuses_nonsense(ctx, workspace):
    (workspace / "t.txt").write_text("keep\ndrop\n")
    assert call(edit_file, ctx, path="t.txt", old="drop\n", new="") == (
        "Edited t.txt: replaced line 2 with nothing (deleted)"
    )
    assert (workspace / "t.txt").read_text() == "keep\n"
    assert "identical" in refused(edit_file, ctx, path="t.txt", old="keep", new="keep")
    assert "old is empty" in refused(edit_file, ctx, path="t.txt", old="", new="x")
    (workspace / "blob.bin").write_bytes(b"ab\x00cd")
    assert "binary" in refused(edit_file, ctx, path="blob.bin", old="ab", new="x")


# -- list_dir --------------------------------------------------------------------


def test_list_dir_marks_folders_and_sizes(ctx, workspace, outside):
    (workspace / "src").mkdir()
    (workspace / "src" / "main.py").write_text("print(1)\n")
    (workspace / "README.md").write_text("x" * 2048)
    (workspace / ".git").mkdir()
    (workspace / ".git" / "HEAD").write_text("ref")
    (workspace / "escape").symlink_to(outside)
    assert call(list_dir, ctx) == (
        "./\n  .git/\n  src/\n  README.md  2.0 KB\n  escape@ -> (outside the workspace)"
    )
    assert call(list_dir, ctx, depth=2) == (
        "./\n  .git/ (not expanded)\n  src/\n    main.py  9 B\n  README.md  2.0 KB\n"
        "  escape@ -> (outside the workspace)"
    )
    assert call(list_dir, ctx, path="src") == "src/\n  main.py  9 B"


def test_list_dir_caps_the_entries(ctx, workspace):
    for i in range(600):
        (workspace / f"f{i:03}.txt").write_text("")
    out = call(list_dir, ctx).splitlines()
    assert out[1] == "  f000.txt  0 B"
    assert out[-1] == "  ... 100 more"


def test_list_dir_refusals(ctx, workspace):
    (workspace / "a.txt").write_text("")
    assert "is a file" in refused(list_dir, ctx, path="a.txt")
    assert "depth must be between 1 and 3" in refused(list_dir, ctx, depth=4)
    assert "outside the workspace" in refused(list_dir, ctx, path="..")
    assert call(list_dir, ctx, path="a.txt/..") == "./\n  a.txt  0 B"


# -- search_files ----------------------------------------------------------------


@pytest.fixture
def project(workspace: Path) -> Path:
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text("import os\n\ndef main():\n    # TODO: tidy\n")
    (workspace / "src" / "util.js").write_text("// TODO later\n")
    (workspace / "notes.md").write_text("nothing to do\nTODO: write notes\n")
    for skipped in (".git", "node_modules", ".venv", "__pycache__"):
        (workspace / skipped).mkdir()
        (workspace / skipped / "x.py").write_text("TODO hidden\n")
    (workspace / "data.bin").write_bytes(b"TODO\x00binary")
    return workspace


def test_search_files_finds_lines(ctx, project):
    assert call(search_files, ctx, pattern="TODO") == (
        "notes.md:2: TODO: write notes\nsrc/app.py:4: # TODO: tidy\nsrc/util.js:1: // TODO later"
    )


def test_search_files_glob_and_path(ctx, project):
    assert call(search_files, ctx, pattern="TODO", glob="*.py") == "src/app.py:4: # TODO: tidy"
    assert call(search_files, ctx, pattern="TODO", path="src", glob="**/*.js") == (
        "src/util.js:1: // TODO later"
    )
    assert (
        call(search_files, ctx, pattern=r"def \w+", path="src/app.py")
        == "src/app.py:3: def main():"
    )


def test_search_files_no_match_and_bad_regex(ctx, project):
    assert call(search_files, ctx, pattern="zebra").startswith("No matches for 'zebra' in .")
    message = refused(search_files, ctx, pattern="(unclosed")
    assert "invalid regular expression" in message
    assert "outside the workspace" in refused(search_files, ctx, pattern="x", path="/etc")


def test_search_files_caps_results(make_config, workspace):
    ctx = ToolContext(config=make_config(search_results_limit=5))
    (workspace / "many.txt").write_text("hit\n" * 50)
    out = call(search_files, ctx, pattern="hit").splitlines()
    assert out[:5] == [f"many.txt:{i}: hit" for i in range(1, 6)]
    assert out[5] == "[results capped at 5; narrow the pattern, path or glob to see the rest]"


def test_search_files_bounds_long_lines(ctx, workspace):
    (workspace / "min.js").write_text(
        "a" * 5000 + "NEEDLE\n" + "b" * 500 + "MARK" + "c" * 500 + "\n"
    )
    assert call(search_files, ctx, pattern="NEEDLE").startswith("No matches")  # beyond 2,000 chars
    out = call(search_files, ctx, pattern="MARK")
    assert out.startswith("min.js:2: ...") and "MARK" in out
    assert len(out) < 400


def test_search_files_skips_links_to_outside(ctx, workspace, outside):
    (workspace / "leak.txt").symlink_to(outside / "secret.txt")
    assert call(search_files, ctx, pattern="SECRET").startswith("No matches")


def test_a_sibling_folder_whose_name_extends_the_workspace_is_outside(ctx, workspace):
    # ws2/ starts with the characters of ws/: only a path-component check keeps it out.
    sibling = workspace.parent / f"{workspace.name}2"
    sibling.mkdir()
    (sibling / "secret.txt").write_text(SECRET + "\n")
    for path in (f"../{sibling.name}/secret.txt", str(sibling / "secret.txt")):
        with pytest.raises(ToolError, match="outside the workspace"):
            resolve_in_workspace(workspace, path, home=None)
        assert SECRET not in refused(read_file, ctx, path=path)
    assert (sibling / "secret.txt").read_text() == SECRET + "\n"
