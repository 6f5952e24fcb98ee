"""End to end with the real embedded model (SmolLM2-135M via llama-cpp-python).

Small models are weak: this checks structure (a valid action applied and logged), not wording.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.auth.models import User

from agents import llm, services, turns
from agents.models import Action, Agent, ModelCall, TurnStatus
from collab.tasks import services as task_services
from collab.tasks.models import Message, Task
from collab.workspaces.models import Workspace
from tests import factories


def test_embedded_model_file_is_found_in_its_package_and_matches_its_hash() -> None:
    path = llm.embedded_model_path()
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    llm.verify_model_file(path)


# A real CPU inference: a few seconds alone, much longer on a busy 2-core machine.
@pytest.mark.timeout(900)
def test_an_agent_with_no_profile_answers_with_the_embedded_model(
    workspace: Workspace, alice: User, bob: User, task: Task
) -> None:
    agent: Agent = services.create_agent(
        membership=factories.membership_of(workspace, alice), name="Local"
    )
    task_services.post_message(
        membership=factories.membership_of(workspace, bob),
        task=task,
        body="@Local say hello to the team in one short sentence.",
    )
    turn = agent.turns.get()

    outcome = turns.run_turn(turn_id=turn.pk)

    turn.refresh_from_db()
    assert outcome in (TurnStatus.DONE, TurnStatus.WAITING)
    assert turn.is_embedded
    assert "embedded" in turn.model_label
    action = Action.objects.get(turn=turn)
    assert action.kind in ("reply", "ask")
    assert action.status == Action.Status.APPLIED
    reply = Message.objects.get(pk=action.result["message_id"])
    assert reply.kind == Message.Kind.AGENT
    assert reply.author_name == "Local"
    assert reply.body
    if action.kind == "ask":
        assert reply.body.endswith("?")
    call = ModelCall.objects.get(turn=turn)
    assert call.provider == "embedded"
    assert call.error == ""
    assert call.response.startswith("{")
    assert call.latency_ms > 0


@pytest.fixture(autouse=True)
def _no_jobs(monkeypatch: pytest.MonkeyPatch) -> Callable[[int], None]:
    def skip(turn_id: int) -> None:
        return None

    monkeypatch.setattr(services, "enqueue_turn", skip)
    return skip
