from __future__ import annotations

import json
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage

from agents import llm
from agents.llm import embedded, fakes, providers
from agents.models import ModelProfile, Provider
from agents.schemas import DecisionOut, SmallDecisionOut, json_schema


def _profile(**fields: object) -> ModelProfile:
    return ModelProfile(name="p", **fields)  # type: ignore[arg-type]


def test_fake_model_streams_a_decision_that_validates() -> None:
    profile = _profile(provider=Provider.FAKE, model="echo")
    model = llm.build_chat_model(profile)
    prompt = [HumanMessage(content="Chat, oldest first:\n- bob: plan the offsite")]

    pieces = list(llm.stream_model(model, prompt))

    assert len(pieces) > 1
    decision = llm.parse_decision(profile, "".join(p.text for p in pieces))
    assert decision.actions[0].kind == "reply"
    assert decision.actions[0].text == "Noted: plan the offsite"


def test_every_string_and_list_in_the_schemas_is_bounded() -> None:
    def walk(node: object) -> None:
        if isinstance(node, dict):
            if node.get("type") == "string" and "enum" not in node and "const" not in node:
                assert "maxLength" in node, node
            if node.get("type") == "array":
                assert "maxItems" in node, node
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(json_schema(DecisionOut))
    walk(json_schema(SmallDecisionOut))


def test_embedded_profiles_get_the_narrow_schema() -> None:
    assert llm.decision_schema(llm.embedded_profile()) is SmallDecisionOut
    assert llm.decision_schema(_profile(provider=Provider.OPENAI)) is DecisionOut


def test_small_decision_becomes_a_one_action_decision() -> None:
    decision = llm.parse_decision(
        llm.embedded_profile(), json.dumps({"kind": "ask", "text": "Which date?"})
    )
    assert [a.kind for a in decision.actions] == ["ask"]


def test_unknown_action_kind_is_a_model_error() -> None:
    with pytest.raises(llm.ModelError):
        llm.parse_decision(_profile(provider=Provider.FAKE), '{"actions": [{"kind": "dance"}]}')


def test_truncated_output_is_a_model_error() -> None:
    with pytest.raises(llm.ModelError):
        llm.parse_decision(_profile(provider=Provider.FAKE), '{"actions": [{"kind": "reply", "te')


def test_openai_compatible_profile_builds_a_json_schema_bound_model() -> None:
    profile = _profile(
        provider=Provider.OPENAI,
        model="qwen2.5:0.5b",
        base_url="http://127.0.0.1:11434/v1",
        temperature=0.1,
        max_tokens=300,
        timeout_seconds=5,
    )
    model = llm.build_chat_model(profile)
    assert isinstance(model, providers.OpenAICompatibleChatModel)
    response_format = model.strict.kwargs["response_format"]
    assert response_format["type"] == "json_schema"
    assert response_format["json_schema"]["schema"] == json_schema(DecisionOut)
    assert model.strict.bound.model_name == "qwen2.5:0.5b"
    # The JSON-mode fallback (llama-cpp-python's server) carries the same schema, its long
    # string bounds left to the final validation.
    loose = model.loose.kwargs["extra_body"]["response_format"]
    assert loose["type"] == "json_object"
    assert loose["schema"] == providers.grammar_friendly(json_schema(DecisionOut))
    assert "maxLength" not in json.dumps(
        loose["schema"]["$defs"]["ActionOut"]["properties"]["text"]
    )


def test_hosted_profile_without_its_key_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLLAB_TEST_MISSING_KEY", raising=False)
    profile = _profile(
        provider=Provider.OPENAI, model="gpt-4o-mini", api_key_env="COLLAB_TEST_MISSING_KEY"
    )
    with pytest.raises(llm.ModelConfigError, match="COLLAB_TEST_MISSING_KEY"):
        llm.build_chat_model(profile)


def test_model_file_with_another_hash_is_refused(tmp_path: Path) -> None:
    bogus = tmp_path / "model.gguf"
    bogus.write_bytes(b"not a model")
    with pytest.raises(llm.ModelConfigError, match="pinned hash"):
        embedded.verify_model_file(bogus)


def test_failing_fake_model_raises_a_model_error() -> None:
    model = llm.build_chat_model(_profile(provider=Provider.FAKE, model="fail"))
    with pytest.raises(llm.ModelError):
        list(llm.stream_model(model, [HumanMessage(content="hi")]))


def test_unknown_fake_behaviour_is_a_configuration_error() -> None:
    model = llm.build_chat_model(_profile(provider=Provider.FAKE, model="nonsense"))
    with pytest.raises(llm.ModelConfigError):
        list(llm.stream_model(model, [HumanMessage(content="hi")]))


def test_profile_cost_uses_prices_per_thousand_tokens() -> None:
    from decimal import Decimal

    profile = _profile(price_in_per_1k=Decimal("0.5"), price_out_per_1k=Decimal("1.5"))
    assert profile.cost(2000, 1000) == Decimal("2.500000")


def _draft_for(*preferences: str) -> DecisionOut:
    prompt = "Task: Q2 report\n\nDocument (0 characters):\n<<<\n\n>>>"
    if preferences:
        prompt += "\n\nWhat the people involved prefer:\n" + "\n".join(preferences)
    prompt += "\n\nChat, oldest first:\n- alice: @Mira draft it [lists=numbered]"
    model = fakes.BehaviourFakeChatModel(behaviour="draft")
    return DecisionOut.model_validate_json(str(model.invoke([HumanMessage(prompt)]).content))


def test_the_draft_behaviour_follows_only_the_preferences_the_prompt_lists() -> None:
    shaped = _draft_for(
        "* (alice's preference) I want bullet points [lists=bullets]",
        "* (alice's preference) I always write British English [spelling=en-GB]",
        "* (team preference) Numbered lists [lists=numbered]",
    )
    plain = _draft_for()

    edit = shaped.actions[1]
    assert edit.kind == "edit"
    assert edit.replace.startswith("\n## Q2 report\n\n- Colour-code the milestones")
    assert "- Organise the review" in edit.replace
    assert "1." not in edit.replace  # the first line of a key wins; chat text is not read
    assert plain.actions[1].replace == (
        "\n## Q2 report\n\nColor-code the milestones on one page. Organize the review with "
        "everyone involved. Summarize the open questions for the next meeting.\n"
    )


def test_the_draft_behaviour_writes_numbered_lists_in_american_spelling() -> None:
    edit = _draft_for(
        "* (bob's preference) I prefer numbered lists [lists=numbered]",
        "* (bob's preference) Please use American spelling now [spelling=en-US]",
    ).actions[1]
    assert edit.replace.splitlines()[4] == "2. Organize the review with everyone involved"
