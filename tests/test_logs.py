"""hermes.log: warnings go to a file in HERMES_HOME, never to the terminal."""

from __future__ import annotations

import logging
import subprocess
import sys

from hermes.logs import LOG_FILE, log_to_file


def test_warnings_go_to_the_current_home_and_still_reach_other_handlers(tmp_path, caplog):
    first, second = tmp_path / "one", tmp_path / "two"
    log_to_file(first)
    log_to_file(second)  # a second Runtime in the same process, on another home
    with caplog.at_level(logging.WARNING):
        logging.getLogger("hermes.test").warning("skipped a broken skill")
    for handler in logging.getLogger("hermes").handlers:
        handler.flush()
    assert "skipped a broken skill" in (second / LOG_FILE).read_text()
    assert "skipped a broken skill" not in (first / LOG_FILE).read_text()
    # pytest's caplog (and a web server's root handlers) still see hermes' records.
    assert "skipped a broken skill" in caplog.text


def test_nothing_reaches_the_terminal(tmp_path):
    code = (
        "import logging, pathlib; from hermes.logs import log_to_file; "
        f"log_to_file(pathlib.Path({str(tmp_path)!r})); "
        "logging.getLogger('hermes.x').warning('quiet please')"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0
    assert done.stderr == "" and done.stdout == ""
    assert "quiet please" in (tmp_path / LOG_FILE).read_text()
