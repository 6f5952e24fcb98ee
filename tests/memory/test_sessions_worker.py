"""Memory across sessions with a real ``celery worker`` process on Redis (production mode).

Session 1: alice says she wants bullet points (an explicit command, applied when posted) and
that she writes British English (a plain statement: the worker's debounced reflection job picks
it up). Session 2: in a new task she only asks for a draft; the worker's turn drafts in bullets
and British spelling, and the turn logs the memory items it used. Session 3: she asks for
American spelling; reflection supersedes the old item, and the next draft follows the new one.
The ``draft`` fake model follows only the preferences its prompt lists (``agents/llm/fakes.py``), so
the document shows what reached the model. Bob's own preference never reaches alice's prompts.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.models import User

from agents.memory.models import MemoryItem, Source, Status
from agents.models import Agent, AgentMode, ModelCall, ModelProfile, Provider, Turn
from agents.services import agents as agent_services
from collab.tasks import documents
from collab.tasks.models import Task
from collab.tasks.services import post_message
from collab.workspaces.models import Workspace
from tests.agents.test_worker import StartWorker, _wait_for, start_worker  # noqa: F401
from tests.factories import make_task, membership_of

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.redis,
    pytest.mark.timeout(600),
    pytest.mark.skipif(not settings.REDIS_URL, reason="needs REDIS_URL (production mode)"),
]

QUIET_SECONDS = 1  # reflection reads a conversation this long after its last message


@pytest.fixture
def sent_jobs() -> None:
    """Memory jobs go to the broker for real here (the package's conftest records them)."""


@pytest.fixture
def worker(start_worker: StartWorker, settings: Any) -> None:  # noqa: F811
    settings.MEMORY_REFLECTION_QUIET_SECONDS = QUIET_SECONDS  # the countdown of scheduled jobs
    start_worker(MEMORY_REFLECTION_QUIET_SECONDS=str(QUIET_SECONDS))


def say(workspace: Workspace, user: User, task: Task, body: str) -> None:
    post_message(membership=membership_of(workspace, user), task=task, body=body)


def new_task(agent: Agent, title: str) -> Task:
    task = make_task(agent.workspace, title=title)
    agent.tasks.add(task)
    return task


def draft(workspace: Workspace, user: User, task: Task, tmp_path: Any) -> tuple[Turn, str]:
    """``user`` asks Mira for a draft; the worker runs the turn; returns (turn, document text)."""
    say(workspace, user, task, "@Mira a first draft, please")
    turn = Turn.objects.get(task=task)
    _wait_for(lambda: Turn.objects.get(pk=turn.pk).status == "done", "the draft turn", tmp_path)
    turn.refresh_from_db()
    return turn, documents.read_document(task=task).text


def active(owner: User, key: str) -> MemoryItem | None:
    return MemoryItem.objects.filter(owner=owner, key=key, status=Status.ACTIVE).first()


def test_preferences_said_once_shape_the_worker_s_drafts_in_later_sessions(
    worker: None, workspace: Workspace, alice: User, bob: User, tmp_path: Any
) -> None:
    profile = ModelProfile.objects.create(name="drafter", provider=Provider.FAKE, model="draft")
    mira = agent_services.create_agent(
        membership=membership_of(workspace, alice),
        name="Mira",
        model_profile=profile,
        mode=AgentMode.MAY_EDIT,
    )

    # Session 1: alice states her preferences; bob states his own in his task.
    first = new_task(mira, "Kick-off")
    say(workspace, alice, first, "Remember that I want bullet points")
    say(workspace, alice, first, "I always write British English.")
    say(workspace, bob, new_task(mira, "Bob's notes"), "remember that I prefer numbered lists")
    _wait_for(lambda: active(alice, "spelling") is not None, "reflection in the worker", tmp_path)
    bullets, british = active(alice, "list_style"), active(alice, "spelling")
    numbered = active(bob, "list_style")
    assert bullets is not None
    assert bullets.value == "bullets"
    assert british is not None
    assert british.value == "british"
    assert (bullets.source_kind, british.source_kind) == (Source.CHAT_COMMAND, Source.REFLECTION)
    assert numbered is not None
    assert numbered.value == "numbered"

    # Session 2: a new task; alice only asks for a draft.
    turn, text = draft(workspace, alice, new_task(mira, "Q2 report"), tmp_path)
    assert "\n- Colour-code the milestones on one page\n" in text
    assert "- Organise the review with everyone involved" in text
    assert "Organize" not in text
    assert "1. " not in text
    assert set(turn.context["memory_item_ids"]) == {bullets.pk, british.pk}
    # bob's preference does work for bob (so its absence from alice's drafts means something)
    bob_turn, bob_text = draft(workspace, bob, new_task(mira, "Bob's report"), tmp_path)
    assert "\n1. Color-code the milestones on one page\n" in bob_text
    assert bob_turn.context["memory_item_ids"] == [numbered.pk]

    # Session 3: alice changes the spelling; the old item ends, the new one is used from now on.
    third = new_task(mira, "Q3 planning")
    say(workspace, alice, third, "Please use American spelling now")
    _wait_for(lambda: active(alice, "spelling") != british, "the new spelling", tmp_path)
    british.refresh_from_db()
    assert british.status == Status.SUPERSEDED
    assert british.valid_to is not None
    american = active(alice, "spelling")
    assert american is not None
    assert american.value == "american"
    assert american.source_kind == Source.REFLECTION

    turn, text = draft(workspace, alice, new_task(mira, "Q3 report"), tmp_path)
    assert "\n- Color-code the milestones on one page\n" in text
    assert "- Organize the review with everyone involved" in text
    assert "Colour" not in text
    assert "Organise" not in text
    assert set(turn.context["memory_item_ids"]) == {bullets.pk, american.pk}

    # Bob's memory never reached a prompt of alice's turns.
    alice_calls = ModelCall.objects.filter(turn__requested_by=alice)
    assert alice_calls.count() == 2
    for call in alice_calls:
        prompt = "\n".join(message["content"] for message in call.messages)
        assert numbered.text not in prompt
        assert "[lists=numbered]" not in prompt
