"""What Hermes can tell about the machine it is deployed on.

Two questions matter before a server starts taking turns:

- Will the data survive a redeploy? A container's own filesystem (overlay,
  tmpfs) is thrown away with the container; on Railway only an attached
  volume persists. :func:`storage_warnings` says when HERMES_HOME is in such
  a place, so the log and the page can warn before months of history are lost.
- Can the server start at all? :func:`preflight` lists what is missing (the
  secret key, the password, a writable HERMES_HOME) in the words of the fix.
  The Docker entrypoint runs it (``python -m hermes.deploy``) and refuses to
  start with one line per problem, so a misconfigured container stops at once
  instead of restarting in a loop behind a healthcheck.

Nothing here imports Flask or opens the database.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from hermes.config import Config
from hermes.errors import HermesError

# Filesystems whose contents vanish with the container or the machine's memory.
EPHEMERAL_FILESYSTEMS = {"overlay", "overlayfs", "aufs", "tmpfs", "ramfs", "devtmpfs"}
MOUNTINFO = Path("/proc/self/mountinfo")
# The dashboard refuses a shorter FLASK_SECRET_KEY; doctor recommends twice that.
MIN_SECRET_KEY_LENGTH = 16
GOOD_SECRET_KEY_LENGTH = 32


@dataclass(frozen=True)
class Mount:
    point: Path
    fstype: str


def read_mounts(mountinfo: Path = MOUNTINFO) -> list[Mount]:
    """The mounts of this process, from /proc/self/mountinfo ([] where there is none)."""
    try:
        lines = mountinfo.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
    mounts = []
    for line in lines:
        # "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw"
        left, sep, right = line.partition(" - ")
        fields = left.split()
        if not sep or len(fields) < 5 or not right.split():
            continue
        point = fields[4].replace("\\040", " ").replace("\\011", "\t").replace("\\134", "\\")
        mounts.append(Mount(Path(point), right.split()[0]))
    return mounts


def mount_of(path: Path, mounts: list[Mount]) -> Mount | None:
    """The mount that holds ``path``: the longest mount point above it (the last one wins)."""
    best: Mount | None = None
    for mount in mounts:
        holds = path == mount.point or mount.point in path.parents
        if holds and (best is None or len(mount.point.parts) >= len(best.point.parts)):
            best = mount
    return best


def storage_warnings(
    config: Config,
    environ: Mapping[str, str] | None = None,
    mountinfo: Path = MOUNTINFO,
) -> list[str]:
    """Reasons to believe HERMES_HOME will not survive a redeploy; [] when it looks safe."""
    env = os.environ if environ is None else environ
    if env.get("RAILWAY_ENVIRONMENT") or env.get("RAILWAY_PROJECT_ID"):
        volume = (env.get("RAILWAY_VOLUME_MOUNT_PATH") or "").strip()
        if not volume:
            return [
                f"HERMES_HOME ({config.home}) is not on a Railway volume, so every redeploy "
                "erases your sessions, skills and memory. Attach a volume to this service "
                "and set HERMES_HOME to its mount path (for example /data)."
            ]
        volume_path = Path(volume).resolve()
        if config.home != volume_path and volume_path not in config.home.parents:
            return [
                f"HERMES_HOME ({config.home}) is outside the Railway volume mounted at "
                f"{volume_path}, so every redeploy erases it. Set HERMES_HOME={volume_path}."
            ]
        return []
    mount = mount_of(config.home, read_mounts(mountinfo))
    if mount is not None and mount.fstype in EPHEMERAL_FILESYSTEMS:
        return [
            f"HERMES_HOME ({config.home}) is on a {mount.fstype} filesystem, which is lost "
            "when the container or machine is replaced. Mount a volume (Docker: -v "
            "hermes-data:/data with HERMES_HOME=/data) or point HERMES_HOME at a disk."
        ]
    return []


def preflight(config: Config, environ: Mapping[str, str] | None = None) -> list[str]:
    """What stops the web server from starting, each as the fix to make; [] when ready."""
    env = os.environ if environ is None else environ
    problems = []
    if not config.secret_key:
        problems.append(
            "FLASK_SECRET_KEY is not set: set it to a long random string, e.g. the output of "
            '`python3 -c "import secrets; print(secrets.token_urlsafe(48))"`.'
        )
    elif len(config.secret_key) < MIN_SECRET_KEY_LENGTH:
        problems.append(
            f"FLASK_SECRET_KEY is too short: use at least {GOOD_SECRET_KEY_LENGTH} random "
            'characters (`python3 -c "import secrets; print(secrets.token_urlsafe(48))"`).'
        )
    if not config.web_password and not config.web_allow_no_auth:
        problems.append(
            "HERMES_WEB_PASSWORD is not set: set a strong password for the dashboard "
            "(or HERMES_WEB_ALLOW_NO_AUTH=true on a private network only)."
        )
    problem = home_problem(config.home)
    if problem:
        problems.append(problem)
    port = (env.get("PORT") or "").strip()
    if port and not (port.isdigit() and 0 < int(port) < 65536):
        problems.append(f"PORT must be a TCP port number, not {port!r}.")
    return problems


def home_problem(home: Path) -> str | None:
    """Why HERMES_HOME cannot be used (created if missing, then written), or None."""
    try:
        home.mkdir(parents=True, exist_ok=True, mode=0o700)
        with tempfile.NamedTemporaryFile(dir=home, prefix=".preflight-", delete=True) as probe:
            probe.write(b"ok")
            probe.flush()
    except OSError as exc:
        uid = os.getuid() if hasattr(os, "getuid") else "?"
        return (
            f"HERMES_HOME ({home}) is not writable by this process (uid {uid}): "
            f"{exc.strerror or exc}. Give that user the folder (a Docker volume: "
            f"`chown -R {uid} <volume path>`), or set HERMES_HOME to a folder it owns."
        )
    return None


def main(argv: list[str] | None = None) -> int:
    """``python -m hermes.deploy``: print what stops the server, exit 78 (EX_CONFIG) if anything."""
    del argv
    try:
        config = Config.from_env()
    except HermesError as exc:
        print(f"hermes: {exc.message}", file=sys.stderr)
        return 78
    problems = preflight(config)
    for problem in problems:
        print(f"hermes: {problem}", file=sys.stderr)
    if problems:
        return 78
    for warning in storage_warnings(config):
        print(f"hermes: warning: {warning}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
