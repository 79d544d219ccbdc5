"""/api/skills: list/search, get, create, update, delete, versions, restore, import, export."""

from __future__ import annotations

import io
import zipfile

import pytest

SKILL = {
    "name": "brew-tea",
    "description": "Brews a pot of tea. Use when the user wants tea.",
    "body": "1. Boil water.\n2. Steep three minutes.",
    "triggers": ["tea", "brew"],
}

SKILL_MD = """---
name: bake-bread
description: Bakes a simple loaf. Use when the user asks for bread.
---
1. Mix flour, water, salt and yeast.
2. Bake at 230C.
"""


@pytest.fixture
def skills_dir(app):
    return app.extensions["hermes.runtime"].config.skills_dir


def _snapshot(folder):
    if not folder.exists():
        return {}
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def _zip(members: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, text in members.items():
            archive.writestr(name, text)
    return buffer.getvalue()


def _upload(api, data: bytes, filename: str = "skill.zip"):
    return api.post(
        "/api/skills/import",
        data={"file": (io.BytesIO(data), filename)},
        content_type="multipart/form-data",
    )


# ---- create, list, get ------------------------------------------------------------


def test_create_list_search_get(api):
    created = api.post("/api/skills", json=SKILL)
    assert created.status_code == 201
    skill = created.json["skill"]
    assert skill["version"] == 1 and skill["created_by"] == "user"
    assert skill["triggers"] == ["tea", "brew"]

    listed = api.get("/api/skills").json["skills"]
    assert [s["name"] for s in listed] == ["brew-tea"]
    assert set(listed[0]) >= {  # SPEC's fields (the core may add more, e.g. last_used_at)
        "name",
        "description",
        "triggers",
        "version",
        "uses",
        "created_by",
        "updated_at",
    }
    assert [s["name"] for s in api.get("/api/skills?q=tea").json["skills"]] == ["brew-tea"]
    assert api.get("/api/skills?q=zzzz-nothing").json["skills"] == []

    detail = api.get("/api/skills/brew-tea").json["skill"]
    assert detail["body"].startswith("1. Boil water.")
    assert detail["files"] == []


def test_triggers_may_be_one_comma_separated_string(api):
    body = {**SKILL, "triggers": "tea, Brew ,kettle"}
    assert api.post("/api/skills", json=body).json["skill"]["triggers"] == [
        "tea",
        "brew",
        "kettle",
    ]


def test_create_twice_is_409(api, skills_dir):
    api.post("/api/skills", json=SKILL)
    before = _snapshot(skills_dir / "brew-tea")
    response = api.post("/api/skills", json={**SKILL, "description": "Other."})
    assert response.status_code == 409
    assert _snapshot(skills_dir / "brew-tea") == before


@pytest.mark.parametrize(
    "body, field",
    [
        ({**SKILL, "name": "Bad Name"}, "name"),
        ({**SKILL, "name": "../escape"}, "name"),
        ({**SKILL, "name": "a--b"}, "name"),
        ({**SKILL, "name": "x" * 65}, "name"),
        ({**SKILL, "name": 5}, "name"),
        ({**SKILL, "description": ""}, "description"),
        ({**SKILL, "description": "x" * 1025}, "description"),
        ({**SKILL, "triggers": [1, 2]}, "triggers"),
        ({**SKILL, "triggers": {"a": 1}}, "triggers"),
        ({**SKILL, "body": None}, "body"),
        ({**SKILL, "extra": "field"}, "extra"),
    ],
)
def test_create_refuses_invalid_input_naming_the_field(api, skills_dir, body, field):
    response = api.post("/api/skills", json=body)
    assert response.status_code == 400, response.json
    assert response.json["error"]["field"] == field
    assert api.get("/api/skills").json["skills"] == []
    assert not any(p.name != ".lock" for p in skills_dir.glob("*")) if skills_dir.exists() else True


@pytest.mark.parametrize("name", ["..", "...", "a%2Fb", "%2e%2e", "UPPER", "has space", "x" * 65])
def test_path_tricks_in_names_are_refused(api, name):
    for response in (
        api.get(f"/api/skills/{name}"),
        api.put(f"/api/skills/{name}", json={"body": "x"}),
        api.delete(f"/api/skills/{name}"),
        api.get(f"/api/skills/{name}/versions"),
        api.post(f"/api/skills/{name}/restore", json={"version": 1}),
        api.get(f"/api/skills/{name}/export"),
    ):
        assert response.status_code in (400, 404), (name, response.status_code)
        assert response.json["error"]


def test_unknown_skill_is_404(api):
    for response in (
        api.get("/api/skills/no-such"),
        api.put("/api/skills/no-such", json={"body": "x"}),
        api.delete("/api/skills/no-such"),
        api.get("/api/skills/no-such/versions"),
        api.post("/api/skills/no-such/restore", json={"version": 1}),
        api.get("/api/skills/no-such/export"),
    ):
        assert response.status_code == 404
        assert response.json["error"]["code"] == "not_found"


# ---- update, versions, restore, delete --------------------------------------------


def test_update_versions_diff_restore(api):
    api.post("/api/skills", json=SKILL)
    updated = api.put(
        "/api/skills/brew-tea", json={"body": "1. Boil water.\n2. Steep five minutes."}
    )
    assert updated.status_code == 200
    skill = updated.json["skill"]
    assert skill["version"] == 2
    assert skill["description"] == SKILL["description"]  # left out, kept
    assert skill["triggers"] == ["tea", "brew"]

    versions = api.get("/api/skills/brew-tea/versions").json
    assert [v["version"] for v in versions["versions"]] == [1, 2]
    assert versions["versions"][-1]["current"] is True
    assert versions["diff"]["from"] == 1 and versions["diff"]["to"] == 2
    assert "-2. Steep three minutes." in versions["diff"]["text"]
    assert "+2. Steep five minutes." in versions["diff"]["text"]
    same = api.get("/api/skills/brew-tea/versions?from=2&to=2").json["diff"]["text"]
    assert same == ""

    restored = api.post("/api/skills/brew-tea/restore", json={"version": 1})
    assert restored.status_code == 200
    assert restored.json["skill"]["version"] == 3
    assert "three minutes" in restored.json["skill"]["body"]


@pytest.mark.parametrize(
    "body",
    [{}, {"body": 5}, {"triggers": [3]}, {"name": "renamed"}, {"description": ""}, [], "x"],
)
def test_update_refuses_bad_bodies(api, skills_dir, body):
    api.post("/api/skills", json=SKILL)
    before = _snapshot(skills_dir / "brew-tea")
    response = api.put("/api/skills/brew-tea", json=body)
    assert response.status_code == 400
    assert _snapshot(skills_dir / "brew-tea") == before


@pytest.mark.parametrize("query", ["from=0", "from=9", "to=x", "from=-1"])
def test_versions_refuse_bad_numbers(api, query):
    api.post("/api/skills", json=SKILL)
    assert api.get(f"/api/skills/brew-tea/versions?{query}").status_code == 400


@pytest.mark.parametrize(
    "body", [{"version": 9}, {"version": 0}, {"version": "1"}, {}, {"version": True}]
)
def test_restore_refuses_bad_versions(api, body):
    api.post("/api/skills", json=SKILL)
    response = api.post("/api/skills/brew-tea/restore", json=body)
    assert response.status_code in (400, 404)
    assert api.get("/api/skills/brew-tea").json["skill"]["version"] == 1


def test_delete(api, skills_dir):
    api.post("/api/skills", json=SKILL)
    assert api.delete("/api/skills/brew-tea").status_code == 204
    assert api.get("/api/skills/brew-tea").status_code == 404
    assert not (skills_dir / "brew-tea").exists()


# ---- import and export --------------------------------------------------------------


def test_import_a_skill_md(api):
    response = _upload(api, SKILL_MD.encode(), "whatever-name.txt")
    assert response.status_code == 201
    assert [s["name"] for s in response.json["skills"]] == ["bake-bread"]
    assert api.get("/api/skills/bake-bread").json["skill"]["body"].startswith("1. Mix flour")


def test_import_a_zip_with_files_and_export_it_back(api):
    data = _zip(
        {
            "bake-bread/SKILL.md": SKILL_MD,
            "bake-bread/references/temps.md": "230C for 35 minutes",
        }
    )
    response = _upload(api, data)
    assert response.status_code == 201
    detail = api.get("/api/skills/bake-bread").json["skill"]
    assert detail["files"] == ["references/temps.md"]

    exported = api.get("/api/skills/bake-bread/export")
    assert exported.status_code == 200
    assert exported.mimetype == "application/zip"
    with zipfile.ZipFile(io.BytesIO(exported.data)) as archive:
        names = archive.namelist()
        assert "bake-bread/SKILL.md" in names
        assert archive.read("bake-bread/references/temps.md") == b"230C for 35 minutes"


@pytest.mark.parametrize(
    "members",
    [
        {"../evil/SKILL.md": SKILL_MD.replace("bake-bread", "evil")},
        {"/abs/SKILL.md": SKILL_MD.replace("bake-bread", "abs")},
        {"bake-bread/SKILL.md": "no frontmatter at all"},
        {"bake-bread/SKILL.md": SKILL_MD, "../outside.txt": "x"},
        {"readme.txt": "no skill here"},
        # A file and a folder of one name: unpacking fails half-way (it was a 500).
        {"bake-bread/SKILL.md": SKILL_MD, "bake-bread/x": "1", "bake-bread/x/y": "2"},
    ],
)
def test_hostile_or_broken_zips_install_nothing(api, skills_dir, tmp_path, members):
    response = _upload(api, _zip(members))
    assert response.status_code == 400, response.json
    assert response.json["error"]["field"] == "file"
    assert api.get("/api/skills").json["skills"] == []
    assert not (tmp_path / "evil").exists() and not (skills_dir.parent / "evil").exists()
    assert not (skills_dir.parent / "outside.txt").exists()


def test_a_zip_with_a_file_and_a_folder_of_one_name_says_so(api):
    data = _zip({"s/SKILL.md": SKILL_MD, "s/x": "1", "s/x/y": "2"})
    response = _upload(api, data)
    assert response.status_code == 400
    assert "a file and a folder of the same name" in response.json["error"]["message"]


def _alias_bomb() -> str:
    lines = ["a0: &a0 [" + ",".join(['"xxxxxxxxxx"'] * 9) + "]"]
    lines += [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 7)]
    body = "\n".join("  " + line for line in lines)
    return f"---\nname: bomb\ndescription: d\nmetadata:\n{body}\n---\nbody\n"


@pytest.mark.parametrize(
    ("text", "says"),
    [
        (_alias_bomb(), "anchor or alias"),  # 466 bytes that took 11 s and 239 MB
        (SKILL_MD.replace("Bakes a simple loaf.", "Bakes. " * 300), "limit is 1024"),
    ],
)
def test_costly_skill_files_are_refused_with_the_reason(api, skills_dir, text, says):
    response = _upload(api, text.encode(), "SKILL.md")
    assert response.status_code == 400, response.json
    assert says in response.json["error"]["message"]
    assert api.get("/api/skills").json["skills"] == []
    assert _snapshot(skills_dir) == {}


def test_import_refuses_an_existing_name_and_changes_nothing(api, skills_dir):
    _upload(api, SKILL_MD.encode())
    before = _snapshot(skills_dir / "bake-bread")
    response = _upload(api, SKILL_MD.replace("simple loaf", "different loaf").encode())
    assert response.status_code == 409
    assert _snapshot(skills_dir / "bake-bread") == before


def test_import_needs_a_file(api):
    assert api.post("/api/skills/import").status_code == 400
    response = api.post(
        "/api/skills/import", data={"other": "x"}, content_type="multipart/form-data"
    )
    assert response.status_code == 400
    assert _upload(api, b"").status_code == 400


def test_import_is_size_limited(api):
    from web.skills import MAX_UPLOAD_BYTES

    response = _upload(api, b"x" * (MAX_UPLOAD_BYTES + 10), "SKILL.md")
    assert response.status_code == 413
    assert response.json["error"]["code"] == "too_large"
    assert api.get("/api/skills").json["skills"] == []


def test_an_upload_beyond_the_request_cap_is_a_json_413(api):
    from web import MAX_CONTENT_LENGTH

    response = _upload(api, b"PK\x03\x04" + b"x" * MAX_CONTENT_LENGTH)
    assert response.status_code == 413
    assert response.json["error"]["code"] == "too_large"
    assert api.get("/api/skills").json["skills"] == []


def test_a_learned_skill_names_the_session_that_taught_it(app, api):
    runtime = app.extensions["hermes.runtime"]
    session = runtime.store.create_session()
    runtime.skills.create(
        name="tidy-downloads",
        description="Sort the Downloads folder by type. Use when it is cluttered.",
        body="1. List the files.\n2. Move each into a folder named after its type.",
        created_by="agent",
        source_session=session.id,
    )
    assert api.get("/api/skills/tidy-downloads").json["skill"]["source_session"] == session.id
    api.post(
        "/api/skills",
        json={"name": "by-hand", "description": "Mine. Use always.", "body": "Do it."},
    )
    assert api.get("/api/skills/by-hand").json["skill"]["source_session"] is None
