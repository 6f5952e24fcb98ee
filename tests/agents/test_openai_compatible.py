"""The ``openai`` provider over real HTTP: turns run against llama-cpp-python's own
OpenAI-compatible server serving the shipped SmolLM2 file (tests/agents/openai_server.py).

The model is tiny: these tests check the path (streaming, JSON that matches the decision
schema, errors in plain words, no retry where a retry cannot help), not the wording.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from django.contrib.auth.models import User

from agents import llm
from agents.engine import runner
from agents.llm import providers
from agents.models import Action, Agent, ModelCall, ModelProfile, Provider, TurnStatus
from agents.outbox import events
from agents.schemas import DecisionOut
from agents.services import agents as agent_services
from collab.tasks import services as task_services
from collab.tasks.models import Document, Message, Task
from collab.workspaces.models import Workspace
from tests import factories
from tests.agents.openai_server import closed_port, llama_server, silent_server  # noqa: F401

pytestmark = pytest.mark.timeout(900)  # real CPU inference on a shared 2-core machine


@pytest.fixture(autouse=True)
def _no_jobs(sent_jobs: list[Any], settings: Any) -> None:
    # The full prompt (schema included) on 2 shared cores: minutes, not the usual 2.
    settings.AGENTS_TURN_TIME_BUDGET_SECONDS = 800


def _agent(workspace: Workspace, alice: User, base_url: str, **fields: Any) -> Agent:
    profile = ModelProfile.objects.create(
        name=f"Local server {ModelProfile.objects.count()}",
        provider=Provider.OPENAI,
        model="smollm2",
        base_url=base_url,
        max_tokens=fields.pop("max_tokens", 160),
        temperature=0.0,
        timeout_seconds=fields.pop("timeout_seconds", 300),
    )
    return agent_services.create_agent(
        membership=factories.membership_of(workspace, alice),
        name="Local",
        model_profile=profile,
        policy_name="never",
        **fields,
    )


def _mention(workspace: Workspace, bob: User, task: Task, agent: Agent, body: str) -> int:
    task_services.post_message(
        membership=factories.membership_of(workspace, bob), task=task, body=body
    )
    return agent.turns.get().pk


def test_a_turn_streams_json_that_matches_the_decision_schema_from_a_real_server(
    workspace: Workspace,
    alice: User,
    bob: User,
    task: Task,
    llama_server: str,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    published: list[str] = []
    real_stream = events.stream
    monkeypatch.setattr(
        events,
        "stream",
        lambda turn, text, delta: (published.append(text), real_stream(turn, text, delta)),
    )
    agent = _agent(workspace, alice, llama_server)
    turn_id = _mention(workspace, bob, task, agent, "@Local say hello to the team in one sentence.")

    outcome = runner.run_turn(turn_id=turn_id)

    call = ModelCall.objects.get(turn_id=turn_id)
    assert outcome in (TurnStatus.DONE, TurnStatus.WAITING), (call.error, call.response)
    assert (call.provider, call.error) == ("openai", "")
    decision = DecisionOut.model_validate_json(call.response)  # the whole answer, as streamed
    assert decision.actions
    action = Action.objects.filter(turn_id=turn_id).order_by("index").first()
    assert action is not None  # stored, then applied, or skipped with the reason logged
    assert action.status == Action.Status.APPLIED or action.detail
    assert call.tokens_out > 0
    assert call.latency_ms > 0
    # Streamed: the reply reached pages in growing pieces before the turn ended.
    if decision.actions[0].kind in ("reply", "ask") and len(decision.actions[0].text) > 20:
        assert len(published) >= 2
        assert all(later.startswith(earlier) for earlier, later in itertools.pairwise(published))
    # llama-cpp-python's server refuses the json_schema format; the path fell back to
    # json_object with the schema (and remembers that for this server).
    assert llama_server in providers._JSON_OBJECT_ENDPOINTS


def test_a_request_the_server_cannot_serve_fails_the_turn_with_a_clear_message_and_no_retry(
    workspace: Workspace,
    alice: User,
    bob: User,
    task: Task,
    llama_server: str,  # noqa: F811
) -> None:
    # A document longer than the server's context window: llama-cpp-python's server answers
    # 200 with an empty stream, every time.
    Document.objects.filter(task=task).update(text="A long line of the plan. " * 400)
    agent = _agent(workspace, alice, llama_server)
    turn_id = _mention(workspace, bob, task, agent, "@Local summarise the plan.")

    outcome = runner.run_turn(turn_id=turn_id)

    assert outcome == "failed"
    note = Message.objects.filter(task=task, kind=Message.Kind.SYSTEM).get()
    assert "Local could not finish this turn" in note.body
    assert "sent an empty answer" in note.body
    assert "longer than its context window" in note.body
    assert ModelCall.objects.filter(turn_id=turn_id).count() == 1  # asked once, not retried


def test_a_closed_port_fails_the_turn_at_once_with_a_clear_message(
    workspace: Workspace,
    alice: User,
    bob: User,
    task: Task,
    closed_port: str,  # noqa: F811
) -> None:
    agent = _agent(workspace, alice, closed_port)
    turn_id = _mention(workspace, bob, task, agent, "@Local hello?")

    outcome = runner.run_turn(turn_id=turn_id)

    assert outcome == "failed"
    note = Message.objects.filter(task=task, kind=Message.Kind.SYSTEM).get()
    assert f"Could not connect to the model at {closed_port}" in note.body
    assert "Models page" in note.body
    assert ModelCall.objects.filter(turn_id=turn_id).count() == 1


def test_a_server_that_never_answers_times_out_as_a_retryable_model_error(
    workspace: Workspace,
    alice: User,
    bob: User,
    task: Task,
    silent_server: str,  # noqa: F811
) -> None:
    agent = _agent(workspace, alice, silent_server, timeout_seconds=1)
    turn_id = _mention(workspace, bob, task, agent, "@Local hello?")

    with pytest.raises(llm.ModelError, match="did not answer in time"):
        runner.run_turn(turn_id=turn_id)

    call = ModelCall.objects.get(turn_id=turn_id)
    assert "did not answer in time" in call.error
    assert 900 <= call.latency_ms < 30_000


def test_the_server_error_body_is_kept_word_for_word() -> None:
    """What a server said comes back in the error, so the chat can show it."""
    import httpx
    import openai

    response = httpx.Response(
        500,
        request=httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions"),
        content=json.dumps({"error": {"message": "the GPU caught fire"}}).encode(),
    )
    error = providers.openai_error(
        openai.InternalServerError("the GPU caught fire", response=response, body=None),
        "http://127.0.0.1:9/v1",
    )
    assert isinstance(error, llm.ModelError)
    assert "500 from http://127.0.0.1:9/v1: the GPU caught fire" in str(error)
