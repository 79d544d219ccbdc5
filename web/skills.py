"""``/api/skills``: the skill library: list, read, write, version, import, export.

Everything goes through :class:`hermes.skills.SkillManager`, which validates
names (no path tricks reach the disk), keeps every earlier version, and
checks imports whole before anything is installed, exactly as the CLI does.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from flask import Blueprint, Response, jsonify, request

from hermes.errors import SkillError
from hermes.skills.schema import split_triggers, validate_name
from web.context import ApiError, get_runtime, json_body, query_int

bp = Blueprint("skills", __name__, url_prefix="/api/skills")

# An uploaded skill (zip or SKILL.md); below the app's MAX_CONTENT_LENGTH on purpose,
# so a too-large upload gets this clear message rather than a bare 413.
MAX_UPLOAD_BYTES = 5 * 1024 * 1024
ZIP_MAGIC = b"PK\x03\x04"
WRITE_FIELDS = {"description": "string", "body": "string", "triggers": "string|list"}


def _manager():
    return get_runtime().skills


def _name(name: str) -> str:
    """The skill name from the URL, refused (400, field ``name``) unless it is legal."""
    try:
        return validate_name(name)
    except SkillError as exc:
        raise ApiError(400, "invalid_skill", exc.message, field="name") from None


def _field_of(message: str) -> str:
    """Which input field a SkillError is about (for the form to highlight)."""
    lowered = message.lower()
    for word, field in (
        ("trigger", "triggers"),
        ("description", "description"),
        ("body", "body"),
        ("name", "name"),
    ):
        if word in lowered:
            return field
    return "body"


def _triggers(value) -> str | list[str] | None:
    if isinstance(value, list) and not all(isinstance(item, str) for item in value):
        raise ApiError(400, "invalid", "triggers must be strings.", field="triggers")
    return value


@bp.get("")
def list_skills():
    query = request.args.get("q", "")
    manager = _manager()
    found = manager.search(query, limit=10_000) if query.strip() else manager.list()
    return {"skills": [skill.to_dict() for skill in found]}


@bp.post("")
def create_skill():
    body = json_body(
        required={"name": "string", "description": "string", "body": "string"},
        optional={"triggers": "string|list"},
    )
    name = _name(body["name"])
    try:
        skill = _manager().create(
            name,
            body["description"],
            body["body"],
            triggers=split_triggers(_triggers(body.get("triggers"))),
            created_by="user",
        )
    except SkillError as exc:
        raise ApiError(400, "invalid_skill", exc.message, field=_field_of(exc.message)) from None
    response = jsonify({"skill": skill.to_detail_dict()})
    response.status_code = 201
    return response


@bp.get("/<name>")
def get_skill(name: str):
    return {"skill": _manager().get(_name(name)).to_detail_dict()}


@bp.put("/<name>")
def update_skill(name: str):
    name = _name(name)
    body = json_body(optional=WRITE_FIELDS)
    if not body:
        raise ApiError(
            400, "invalid", "Send at least one of description, body, triggers.", field="body"
        )
    try:
        skill = _manager().update(
            name,
            description=body.get("description"),
            body=body.get("body"),
            triggers=_triggers(body.get("triggers")),
        )
    except SkillError as exc:
        raise ApiError(400, "invalid_skill", exc.message, field=_field_of(exc.message)) from None
    return {"skill": skill.to_detail_dict()}


@bp.delete("/<name>")
def delete_skill(name: str):
    _manager().delete(_name(name))
    return Response(status=204)


@bp.get("/<name>/versions")
def skill_versions(name: str):
    """Every version, oldest first, and a unified diff (``from``/``to``; default: the last change)."""
    name = _name(name)
    manager = _manager()
    versions = manager.versions(name)
    current = versions[-1].version
    default_from = versions[-2].version if len(versions) > 1 else current
    a = query_int("from", default_from, maximum=current)
    b = query_int("to", current, maximum=current)
    return {
        "versions": [version.to_dict() for version in versions],
        "diff": {"from": a, "to": b, "text": manager.diff(name, a, b)},
    }


@bp.post("/<name>/restore")
def restore_skill(name: str):
    name = _name(name)
    body = json_body(required={"version": "integer"})
    if body["version"] < 1:
        raise ApiError(400, "invalid", "version must be 1 or more.", field="version")
    return {"skill": _manager().restore(name, body["version"]).to_detail_dict()}


@bp.post("/import")
def import_skills():
    """A multipart ``file``: a zip of one or more skills, or a single SKILL.md."""
    upload = request.files.get("file")
    if upload is None:
        raise ApiError(400, "invalid", "Send the skill as a multipart field 'file'.", field="file")
    data = upload.stream.read(MAX_UPLOAD_BYTES + 1)
    if len(data) > MAX_UPLOAD_BYTES:
        raise ApiError(
            413,
            "too_large",
            f"The upload is larger than {MAX_UPLOAD_BYTES // (1024 * 1024)} MB.",
            field="file",
        )
    if not data:
        raise ApiError(400, "invalid", "The uploaded file is empty.", field="file")
    # The client's file name is never used as a path: only what the bytes are matters.
    filename = "upload.zip" if data.startswith(ZIP_MAGIC) else "SKILL.md"
    with tempfile.TemporaryDirectory(prefix="hermes-upload-") as folder:
        path = Path(folder) / filename
        path.write_bytes(data)
        try:
            installed = _manager().import_path(path)
        except SkillError as exc:
            raise ApiError(400, "invalid_skill", exc.message, field="file") from None
    response = jsonify({"skills": [skill.to_dict() for skill in installed]})
    response.status_code = 201
    return response


@bp.get("/<name>/export")
def export_skill(name: str):
    name = _name(name)
    with tempfile.TemporaryDirectory(prefix="hermes-export-") as folder:
        written = _manager().export_zip(name, Path(folder) / f"{name}.zip")
        data = written.read_bytes()
    response = Response(data, mimetype="application/zip")
    response.headers["Content-Disposition"] = f'attachment; filename="{name}.zip"'
    return response
