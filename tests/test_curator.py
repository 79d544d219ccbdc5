"""The curator: parsing the model's proposal, and creating then refining skills."""

from __future__ import annotations

import pytest

from hermes.errors import ProviderError
from hermes.learning.curator import (
    Curator,
    parse_skill_proposal,
    render_transcript,
)
from tests.fixtures.skills import ANSWER, ScriptedProvider, three_tool_turn

# -- parsing -------------------------------------------------------------------


def test_parse_plain_answer():
    proposal = parse_skill_proposal(ANSWER)
    assert proposal.name == "deploy-flask-railway"
    assert proposal.description.startswith("Deploy a Flask app")
    assert proposal.triggers == ("railway", "deploy", "flask", "gunicorn")
    assert proposal.body.startswith("1. Add `gunicorn`") and proposal.body.endswith(
        "`railway logs`."
    )


@pytest.mark.parametrize(
    "variant",
    [
        "```\n" + ANSWER + "```",
        "```markdown\n" + ANSWER + "\n```\n",
        ANSWER.replace("\n", "\r\n"),
        "\n\n   " + ANSWER.replace("NAME:", "NAME:   ") + "\n\n\n",
        ANSWER.replace("NAME:", "**NAME:**")
        .replace("DESCRIPTION:", "**DESCRIPTION**:")
        .replace("TRIGGERS:", "**TRIGGERS:**")
        .replace("BODY:", "**BODY:**"),
        "Here is the skill:\n\n" + ANSWER,
        ANSWER.replace("NAME: deploy-flask-railway", "NAME: `deploy-flask-railway`"),
        ANSWER.replace("BODY:\n1.", "BODY: 1."),
    ],
)
def test_parse_tolerates_formatting_noise(variant):
    proposal = parse_skill_proposal(variant)
    assert proposal is not None
    assert proposal.name == "deploy-flask-railway"
    assert proposal.triggers == ("railway", "deploy", "flask", "gunicorn")
    assert "railway up" in proposal.body and not proposal.body.endswith("```")


def test_body_keeps_its_own_code_blocks_and_field_like_lines():
    body = "1. Run:\n```bash\nrailway up\n```\nNAME: this line is part of the body\n```\nend\n```"
    proposal = parse_skill_proposal(ANSWER.split("BODY:")[0] + "BODY:\n" + body)
    assert proposal.body == body


@pytest.mark.parametrize(
    "answer",
    [
        "NONE",
        "none.",
        "**NONE**",
        "```\nNONE\n```",
        "",
        "   ",
        "I think this was a nice conversation!",
        "NAME: x",  # missing fields
        ANSWER.replace("deploy-flask-railway", "Deploy_Flask"),
        ANSWER.replace("deploy-flask-railway", "../../etc"),
        ANSWER.replace("deploy-flask-railway", "a" * 65),
        ANSWER.split("BODY:")[0] + "BODY:\n   \n",
        ANSWER.replace("Deploy a Flask app", "D" * 1100),
    ],
)
def test_parse_refuses_none_garbage_and_invalid(answer):
    assert parse_skill_proposal(answer) is None


# -- the curator with a scripted model -------------------------------------------


def test_transcript_cuts_long_tool_output():
    text = render_transcript(three_tool_turn())
    assert "USER: deploy my flask app" in text and "TOOL CALL run_bash" in text
    assert "more characters]" in text and len(text) < 8000


def test_three_tool_turn_creates_v1_then_same_procedure_refines_to_v2(skills, config):
    provider = ScriptedProvider(
        ANSWER,
        ANSWER.replace("3. Run", "3. Set PORT.\n4. Run"),
    )
    curator = Curator(provider, skills)
    event = curator.propose_skill(three_tool_turn(), session_id=11)
    assert (event.action, event.name, event.version) == ("created", "deploy-flask-railway", 1)
    skill = skills.get("deploy-flask-railway")
    assert (skill.version, skill.source_session, skill.created_by) == (1, 11, "agent")
    assert skill.triggers == ["railway", "deploy", "flask", "gunicorn"]
    assert (config.skills_dir / "deploy-flask-railway" / "SKILL.md").is_file()

    event = curator.propose_skill(three_tool_turn("ship the flask app again"), session_id=12)
    assert (event.action, event.name, event.version) == ("refined", "deploy-flask-railway", 2)
    assert [s.name for s in skills.list()] == ["deploy-flask-railway"]
    skill = skills.get("deploy-flask-railway")
    assert skill.source_session == 12 and "Set PORT" in skill.body
    # the second prompt showed the model the existing skill, so it could reuse the name
    second_prompt = provider.requests[1].messages[0].content
    assert "- deploy-flask-railway: Deploy a Flask app" in second_prompt
    assert provider.requests[1].system.startswith("You maintain the skill library")


def test_same_purpose_under_another_name_refines_instead_of_twin(skills):
    skills.create(
        "deploy-flask-railway",
        "Deploy a Flask app to Railway with gunicorn.",
        "old steps",
        triggers=["railway", "deploy", "flask", "gunicorn"],
    )
    twin = ANSWER.replace("NAME: deploy-flask-railway", "NAME: railway-flask-deploy")
    event = Curator(ScriptedProvider(twin), skills).propose_skill(three_tool_turn())
    assert (event.action, event.name, event.version) == ("refined", "deploy-flask-railway", 2)
    assert [s.name for s in skills.list()] == ["deploy-flask-railway"]


def test_unrelated_skill_is_created_alongside(skills):
    skills.create("make-tea", "Brew green tea.", "Boil water.", triggers=["tea"])
    event = Curator(ScriptedProvider(ANSWER), skills).propose_skill(three_tool_turn())
    assert event.action == "created"
    assert len(skills.list()) == 2


@pytest.mark.parametrize(
    "answer",
    ["NONE", "total garbage", ProviderError("overloaded", retryable=True)],
)
def test_none_garbage_and_provider_errors_return_none(skills, answer):
    assert Curator(ScriptedProvider(answer), skills).propose_skill(three_tool_turn()) is None
    assert skills.list() == []


def test_summarize_session(skills):
    transcript = three_tool_turn()
    note = Curator(ScriptedProvider("I deployed the user's Flask app to Railway."), skills)
    assert note.summarize_session(transcript) == "I deployed the user's Flask app to Railway."
    assert Curator(ScriptedProvider("NONE"), skills).summarize_session(transcript) is None
    failing = Curator(ScriptedProvider(ProviderError("down")), skills)
    assert failing.summarize_session(transcript) is None
    assert Curator(ScriptedProvider(), skills).summarize_session([]) is None
