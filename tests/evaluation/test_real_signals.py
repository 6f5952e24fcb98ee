"""Real-signal runs with a fake model: every configuration sees the same signals, and the model
is asked once per distinct prompt, while each configuration's usage counts what it would spend."""

from __future__ import annotations

from typing import Any

from agents.evaluation.chat_models import FakeSignalsChatModel, fake_chat_model
from agents.evaluation.runner import RunConfig, run_offline
from agents.evaluation.scenario import load_scenarios


class CountingFake(FakeSignalsChatModel):
    def _call(self, messages: list[Any], *args: Any, **kwargs: Any) -> str:
        CALLS.append(str(messages[-1].content))
        return super()._call(messages, *args, **kwargs)


CALLS: list[str] = []


def test_configurations_of_a_run_share_the_model_answers_but_count_their_own_usage() -> None:
    # given two policies with and without memory over one session of the shipped set
    CALLS.clear()
    scenarios = load_scenarios("default")
    config = RunConfig(
        policies=["value_of_information", "llm_judge"],
        mode="real",
        memory=(True, False),
        sessions=1,
    )
    model = CountingFake(responses=["{}"])
    # when the run plays
    run = run_offline(scenarios, config, chat_model=model)
    # then the model saw each distinct prompt once
    assert CALLS
    assert len(CALLS) == len(set(CALLS))
    # and every configuration still reports the calls its own turns made
    counted = sum(result.model_calls for result in run.results)
    assert counted > len(CALLS)
    # (only the calls each policy makes in the app: llm_judge one rating, VoI extraction and
    # interpretations)
    calls = {"llm_judge": 1, "value_of_information": 2}
    assert all(r.model_calls == calls[r.policy] * r.agent_turns for r in run.results)


def test_the_fake_model_answers_each_signal_schema_whatever_the_order() -> None:
    model = fake_chat_model()
    for title, key in (("Interpretations", "interpretations"), ("SlotExtraction", "slots")):
        prompt = f'Read this.\n\nJSON schema:\n{{"title": "{title}"}}'
        assert key in str(model.invoke(prompt).content)
