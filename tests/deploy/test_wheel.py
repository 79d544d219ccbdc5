"""The wheel is the app: built from what the Dockerfile's build stage copies, it serves the
dashboard (templates, scripts, vendored libraries) and migrates a database on its own,
with no checkout beside it.

This is the Docker image's build stage replayed without Docker: the same COPY lines,
then ``pip wheel`` of that folder, then the wheel's files imported from a bare folder.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SERVE = r"""
import sys, tempfile
from pathlib import Path

import hermes, web
site = Path(sys.argv[1]).resolve()
assert Path(web.__file__).resolve().is_relative_to(site), web.__file__
assert Path(hermes.__file__).resolve().is_relative_to(site), hermes.__file__

from hermes.config import Config
home = Path(tempfile.mkdtemp())
config = Config.from_env(
    {
        "HERMES_HOME": str(home),
        "HERMES_WORKSPACE": str(home),
        "FLASK_SECRET_KEY": "k" * 40,
        "HERMES_WEB_PASSWORD": "a long enough password",
    },
    dotenv=False,
)
client = web.create_app(config).test_client()
for path in ("/login", "/static/js/main.js", "/static/vendor/purify.min.js"):
    response = client.get(path)
    print(path, response.status_code, len(response.data))
    assert response.status_code == 200, (path, response.status_code)
assert (home / "hermes.db").exists()
print("served")
"""


def build_stage_sources() -> list[str]:
    """What the Dockerfile's first stage copies into /src before it runs pip."""
    first_stage = ROOT.joinpath("Dockerfile").read_text().split("\nFROM ", 2)[1]
    before_pip = first_stage.split("pip install", 1)[0]
    return [
        source
        for line in re.findall(r"^COPY (.+)$", before_pip, flags=re.M)
        for source in line.split()[:-1]
    ]


def test_the_build_stage_copies_what_the_wheel_needs():
    assert {"pyproject.toml", "hermes", "migrations", "web", "templates", "static"} <= set(
        build_stage_sources()
    )


def test_a_wheel_built_like_the_image_serves_the_dashboard(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for name in build_stage_sources():
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(path, src / name)

    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation"]
        + [str(src), "-w", str(tmp_path / "dist")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr[-2000:]
    (wheel,) = (tmp_path / "dist").glob("*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "web/_templates/app.html" in names
    assert "web/_static/vendor/LICENSE.dompurify" in names
    assert any(n.startswith("hermes/_migrations/versions/0001") for n in names)

    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    served = subprocess.run(
        [sys.executable, "-c", SERVE, str(site)],
        cwd=tmp_path,
        env={"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert served.returncode == 0, served.stdout + served.stderr[-3000:]
    assert "served" in served.stdout
