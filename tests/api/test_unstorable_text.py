"""A NUL character or half a surrogate pair in what the API stores answers 400 with the reason,
never a 500 from the database or the encoder (#15.7)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import User

from collab.tasks.models import Message, Task
from collab.workspaces.models import Workspace

pytestmark = pytest.mark.django_db

# JSON text as a client sends it: "\\u0000" is a NUL, "\\ud83d" half of an emoji.
BAD = {"NUL": "nul\\u0000here", "lone surrogate": "half \\ud83d of a smile"}


def _post(client: Any, url: str, body: str) -> Any:
    return client.post(url, data=body, content_type="application/json")


@pytest.mark.parametrize("kind", BAD)
def test_a_chat_message_with_unstorable_text_is_refused_with_the_reason(
    api_as: Any, bob: User, task: Task, kind: str
) -> None:
    response = _post(api_as(bob), f"/api/tasks/{task.pk}/messages", f'{{"body": "{BAD[kind]}"}}')

    assert response.status_code == 400
    errors = response.json()["errors"]
    assert list(errors) == ["body"]
    assert ("NUL" if kind == "NUL" else "surrogate") in errors["body"][0]
    assert not Message.objects.exists()


@pytest.mark.parametrize("field", ["title", "goal"])
@pytest.mark.parametrize("kind", BAD)
def test_a_task_title_or_goal_with_unstorable_text_is_refused(
    api_as: Any, alice: User, workspace: Workspace, field: str, kind: str
) -> None:
    fields = {"title": "Plan", "goal": "", field: "@"}
    body = json.dumps(fields).replace("@", BAD[kind])

    response = _post(api_as(alice), f"/api/workspaces/{workspace.pk}/tasks", body)

    assert response.status_code == 400
    assert list(response.json()["errors"]) == [field]
    assert not Task.objects.exists()


def test_whole_emoji_and_other_text_are_still_accepted(api_as: Any, bob: User, task: Task) -> None:
    response = _post(
        api_as(bob), f"/api/tasks/{task.pk}/messages", '{"body": "smile \\ud83d\\ude00 ok"}'
    )

    assert response.status_code == 201
    assert Message.objects.get().body == "smile 😀 ok"
