"""Task templates and model signals in the turn engine (agents/engine/signals.py)."""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

import pytest
from django.contrib.auth.models import User

from agents import jobs, llm
from agents.engine import policies_bridge, runner, stream
from agents.llm import fakes
from agents.models import Agent, ModelCall, Question, Trigger, Turn, TurnStatus
from agents.policies import Signals
from agents.services import questions as question_services
from agents.services import turns as turn_services
from collab.tasks import services as task_services
from collab.tasks.models import Task
from collab.tasks.services import create_task
from collab.workspaces.models import Workspace
from tests import factories


def _task(workspace: Workspace, alice: User, *, title: str, template: str = "") -> Task:
    return create_task(
        membership=factories.membership_of(workspace, alice), title=title, template=template
    )


def _turn(agent: Agent, task: Task, prompt: str) -> Turn:
    agent.tasks.add(task)
    return turn_services.start_turn(
        agent=agent, task=task, trigger=Trigger.ASK, inputs={"prompt": prompt}
    )


def test_the_engine_gives_the_policy_the_tasks_template(
    workspace: Workspace, alice: User, make_agent: Callable[..., Agent]
) -> None:
    """The title names no template keyword: only Task.template makes it a travel plan."""
    agent = make_agent("Mira", policy_name="ask_once")
    task = _task(workspace, alice, title="Offsite in spring", template="travel_plan")
    turn = _turn(agent, task, "Sort this out for us please")

    assert runner.run_turn(turn_id=turn.pk) == TurnStatus.WAITING

    turn.refresh_from_db()
    assert turn.context["task"]["template"] == "travel_plan"
    assert turn.policy_decision["situation"]["template"] == "travel_plan"
    assert "Where are you going?" in Question.objects.get(turn=turn).text
    assert not ModelCall.objects.filter(turn=turn).exists()


def test_a_free_form_task_leaves_the_template_to_the_adapters_guess(
    workspace: Workspace, alice: User, make_agent: Callable[..., Agent]
) -> None:
    agent = make_agent("Mira", policy_name="ask_once")
    task = _task(workspace, alice, title="Offsite in spring")
    turn = _turn(agent, task, "Sort this out for us please")

    runner.run_turn(turn_id=turn.pk)

    turn.refresh_from_db()
    assert turn.context["task"]["template"] == ""
    assert turn.policy_decision["situation"]["template"] is None


# --- model signals ------------------------------------------------------------------------------


def _is_signal_prompt(messages: list[Any]) -> str:
    """Which signal prompt this is ("" for the engine's decision prompt)."""
    prompt = str(messages[-1].content) if messages else ""
    for marker, kind in (
        ("Rate how ambiguous", "ambiguity"),
        ("Read this request the way", "sample"),
        ("Give up to", "samples"),
        ("List the slot values this text states", "extract"),
    ):
        if prompt.startswith(marker):
            return kind
    return ""


def _reply(text: str) -> str:
    return json.dumps({"actions": [{"kind": "reply", "text": text}]})


def _judge(score: float) -> Callable[[list[Any]], str]:
    def behaviour(messages: list[Any]) -> str:
        if _is_signal_prompt(messages) == "ambiguity":
            return json.dumps(
                {"ambiguity": score, "reason": "no dates", "unclear_slots": ["start_date"]}
            )
        return _reply("Here is a first plan.")

    return behaviour


def _purposes(turn: Turn) -> list[str]:
    return sorted(ModelCall.objects.filter(turn=turn).values_list("purpose", flat=True))


@pytest.fixture
def trip(workspace: Workspace, alice: User) -> Task:
    return _task(workspace, alice, title="Offsite in spring", template="travel_plan")


def test_llm_judge_asks_when_the_model_rates_the_request_ambiguous(
    trip: Task, make_agent: Callable[..., Agent]
) -> None:
    fakes.register_fake_behaviour("judge-high", _judge(0.9))
    agent = make_agent("Mira", behaviour="judge-high", policy_name="llm_judge")
    turn = _turn(agent, trip, "Plan our trip to Lisbon")

    assert runner.run_turn(turn_id=turn.pk) == TurnStatus.WAITING

    turn.refresh_from_db()
    assert turn.policy_decision["decision"] == "ask"
    assert turn.policy_decision["situation"]["signals"]["ambiguity"] == 0.9
    assert "When does the trip start?" in Question.objects.get(turn=turn).text
    call = ModelCall.objects.get(turn=turn)  # asking costs no decision call
    assert (call.purpose, call.error) == ("signals:ambiguity", "")
    assert "Plan our trip to Lisbon" in call.messages[0]["content"]
    assert '"ambiguity": 0.9' in call.response
    assert call.tokens_in > 0
    assert call.tokens_out > 0
    assert (turn.tokens_in, turn.tokens_out) == (call.tokens_in, call.tokens_out)


def test_llm_judge_acts_when_the_model_rates_the_request_clear(
    trip: Task, make_agent: Callable[..., Agent]
) -> None:
    fakes.register_fake_behaviour("judge-low", _judge(0.1))
    agent = make_agent("Mira", behaviour="judge-low", policy_name="llm_judge")
    turn = _turn(agent, trip, "Plan our trip to Lisbon")

    assert runner.run_turn(turn_id=turn.pk) == TurnStatus.DONE

    turn.refresh_from_db()
    assert turn.policy_decision["decision"] == "act"
    assert not Question.objects.exists()
    assert _purposes(turn) == ["decide", "signals:ambiguity"]
    calls = ModelCall.objects.filter(turn=turn)
    assert turn.tokens_in == sum(c.tokens_in for c in calls)
    assert turn.tokens_out == sum(c.tokens_out for c in calls)


def _sampler(*, single: bool = False) -> Callable[[list[Any]], str]:
    """Readings that agree on the start date and disagree on the budget."""
    lock = threading.Lock()
    count = itertools.count()
    budgets = ["EUR 500", "EUR 1500", "EUR 3000", "EUR 6000"]

    def reading(index: int) -> dict[str, Any]:
        return {
            "summary": f"reading {index}",
            "values": [
                {"slot": "start_date", "value": "2027-05-04"},
                {"slot": "budget", "value": budgets[index % len(budgets)]},
            ],
        }

    def behaviour(messages: list[Any]) -> str:
        kind = _is_signal_prompt(messages)
        if kind == "sample" and not single:
            with lock:
                index = next(count)
            return json.dumps(reading(index))
        if kind == "samples" and single:
            return json.dumps({"interpretations": [reading(i) for i in range(4)]})
        return _reply("Here is a first plan.")

    return behaviour


def test_intent_sampling_asks_about_the_slot_where_the_samples_disagree(
    trip: Task, make_agent: Callable[..., Agent]
) -> None:
    fakes.register_fake_behaviour("sampler", _sampler())
    agent = make_agent("Mira", behaviour="sampler", policy_name="intent_sampling")
    turn = _turn(agent, trip, "Plan our trip to Lisbon")

    assert runner.run_turn(turn_id=turn.pk) == TurnStatus.WAITING

    turn.refresh_from_db()
    question = Question.objects.get(turn=turn).text
    assert "What is the total budget?" in question
    assert "When does the trip start?" not in question
    assert turn.policy_decision["detail"]["questions"][0]["slots"] == ["budget"]
    assert len(turn.policy_decision["situation"]["signals"]["interpretations"]) == 4
    assert _purposes(turn) == ["signals:sample"] * 4
    assert set(ModelCall.objects.filter(turn=turn).values_list("error", flat=True)) == {""}


def test_a_model_that_cannot_sample_gives_its_readings_in_one_call(
    trip: Task, make_agent: Callable[..., Agent], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(llm, "can_sample", lambda profile: False)
    fakes.register_fake_behaviour("one-call-sampler", _sampler(single=True))
    agent = make_agent("Mira", behaviour="one-call-sampler", policy_name="intent_sampling")
    turn = _turn(agent, trip, "Plan our trip to Lisbon")

    assert runner.run_turn(turn_id=turn.pk) == TurnStatus.WAITING

    assert "What is the total budget?" in Question.objects.get(turn=turn).text
    assert _purposes(turn) == ["signals:sample"]


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        ("value_of_information", ["signals:extract"] + ["signals:sample"] * 4),
        ("bandit", ["signals:ambiguity", "signals:extract"] + ["signals:sample"] * 4),
    ],
)
def test_value_of_information_and_bandit_get_an_extraction_and_samples(
    trip: Task, make_agent: Callable[..., Agent], policy: str, expected: list[str]
) -> None:
    fakes.register_fake_behaviour("sampler", _sampler())
    agent = make_agent("Mira", behaviour="sampler", policy_name=policy)
    turn = _turn(agent, trip, "Plan our trip to Lisbon")

    runner.run_turn(turn_id=turn.pk)

    turn.refresh_from_db()
    assert [p for p in _purposes(turn) if p != "decide"] == expected
    assert len(turn.policy_decision["situation"]["signals"]["interpretations"]) == 4


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ("Sure! The request is quite clear.", "holds no JSON object"),
        ('{"ambiguity": 0.9, "reason": "unfinished', "is incomplete"),
        ('{"ambiguity": "very"}', "does not match AmbiguityRating"),
    ],
)
def test_an_invalid_signal_answer_gives_no_signal_and_the_turn_still_completes(
    trip: Task, make_agent: Callable[..., Agent], answer: str, reason: str
) -> None:
    def garbled(messages: list[Any]) -> str:
        return answer if _is_signal_prompt(messages) else _reply("Here is a first plan.")

    fakes.register_fake_behaviour("garbled", garbled)
    agent = make_agent("Mira", behaviour="garbled", policy_name="llm_judge")
    turn = _turn(agent, trip, "Plan our trip to Lisbon")

    assert runner.run_turn(turn_id=turn.pk) == TurnStatus.DONE

    turn.refresh_from_db()
    assert turn.policy_decision["situation"]["signals"]["ambiguity"] is None
    assert turn.policy_decision["reason"] == "No ambiguity rating: acting."
    call = ModelCall.objects.get(turn=turn, purpose="signals:ambiguity")
    assert reason in call.error
    assert call.response == answer
    assert ModelCall.objects.get(turn=turn, purpose="decide").error == ""


def test_a_failing_signal_call_is_recorded_and_the_turn_still_completes(
    trip: Task, make_agent: Callable[..., Agent]
) -> None:
    def fails_on_signals(messages: list[Any]) -> str:
        if _is_signal_prompt(messages):
            raise llm.ModelError("connection reset")
        return _reply("Here is a first plan.")

    fakes.register_fake_behaviour("flaky-signals", fails_on_signals)
    agent = make_agent("Mira", behaviour="flaky-signals", policy_name="intent_sampling")
    turn = _turn(agent, trip, "Plan our trip to Lisbon")

    assert runner.run_turn(turn_id=turn.pk) == TurnStatus.DONE

    errors = ModelCall.objects.filter(turn=turn, purpose="signals:sample").values_list(
        "error", flat=True
    )
    assert list(errors) == ["ModelError: connection reset"] * 4
    assert Turn.objects.get(pk=turn.pk).policy_decision["decision"] == "act"


def test_a_signal_call_over_its_time_share_gives_no_signal(
    trip: Task, make_agent: Callable[..., Agent], settings: Any
) -> None:
    release = threading.Event()

    def stalls(messages: list[Any]) -> str:
        if _is_signal_prompt(messages):
            release.wait(10)
            return "{}"
        return _reply("Here is a first plan.")

    # A first turn loads what every turn reads (the detectors' parsers and gazetteer take
    # seconds on a cold, busy process); only then does a one-second budget measure the signals.
    fakes.register_fake_behaviour("judge-low", _judge(0.1))
    warm = make_agent("Warm", behaviour="judge-low", policy_name="llm_judge")
    assert (
        runner.run_turn(turn_id=_turn(warm, trip, "Plan our trip to Lisbon").pk) == TurnStatus.DONE
    )

    settings.AGENTS_TURN_TIME_BUDGET_SECONDS = 1  # the signals get half of it
    fakes.register_fake_behaviour("stalls", stalls)
    agent = make_agent("Mira", behaviour="stalls", policy_name="llm_judge")
    turn = _turn(agent, trip, "Plan our trip to Lisbon")
    try:
        assert runner.run_turn(turn_id=turn.pk) == TurnStatus.DONE
    finally:
        release.set()

    call = ModelCall.objects.get(turn=turn, purpose="signals:ambiguity")
    assert call.error.startswith("TimeoutError")


def test_no_signals_are_computed_for_never_ask_once_and_the_default(
    trip: Task, make_agent: Callable[..., Agent]
) -> None:
    fakes.register_fake_behaviour("judge-high", _judge(0.9))
    quiet = make_agent("Quiet", behaviour="judge-high", policy_name="never")
    once = make_agent("Once", behaviour="judge-high", policy_name="ask_once")
    default = make_agent("Default", behaviour="judge-high")  # DEFAULT_POLICY
    first = _turn(quiet, trip, "Plan our trip to Lisbon")
    second = _turn(once, trip, "Plan our trip to Lisbon")
    third = _turn(default, trip, "Plan our trip to Lisbon")

    for turn in (first, second, third):
        runner.run_turn(turn_id=turn.pk)

    assert _purposes(first) == ["decide"]
    assert _purposes(second) == []  # ask_once asked without any model call
    assert default.policy_name == "ask_when_blocked"
    assert not [p for p in _purposes(third) if p.startswith("signals:")]


def test_a_registered_provider_keeps_precedence_over_model_signals(
    trip: Task, make_agent: Callable[..., Agent], monkeypatch: pytest.MonkeyPatch
) -> None:
    def oracle(context: dict[str, Any]) -> dict[str, Any]:
        return {"template_kind": "travel_plan", "signals": Signals(ambiguity=0.05)}

    monkeypatch.setattr(policies_bridge, "_signal_providers", [oracle])
    fakes.register_fake_behaviour("judge-high", _judge(0.9))
    agent = make_agent("Mira", behaviour="judge-high", policy_name="llm_judge")
    turn = _turn(agent, trip, "Plan our trip to Lisbon")

    assert runner.run_turn(turn_id=turn.pk) == TurnStatus.DONE

    turn.refresh_from_db()
    assert turn.policy_decision["situation"]["signals"]["ambiguity"] == 0.05
    assert _purposes(turn) == ["decide"]


def test_a_person_asks_the_judge_answers_its_question_and_it_then_acts(
    workspace: Workspace, alice: User, bob: User, trip: Task, make_agent: Callable[..., Agent]
) -> None:
    """Through the real path: a chat mention queues the turn, the job runs it, the answer to the
    question card starts the next turn, whose rating sees the answer."""

    def judge(messages: list[Any]) -> str:
        if _is_signal_prompt(messages) == "ambiguity":
            known = "- start_date:" in str(messages[-1].content)
            return json.dumps(
                {
                    "ambiguity": 0.1 if known else 0.9,
                    "unclear_slots": [] if known else ["start_date"],
                }
            )
        return _reply("Here is a first plan.")

    fakes.register_fake_behaviour("judge-memory", judge)
    agent = make_agent("Mira", behaviour="judge-memory", policy_name="llm_judge")
    agent.tasks.add(trip)
    member = factories.membership_of(workspace, bob)
    task_services.post_message(membership=member, task=trip, body="@Mira plan our trip to Lisbon")
    first = Turn.objects.get()

    assert jobs.run_turn_job(first.pk) == TurnStatus.WAITING
    question = Question.objects.get(turn=first)
    question_services.answer_question(membership=member, question=question, answer="4 May 2027")
    second = Turn.objects.exclude(pk=first.pk).get()
    assert jobs.run_turn_job(second.pk) == TurnStatus.DONE

    second.refresh_from_db()
    assert "When does the trip start?" in question.text
    assert second.policy_decision["decision"] == "act"
    slots = {s["spec"]["name"]: s for s in second.policy_decision["situation"]["slots"]}
    assert slots["start_date"]["value"] == "2027-05-04"
    assert _purposes(first) == ["signals:ambiguity"]
    assert _purposes(second) == ["decide", "signals:ambiguity"]
    reply = trip.messages.values_list("body", flat=True).last()
    assert reply.startswith("Here is a first plan.")
    assert "I chose the budget myself" in reply  # the policy's assumption, stated in the reply


def test_a_stop_while_the_signals_are_computed_cancels_the_turn(
    trip: Task, make_agent: Callable[..., Agent]
) -> None:
    """Waiting for a signal call renews the lease; once the turn is no longer running (a Stop,
    or another worker took it over) the wait ends with TurnCancelled."""
    agent = make_agent("Mira", policy_name="llm_judge")
    turn = _turn(agent, trip, "Plan our trip to Lisbon")
    Turn.objects.filter(pk=turn.pk).update(status=TurnStatus.RUNNING)
    never_answers: Future[Any] = Future()

    Turn.objects.filter(pk=turn.pk).update(status=TurnStatus.CANCELLED)

    with pytest.raises(stream.TurnCancelled):
        stream.await_signal(turn, never_answers, deadline=time.monotonic() + 60)


def test_waiting_for_a_signal_renews_the_lease_until_the_answer_comes(
    trip: Task, make_agent: Callable[..., Agent]
) -> None:
    agent = make_agent("Mira", policy_name="llm_judge")
    turn = _turn(agent, trip, "Plan our trip to Lisbon")
    Turn.objects.filter(pk=turn.pk).update(status=TurnStatus.RUNNING, lease_expires_at=None)
    answer: Future[Any] = Future()
    threading.Timer(0.6, answer.set_result, args=["rated"]).start()

    assert stream.await_signal(turn, answer, deadline=time.monotonic() + 60) == "rated"

    assert Turn.objects.get(pk=turn.pk).lease_expires_at is not None
