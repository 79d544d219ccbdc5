"""The model's commands cannot read Hermes' keys from /proc/<pid>/environ.

child_environment() strips the keys from the environment run_bash's bash gets,
but the Hermes process still holds the originals in ``/proc/<pid>/environ``,
readable by every process of the same OS user, bash's children included. Every
entry point makes its process non-dumpable (``prctl(PR_SET_DUMPABLE, 0)``),
which hands those files to root.

This machine runs the tests as root, and root (with its capabilities) reads
every /proc file whatever the flag. So when the tests run as root, the servers
and the "attacker" both run as root *without capabilities* (``setpriv
--bounding-set=-all``): an ordinary same-user pair, which is the attack. (Run
as an ordinary user, the tests use that user for both.) A dumpable ``sleep`` of
the same user, with the same secret in its environment, is the control: its
environ *is* readable, so the denial is the flag's doing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.helpers import clean_environ, run_hermes
from tests.web.gunicorn_server import ROOT, free_port, procfile_command, server_environ

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux /proc only")

SECRET = "sk-ant-SECRET-IN-THE-SERVERS-ENVIRONMENT"

PROBE = '''
import ctypes

from hermes.events import StreamEnd, TextDelta, Usage
from hermes.providers.base import Provider


class ProbeProvider(Provider):
    """Answers with this process's PR_GET_DUMPABLE (prctl option 3)."""

    name = "probe"
    default_model = "probe-1"
    key_variable = "PROBE_API_KEY"

    def stream(self, request):
        yield TextDelta(f"dumpable={ctypes.CDLL(None).prctl(3, 0, 0, 0, 0)}")
        yield Usage(input_tokens=1, output_tokens=1)
        yield StreamEnd()
'''


def same_user() -> list[str]:
    """The command prefix that runs a process as an ordinary user: as root, root
    without capabilities (no CAP_SYS_PTRACE, no CAP_DAC_OVERRIDE)."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("running as root and setpriv (util-linux) is not installed")
    return ["setpriv", "--bounding-set=-all", "--inh-caps=-all"]


@pytest.fixture
def probe_site(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    info = site / "hermes_probe-0.1.dist-info"
    info.mkdir(parents=True)
    (site / "hermes_probe.py").write_text(PROBE)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: hermes-probe\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[hermes.providers]\nprobe = hermes_probe:ProbeProvider\n"
    )
    return site


def attacker_reads(pid: int, name: str = "environ") -> subprocess.CompletedProcess:
    """Another process of the same ordinary user reads /proc/<pid>/<name>."""
    return subprocess.run(
        [*same_user(), "cat", f"/proc/{pid}/{name}"], capture_output=True, timeout=10
    )


def assert_hidden(pid: int) -> None:
    """The same user cannot read the process's environment, but still its stat."""
    stolen = attacker_reads(pid)
    assert stolen.returncode != 0 and b"Permission denied" in stolen.stderr
    assert SECRET.encode() not in stolen.stdout
    # What other Hermes processes read of it stays readable (kill recovery reads stat).
    assert attacker_reads(pid, "stat").returncode == 0


@pytest.fixture
def control() -> Iterator[int]:
    """A dumpable process of the same user with the secret in its environment."""
    sleeper = subprocess.Popen([*same_user(), "sleep", "60"], env={"ANTHROPIC_API_KEY": SECRET})
    yield sleeper.pid
    sleeper.kill()
    sleeper.wait()


def test_without_the_flag_the_attack_works(control):
    time.sleep(0.2)  # let setpriv exec sleep, so the environ is sleep's
    stolen = attacker_reads(control)
    assert stolen.returncode == 0 and SECRET.encode() in stolen.stdout


def test_the_hermes_command_is_not_dumpable(probe_site, hermes_home, workspace):
    env = clean_environ(
        HERMES_HOME=str(hermes_home),
        HERMES_WORKSPACE=str(workspace),
        HERMES_PROVIDER="probe",
        PROBE_API_KEY="k",
        PYTHONPATH=os.pathsep.join([str(probe_site), os.environ.get("PYTHONPATH", "")]),
    )
    result = run_hermes(["chat", "-q", "are you dumpable?"], env=env, cwd=workspace)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "dumpable=0"


def test_hermes_web_keeps_its_keys_from_the_same_user(hermes_home, workspace, control):
    env = clean_environ(
        HERMES_HOME=str(hermes_home),
        HERMES_WORKSPACE=str(workspace),
        ANTHROPIC_API_KEY=SECRET,
        HERMES_WEB_PASSWORD="a long enough password",
    )
    server = subprocess.Popen(
        [*same_user(), sys.executable, "-m", "hermes", "web", "--port", "0"],
        cwd=workspace,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    try:
        first = server.stdout.readline()
        assert "Hermes dashboard on http://" in first, first
        assert_hidden(server.pid)
    finally:
        server.terminate()
        server.wait(30)


@pytest.mark.parametrize("with_config", [True, False], ids=["procfile", "bare-gunicorn"])
def test_gunicorn_keeps_its_keys_from_the_same_user(
    tmp_path, hermes_home, workspace, control, with_config
):
    """The Procfile's gunicorn (gunicorn.conf.py hides the master, which forks the
    worker), and a bare ``gunicorn wsgi:app`` (create_app hides the worker)."""
    port = free_port()
    env = server_environ(
        PORT=str(port),
        FLASK_SECRET_KEY="test-secret-key-" + "k" * 32,
        HERMES_WEB_PASSWORD="a long enough password",
        HERMES_HOME=str(hermes_home),
        HERMES_WORKSPACE=str(workspace),
        ANTHROPIC_API_KEY=SECRET,
    )
    if with_config:
        command = procfile_command()
    else:
        # gunicorn reads ./gunicorn.conf.py unless told otherwise: an empty config instead.
        empty = tmp_path / "empty.conf.py"
        empty.write_text("")
        command = ["gunicorn", "-c", str(empty), "--bind", f"127.0.0.1:{port}", "wsgi:app"]
    log_path = tmp_path / "gunicorn.log"
    with log_path.open("wb") as log:
        server = subprocess.Popen(
            [*same_user(), *command],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 90
        while True:
            assert server.poll() is None, log_path.read_text()
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, log_path.read_text()
            time.sleep(0.2)
        children = Path(f"/proc/{server.pid}/task/{server.pid}/children").read_text().split()
        assert len(children) == 1
        assert_hidden(int(children[0]))
        if with_config:
            assert_hidden(server.pid)
    finally:
        server.terminate()
        server.wait(60)


def test_hermes_still_reads_its_own_proc_files_when_hidden():
    """Storage detection (mountinfo), kill recovery (stat) and fd listing keep working."""
    code = (
        "import os\n"
        "from hermes.privacy import hide_process, is_dumpable\n"
        "assert hide_process() and is_dumpable() is False\n"
        "from hermes.deploy import read_mounts\n"
        "from hermes.store.turns import _process_started\n"
        "print(len(read_mounts()) > 0, _process_started(os.getpid()) is not None,"
        " len(os.listdir('/proc/self/fd')) > 0)\n"
    )
    result = subprocess.run(
        [*same_user(), sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", "True", "True"]


def test_hide_process_is_a_no_op_where_there_is_no_prctl(monkeypatch):
    from hermes import privacy

    monkeypatch.setattr(privacy.sys, "platform", "darwin")
    assert privacy.hide_process() is False and privacy.is_dumpable() is None


def test_plugin_keys_and_secret_urls_never_reach_run_bash(probe_site):
    code = (
        "from hermes.config import child_environment\n"
        "env = child_environment({'PROBE_API_KEY': 'p', 'HERMES_DATABASE_URL': 'postgresql://u:pw@h/d',"
        " 'HERMES_RATELIMIT_STORAGE': 'redis://:pw@h', 'HERMES_EMBEDDINGS_API_KEY': 'e',"
        " 'PATH': '/bin'})\n"
        "print(sorted(env))\n"
    )
    env = clean_environ(
        PYTHONPATH=os.pathsep.join([str(probe_site), str(ROOT), os.environ.get("PYTHONPATH", "")])
    )
    result = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(
        sorted(["PATH", "PAGER", "GIT_PAGER", "GIT_TERMINAL_PROMPT", "TERM"])
    )
