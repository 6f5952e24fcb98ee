"""End to end with the real embedded model (SmolLM2-135M via llama-cpp-python).

Small models are weak: this checks structure (a valid action applied and logged), not wording.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.auth.models import User

from agents.engine import runner
from agents.llm import embedded
from agents.models import Action, Agent, ModelCall, TurnStatus
from agents.services import agents as agent_services
from agents.services import turns as turn_services
from collab.tasks import services as task_services
from collab.tasks.models import Message, Task
from collab.workspaces.models import Workspace
from tests import factories


def test_embedded_model_file_is_found_in_its_package_and_matches_its_hash() -> None:
    path = embedded.embedded_model_path()
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    embedded.verify_model_file(path)


# A real CPU inference: a few seconds alone, much longer on a busy 2-core machine.
@pytest.mark.timeout(900)
def test_an_agent_with_no_profile_answers_with_the_embedded_model(
    workspace: Workspace, alice: User, bob: User, task: Task
) -> None:
    agent: Agent = agent_services.create_agent(
        membership=factories.membership_of(workspace, alice), name="Local"
    )
    task_services.post_message(
        membership=factories.membership_of(workspace, bob),
        task=task,
        body="@Local say hello to the team in one short sentence.",
    )
    turn = agent.turns.get()

    outcome = runner.run_turn(turn_id=turn.pk)

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

    monkeypatch.setattr(turn_services, "enqueue_turn", skip)
    return skip


@pytest.mark.parametrize(
    ("load", "cores", "threads"),
    [
        (0.1, 2, (1, 2)),  # a quiet machine: the prompt on both cores
        (1.2, 2, (1, 1)),  # one core busy elsewhere: a thread of ours would wait for it
        (7.5, 2, (1, 1)),
        (0.0, 16, (1, 4)),
        (30.0, 1, (1, 1)),
    ],
)
def test_threads_fit_the_machines_load(load: float, cores: int, threads: tuple[int, int]) -> None:
    assert embedded.threads_for(load, cores) == threads


@pytest.mark.timeout(600)
def test_the_reply_mask_forbids_exactly_the_tokens_with_control_characters() -> None:
    llama = embedded._llama(str(embedded.embedded_model_path()))
    mask = embedded.control_token_mask(llama)

    (newline,) = llama.tokenize(b"\n", add_bos=False, special=False)
    assert mask[newline]
    for word in (b"Hello", b" Lisbon", b"."):
        assert not any(mask[t] for t in llama.tokenize(word, add_bos=False, special=False))
    assert not mask[llama.token_eos()]  # the reply can still end
    banned = [t for t in range(llama.n_vocab()) if mask[t]]
    assert banned
    assert all(
        any(b < 0x20 or b == 0x7F for b in llama.detokenize([t], special=False)) for t in banned
    )


@pytest.mark.timeout(600)
def test_the_warm_up_leaves_the_prompts_constant_head_evaluated() -> None:
    from agents.llm.embedded_prompt import SYSTEM, prompt

    llama = embedded._llama(str(embedded.embedded_model_path()))
    cache = llama.cache
    llama.set_cache(None)  # nothing evaluated before counts
    llama.reset()
    llama.create_completion("Something else entirely.", max_tokens=1)
    try:
        embedded.warm_embedded_model(("Assistant",))
    finally:
        llama.set_cache(cache)

    system, _ = prompt(
        agent="Assistant",
        requester="ana",
        title="Lisbon offsite",
        goal="",
        document="",
        chat=[],
        request="hi",
    )
    head = llama.tokenize(system.encode(), add_bos=False, special=False)
    evaluated = [int(t) for t in llama._input_ids]
    assert system.startswith(SYSTEM)
    at = next(i for i in range(len(evaluated)) if evaluated[i : i + len(head)] == head)
    assert at < 8  # right after the chat template's opening tokens: nothing to evaluate again
