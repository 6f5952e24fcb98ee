"""A question about the task is answered with what is known, not held up by a clarifying
question first (issue 27): the default policy asks only before producing the work itself. The
same task asked for a draft still gets the question."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from agents.engine import runner
from agents.models import Action, Turn, TurnStatus
from agents.services import agents as agent_services
from agents.services import turns as turn_services
from collab.tasks import services as task_services
from collab.tasks.models import Document, Message, Task
from collab.workspaces.models import Workspace
from tests import factories

GOAL = "Supplier review on 18 March 2027 with Ana, Ben and Carla, 45 minutes."
NOTES = "## Notes\n- When: 25 March 2027\n- Kestrel asks for a 6% price increase\n"


@pytest.fixture(autouse=True)
def _no_jobs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(turn_services, "enqueue_turn", lambda turn_id: None)


def _meeting(workspace: Workspace, owner: User) -> Task:
    """A meeting task with the default agent (embedded default, default policy) on it."""
    agent_services.create_agent(
        membership=factories.membership_of(workspace, owner), name="Assistant"
    )
    task = factories.make_task(workspace, title="Supplier review", goal=GOAL)
    Task.objects.filter(pk=task.pk).update(template="meeting_brief")
    Document.objects.filter(task=task).update(text=NOTES)  # a second, different date
    task.refresh_from_db()
    return task


def _turn(workspace: Workspace, user: User, task: Task, body: str) -> list[Action]:
    task_services.post_message(
        membership=factories.membership_of(workspace, user), task=task, body=body
    )
    turn = Turn.objects.filter(task=task).order_by("-id").first()
    assert turn is not None
    assert runner.run_turn(turn_id=turn.pk) in (TurnStatus.DONE, TurnStatus.WAITING)
    return list(Action.objects.filter(turn=turn))


@pytest.mark.parametrize(
    ("request_", "said"),
    [
        ("@Assistant who is in the meeting?", "Ana, Ben and Carla"),
        ("@Assistant what price increase does Kestrel want?", "6% price increase"),
        ("@Assistant tl;dr", "Supplier review"),
    ],
)
def test_a_question_about_the_task_is_answered_not_asked_back(
    workspace: Workspace, alice: User, request_: str, said: str
) -> None:
    task = _meeting(workspace, alice)
    actions = _turn(workspace, alice, task, request_)
    assert [a.kind for a in actions] == ["reply"]
    body = Message.objects.get(pk=actions[0].result["message_id"]).body
    assert said in body


def test_a_draft_of_the_same_task_still_asks_which_date_is_right(
    workspace: Workspace, alice: User
) -> None:
    task = _meeting(workspace, alice)
    actions = _turn(workspace, alice, task, "@Assistant draft the brief")
    assert [a.kind for a in actions] == ["ask"]
    assert "18 March" in actions[0].payload["text"]
    assert "25 March" in actions[0].payload["text"]
