"""Start-up checks of a deployment: persistence detection, preflight and the Docker entrypoint."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from hermes.deploy import preflight, read_mounts, storage_warnings
from tests.helpers import clean_environ

ROOT = Path(__file__).resolve().parents[2]
ENTRYPOINT = ROOT / "deploy" / "docker-entrypoint.sh"
GOOD_KEY = "k" * 48


def mountinfo(tmp_path: Path, *mounts: tuple[str, str]) -> Path:
    """A /proc/self/mountinfo with the given (mount point, fstype) lines."""
    lines = [
        f"{20 + i} 1 0:{i} / {point.replace(' ', chr(92) + '040')} rw,relatime - {fstype} src rw"
        for i, (point, fstype) in enumerate(mounts)
    ]
    path = tmp_path / "mountinfo"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_home_on_a_container_overlay_is_flagged(tmp_path, make_config):
    config = make_config(home=Path("/data/hermes"))
    info = mountinfo(tmp_path, ("/", "overlay"), ("/proc", "proc"))
    [warning] = storage_warnings(config, {}, info)
    assert "overlay" in warning and "/data/hermes" in warning


def test_home_on_a_volume_inside_an_overlay_root_is_fine(tmp_path, make_config):
    config = make_config(home=Path("/data/hermes"))
    info = mountinfo(tmp_path, ("/", "overlay"), ("/data", "ext4"))
    assert storage_warnings(config, {}, info) == []


def test_mount_points_with_spaces_are_read(tmp_path, make_config):
    info = mountinfo(tmp_path, ("/", "overlay"), ("/my data", "xfs"))
    assert [m.fstype for m in read_mounts(info)] == ["overlay", "xfs"]
    config = make_config(home=Path("/my data/h"))
    assert storage_warnings(config, {}, info) == []


def test_tmpfs_home_is_flagged(tmp_path, make_config):
    config = make_config(home=Path("/run/user/1000/hermes"))
    info = mountinfo(tmp_path, ("/", "ext4"), ("/run", "tmpfs"))
    assert "tmpfs" in storage_warnings(config, {}, info)[0]


def test_railway_without_a_volume_is_flagged(tmp_path, make_config):
    config = make_config(home=Path("/app/.hermes"))
    [warning] = storage_warnings(config, {"RAILWAY_ENVIRONMENT": "production"}, tmp_path / "none")
    assert "Railway volume" in warning and "Attach a volume" in warning


def test_railway_volume_elsewhere_is_flagged_and_right_place_is_fine(tmp_path, make_config):
    env = {"RAILWAY_PROJECT_ID": "p", "RAILWAY_VOLUME_MOUNT_PATH": "/data"}
    outside = make_config(home=Path("/root/.hermes"))
    assert "HERMES_HOME=/data" in storage_warnings(outside, env, tmp_path / "none")[0]
    inside = make_config(home=Path("/data"))
    assert storage_warnings(inside, env, tmp_path / "none") == []


def test_no_mountinfo_means_no_warning(tmp_path, make_config):
    assert storage_warnings(make_config(), {}, tmp_path / "missing") == []


def test_preflight_names_every_missing_setting(make_config):
    problems = preflight(make_config(), {"PORT": "http"})
    text = "\n".join(problems)
    assert "FLASK_SECRET_KEY is not set" in text
    assert "HERMES_WEB_PASSWORD is not set" in text
    assert "PORT must be a TCP port number" in text
    assert preflight(make_config(secret_key=GOOD_KEY, web_password="a long passphrase"), {}) == []
    assert preflight(make_config(secret_key=GOOD_KEY, web_allow_no_auth=True), {}) == []
    [short] = preflight(make_config(secret_key="k" * 15, web_allow_no_auth=True), {})
    assert "FLASK_SECRET_KEY is too short" in short


def test_preflight_reports_an_unwritable_home(make_config):
    # /proc refuses new folders even to root, like a read-only volume.
    config = make_config(home=Path("/proc/hermes-home"), secret_key=GOOD_KEY, web_password="x" * 16)
    [problem] = preflight(config, {})
    assert "/proc/hermes-home" in problem and "not writable" in problem and "chown" in problem


def test_preflight_reports_a_home_that_is_a_file(tmp_path, make_config):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    config = make_config(home=blocker / "home", secret_key=GOOD_KEY, web_password="x" * 16)
    [problem] = preflight(config, {})
    assert "is not writable" in problem


def entrypoint(args: list[str], env: dict[str, str], tmp_path: Path):
    bin_dir = Path(sys.executable).parent  # the image puts its venv on PATH the same way
    env = {**env, "PATH": f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"}
    return subprocess.run(
        ["sh", str(ENTRYPOINT), *args],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


def test_entrypoint_refuses_to_start_without_secrets(tmp_path):
    env = clean_environ(HERMES_HOME=str(tmp_path / "data"))
    result = entrypoint(["echo", "STARTED"], env, tmp_path)
    assert result.returncode == 78
    assert "STARTED" not in result.stdout
    lines = result.stderr.strip().splitlines()
    assert any("FLASK_SECRET_KEY is not set" in line for line in lines)
    assert any("HERMES_WEB_PASSWORD is not set" in line for line in lines)
    assert "Traceback" not in result.stderr


def test_entrypoint_execs_the_command_when_ready(tmp_path):
    home = tmp_path / "data"
    env = clean_environ(
        HERMES_HOME=str(home),
        FLASK_SECRET_KEY=GOOD_KEY,
        HERMES_WEB_PASSWORD="correct horse battery staple",
    )
    result = entrypoint(["echo", "STARTED"], env, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "STARTED"
    assert (home / "workspace").is_dir()  # HERMES_WORKSPACE's default folder exists
    assert GOOD_KEY not in result.stderr + result.stdout


def test_entrypoint_runs_hermes_commands_without_web_secrets(tmp_path):
    env = clean_environ(HERMES_HOME=str(tmp_path / "data"))
    result = entrypoint(["hermes", "--version"], env, tmp_path)
    assert result.returncode == 0, result.stderr
    assert "hermes" in result.stdout.lower()


def test_dockerfile_runs_the_entrypoint_and_procfile_command():
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert 'ENTRYPOINT ["hermes-entrypoint"]' in dockerfile
    assert 'CMD ["gunicorn", "--config", "gunicorn.conf.py", "wsgi:app"]' in dockerfile
    assert "USER ${HERMES_UID}:${HERMES_UID}" in dockerfile and 'VOLUME ["/data"]' in dockerfile
    assert "HEALTHCHECK" in dockerfile
    # Everything the image copies exists in the repository.
    for line in dockerfile.splitlines():
        if line.startswith("COPY") and "--from" not in line:
            for source in line.split()[1:-1]:
                assert (ROOT / source).exists(), f"Dockerfile copies missing {source}"
