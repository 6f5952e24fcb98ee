"""What a newcomer, a demoted editor and a non-member admin meet on the pages (#19.3, #19.4,
#19.12-#19.14), and that no template needs inline script (the Content-Security-Policy)."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client

from collab.tasks.models import Task
from collab.workspaces.models import Membership, Role

pytestmark = pytest.mark.django_db


def test_a_logged_out_visitor_learns_what_collab_is_on_the_home_page(client: Client) -> None:
    response = client.get("/")

    assert response.status_code == 200
    page = response.content.decode()
    assert "your team and its AI agents work on the same task" in page
    assert 'href="/accounts/signup/"' in page


def test_an_editor_demoted_to_viewer_is_told_why_their_message_was_not_sent(
    as_user: Callable[[User], Client], bob: User, task: Task, caplog: pytest.LogCaptureFixture
) -> None:
    client = as_user(bob)
    Membership.objects.filter(user=bob).update(role=Role.VIEWER)

    with caplog.at_level(logging.WARNING):
        response = client.post(
            f"/t/{task.pk}/messages/", {"body": "still here?"}, headers={"HX-Request": "true"}
        )

    assert response.status_code == 403
    assert 'id="chat-errors"' in response.content.decode()
    assert "Your message was not sent: Viewers can read" in response.content.decode()
    # one line in the log, no traceback
    assert all(record.exc_info is None for record in caplog.records)


@pytest.mark.parametrize("way", ["htmx", "form", "api"])
def test_a_refused_chat_post_logs_one_line_and_no_traceback(
    as_user: Callable[[User], Client],
    bob: User,
    task: Task,
    caplog: pytest.LogCaptureFixture,
    way: str,
) -> None:
    client = as_user(bob)
    Membership.objects.filter(user=bob).update(role=Role.VIEWER)

    with caplog.at_level(logging.DEBUG):
        if way == "api":
            response = client.post(
                f"/api/tasks/{task.pk}/messages", {"body": "hi"}, content_type="application/json"
            )
        else:
            headers = {"HX-Request": "true"} if way == "htmx" else {}
            response = client.post(f"/t/{task.pk}/messages/", {"body": "hi"}, headers=headers)

    assert response.status_code == 403
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1, [r.getMessage() for r in warnings]
    assert warnings[0].exc_info is None
    assert "\n" not in warnings[0].getMessage()
    assert "403" in warnings[0].getMessage() or "Forbidden" in warnings[0].getMessage()


def test_an_editor_sees_the_task_status_once_as_a_dropdown_that_follows_live_changes(
    as_user: Callable[[User], Client], bob: User, carol: User, task: Task
) -> None:
    editors = as_user(bob).get(f"/t/{task.pk}/").content.decode()
    viewers = as_user(carol).get(f"/t/{task.pk}/").content.decode()

    assert re.search(r'<span class="visually-hidden"><span id="task-status"', editors)
    assert 'data-follows="#task-status"' in editors
    assert '<span><span id="task-status" class="badge' in viewers
    assert 'aria-label="Task status"' not in viewers


def test_a_staff_member_outside_the_workspace_gets_a_page_pointing_to_review(
    as_user: Callable[[User], Client], mallory: User, task: Task
) -> None:
    User.objects.filter(pk=mallory.pk).update(is_staff=True)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(settings, "DEBUG", False)
        response = as_user(mallory).get(f"/t/{task.pk}/")

    assert response.status_code == 404
    page = response.content.decode()
    assert '<link rel="stylesheet"' in page  # the site's page, not a bare "Not Found"
    assert 'href="/review/"' in page


def test_no_template_has_inline_script_or_handlers_the_policy_would_block() -> None:
    bad = []
    pattern = re.compile(r"<script(?![^>]*\bsrc=)(?![^>]*application/json)|\son[a-z]+=\"|hx-on")
    for path in Path(settings.BASE_DIR, "templates").rglob("*.html"):
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            if pattern.search(line):
                bad.append(f"{path.relative_to(settings.BASE_DIR)}:{number}: {line.strip()}")
    assert bad == []
