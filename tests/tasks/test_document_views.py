from __future__ import annotations

import json
from html.parser import HTMLParser

import pytest
from django.urls import reverse

from agents.models import Agent
from collab.lib.colors import PALETTE, presence_color
from collab.tasks.models import Document


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def tags_of(html: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = _Tags()
    parser.feed(html)
    return parser.tags


def test_task_page_mounts_the_live_editor_for_an_editor(as_user, bob, task):
    response = as_user(bob).get(reverse("tasks:detail", args=[task.pk]))

    html = response.content.decode()
    assert response.status_code == 200
    assert "data-collab-editor" in html
    assert f'data-ws-path="/ws/tasks/{task.pk}/doc"' in html
    assert 'data-readonly="false"' in html
    assert 'data-user-name="bob"' in html
    assert "vendor/collab-editor.js" in html


def test_task_page_gives_a_viewer_a_read_only_editor(as_user, carol, task):
    response = as_user(carol).get(reverse("tasks:detail", args=[task.pk]))

    html = response.content.decode()
    assert 'data-readonly="true"' in html
    assert 'data-testid="readonly-note"' in html


def test_task_page_renders_the_saved_text_without_javascript(as_user, carol, task):
    task.document.text = "# Plan\n\n<script>alert(1)</script>"
    task.document.save()

    html = as_user(carol).get(reverse("tasks:detail", args=[task.pk])).content.decode()

    assert "<h1>Plan</h1>" in html
    assert "<script>alert(1)</script>" not in html


def test_preview_renders_markdown_as_sanitised_html(as_user, bob, task):
    text = (
        "# Title\n\n<script>alert(1)</script>\n\n<img src=x onerror=alert(2)>\n\n"
        "[link](javascript:alert(3)) ![pic](https://example.org/p.png)"
    )

    response = as_user(bob).post(reverse("tasks:document_preview", args=[task.pk]), {"text": text})

    html = response.content.decode()
    assert response.status_code == 200
    tags = tags_of(html)
    assert "<h1>Title</h1>" in html
    assert "script" not in {tag for tag, _ in tags}
    assert not [name for _, attrs in tags for name in attrs if name.startswith("on")]
    assert not [a for _, a in tags if (a.get("href") or "").startswith("javascript")]
    # a remote image is a link, never fetched by readers' browsers (MARKDOWN_REMOTE_IMAGES off)
    assert "<img" not in html
    assert "[image: pic]</a>" in html


def test_viewer_can_preview_because_nothing_is_saved(as_user, carol, task):
    response = as_user(carol).post(
        reverse("tasks:document_preview", args=[task.pk]), {"text": "*hi*"}
    )

    assert response.status_code == 200
    assert response.content.decode().strip() == "<p><em>hi</em></p>"


def test_outsider_cannot_preview_a_task_document(as_user, mallory, task):
    response = as_user(mallory).post(
        reverse("tasks:document_preview", args=[task.pk]), {"text": "hi"}
    )

    assert response.status_code == 404


def test_preview_refuses_text_longer_than_a_document(as_user, bob, task, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 5_000_000

    response = as_user(bob).post(
        reverse("tasks:document_preview", args=[task.pk]), {"text": "a" * 1_000_001}
    )

    assert response.status_code == 400


def test_preview_only_answers_posts(as_user, bob, task):
    response = as_user(bob).get(reverse("tasks:document_preview", args=[task.pk]))

    assert response.status_code == 405


def test_presence_colour_is_stable_and_from_the_palette():
    assert presence_color("user:1") == presence_color("user:1")
    assert {presence_color(f"user:{n}") for n in range(200)} == set(PALETTE)


@pytest.mark.django_db
def test_task_page_lists_the_tasks_active_agents_for_the_presence_list(as_user, bob, task):
    planner = Agent.objects.create(workspace=task.workspace, name="Planner", colour="#112233")
    planner.tasks.add(task)
    resting = Agent.objects.create(workspace=task.workspace, name="Resting", is_active=False)
    resting.tasks.add(task)
    Agent.objects.create(workspace=task.workspace, name="Elsewhere")

    html = as_user(bob).get(reverse("tasks:detail", args=[task.pk])).content.decode()

    agents_json = html[html.index('id="document-agents"') :]
    agents_json = agents_json[agents_json.index(">") + 1 : agents_json.index("</script>")]
    assert json.loads(agents_json) == [{"name": "Planner", "color": "#112233"}]


def test_the_task_page_of_a_large_document_renders_its_start_not_all_of_it(as_user, task, alice):
    paragraph = "A line of the plan, with *some* markdown and ünïcode 😀.\n\n"
    text = (paragraph * (1_000_000 // len(paragraph) + 1))[:1_000_000]
    Document.objects.filter(task=task).update(text=text)

    response = as_user(alice).get(reverse("tasks:detail", args=[task.pk]))

    assert response.status_code == 200
    assert len(response.content) < 200_000  # the editor loads the rest over its socket
    assert "A line of the plan" in response.content.decode()
    assert "the editor shows the whole document" in response.content.decode()
