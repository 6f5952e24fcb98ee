from __future__ import annotations

import re
from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command

from collab.core.services import DEMO_TASK_TITLE, DEMO_WORKSPACE_NAME, seed_demo
from collab.tasks.models import Document, Message, Task
from collab.workspaces.models import Invitation, Membership, Role, Workspace
from tests.factories import PASSWORD


def _seed(username: str) -> str:
    out = StringIO()
    call_command("seed_demo", "--user", username, stdout=out)
    return out.getvalue()


def _counts() -> dict[str, int]:
    models = (User, Workspace, Membership, Invitation, Task, Document, Message)
    return {model.__name__: model.objects.count() for model in models}


def test_seed_demo_creates_a_user_who_can_log_in_with_the_printed_password(db, client):
    output = _seed("dora")

    password = re.search(r"with password: (\S+)", output)
    assert password is not None
    assert client.login(username="dora", password=password.group(1))


def test_seed_demo_gives_the_user_an_owned_workspace_with_a_task_goal_and_chat(db):
    _seed("dora")

    dora = User.objects.get(username="dora")
    membership = Membership.objects.get(user=dora)
    assert membership.role == Role.OWNER
    assert membership.workspace.name == DEMO_WORKSPACE_NAME
    task = Task.objects.get(workspace=membership.workspace)
    assert task.title == DEMO_TASK_TITLE
    assert task.goal
    assert Document.objects.filter(task=task).exists()
    assert list(task.messages.values_list("author__username", flat=True)) == ["dora", "dora"]


def test_running_seed_demo_twice_changes_nothing(db):
    _seed("dora")
    password_hash = User.objects.get(username="dora").password
    counts = _counts()

    output = _seed("dora")

    assert _counts() == counts
    assert User.objects.get(username="dora").password == password_hash
    assert "password" not in output
    assert "Nothing to do" in output


def test_seed_demo_never_resets_an_existing_users_password(alice, client):
    output = _seed("alice")

    assert "password" not in output
    assert client.login(username="alice", password=PASSWORD)
    assert Workspace.objects.filter(memberships__user=alice, name=DEMO_WORKSPACE_NAME).exists()


def test_seed_demo_leaves_other_workspaces_of_the_user_alone(workspace, alice):
    before = (workspace.name, workspace.tasks.count(), workspace.memberships.count())

    _seed("alice")

    workspace.refresh_from_db()
    assert (workspace.name, workspace.tasks.count(), workspace.memberships.count()) == before


def test_seed_demo_does_not_reuse_a_demo_workspace_the_user_only_views(alice, carol):
    shared = seed_demo(username="alice").workspace
    Membership.objects.create(workspace=shared, user=carol, role=Role.VIEWER)

    seed = seed_demo(username="carol")

    assert seed.workspace != shared
    assert Membership.objects.get(workspace=seed.workspace, user=carol).role == Role.OWNER


def test_seed_demo_puts_back_a_deleted_demo_task(db):
    first = seed_demo(username="dora")
    first.task.delete()

    second = seed_demo(username="dora")

    assert second.created == ("task",)
    assert second.workspace == first.workspace
    assert second.task.messages.count() == 2


def test_seed_demo_refuses_an_invalid_username_and_writes_nothing(db):
    counts = _counts()

    with pytest.raises(CommandError, match="username"):
        _seed("not a valid name!")

    assert _counts() == counts


def test_the_demo_task_has_a_writer_and_a_reviewer_besides_the_assistant(db):
    _seed("dora")
    _seed("dora")  # again: nothing doubled

    task = Task.objects.get(title=DEMO_TASK_TITLE)
    names = sorted(task.agents.values_list("name", flat=True))
    assert "Writer" in names
    assert "Reviewer" in names
    assert len(names) == len(set(names))
    assert task.agents.get(name="Reviewer").instructions.startswith("Checks a draft")
