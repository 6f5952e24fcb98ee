from __future__ import annotations

import pytest
from django.urls import reverse

from collab.tasks.documents import apply_text_edit, restore_document_version
from collab.tasks.models import Document, DocumentVersion
from collab.tasks.services import post_message
from tests.factories import make_task, membership_of

pytestmark = pytest.mark.django_db


def add_version(document: Document, text: str, *authors: str) -> DocumentVersion:
    return DocumentVersion.objects.create(document=document, text=text, authors=list(authors))


def history_url(task) -> str:
    return reverse("tasks:document_history", args=[task.pk])


def test_history_lists_versions_newest_first_with_authors_and_size(as_user, bob, task):
    add_version(task.document, "Hello\n", "alice")
    add_version(task.document, "Hello brave new world\n", "bob", "Planner (agent)")

    response = as_user(bob).get(history_url(task))

    html = response.content.decode()
    assert response.status_code == 200
    assert html.index("bob, Planner (agent)") < html.index(">alice<")
    assert '+16</span> <span class="del">&minus;0' in html  # " brave new world"
    assert '+6</span> <span class="del">&minus;0' in html  # "Hello\n"


def test_history_shows_the_newest_version_against_the_one_before(as_user, bob, task):
    add_version(task.document, "Plan\nLisbon\n", "alice")
    add_version(task.document, "Plan\nPorto\n", "bob")

    html = as_user(bob).get(history_url(task)).content.decode()

    assert "<del>Lisbon</del>" in html
    assert "<ins>Porto</ins>" in html


def test_selecting_a_version_with_htmx_returns_only_its_diff(as_user, bob, task):
    first = add_version(task.document, "<b>bold</b>\n", "alice")
    add_version(task.document, "second\n", "bob")

    response = as_user(bob).get(
        history_url(task),
        {"version": first.pk},
        headers={"HX-Request": "true", "HX-Target": "version-diff"},
    )

    html = response.content.decode()
    assert html.lstrip().startswith('<section class="pane" id="version-diff"')
    assert "<ins>&lt;b&gt;bold&lt;/b&gt;</ins>" in html
    assert "<h1>" not in html


def test_history_offers_restore_to_editors_but_not_for_the_current_text(as_user, bob, task):
    old = add_version(task.document, "old text", "alice")
    current = add_version(task.document, "new text", "bob")
    Document.objects.filter(pk=task.document.pk).update(text="new text")
    client = as_user(bob)

    newest = client.get(history_url(task)).content.decode()
    older = client.get(history_url(task), {"version": old.pk}).content.decode()

    assert 'data-testid="is-current"' in newest
    assert 'data-testid="restore"' not in newest
    assert reverse("tasks:restore_version", args=[task.pk, old.pk]) in older
    assert current.pk != old.pk


def test_viewers_read_history_without_a_restore_button(as_user, carol, task):
    old = add_version(task.document, "old text", "alice")
    add_version(task.document, "new text", "bob")

    response = as_user(carol).get(history_url(task), {"version": old.pk})

    assert response.status_code == 200
    assert 'data-testid="restore"' not in response.content.decode()


def test_history_of_a_document_without_versions_says_so(as_user, bob, task):
    response = as_user(bob).get(history_url(task))

    assert 'data-testid="no-versions"' in response.content.decode()


def test_outsiders_cannot_read_history(as_user, mallory, task):
    assert as_user(mallory).get(history_url(task)).status_code == 404


def test_a_version_of_another_task_is_not_found(as_user, bob, workspace, task):
    other = make_task(workspace, title="Other")
    foreign = add_version(other.document, "secret", "alice")

    response = as_user(bob).get(history_url(task), {"version": foreign.pk})

    assert response.status_code == 404


def test_history_page_reads_a_fixed_number_of_queries(
    as_user, bob, task, django_assert_max_num_queries
):
    for n in range(30):
        add_version(task.document, f"text {n}", "alice")
    client = as_user(bob)

    with django_assert_max_num_queries(12):
        response = client.get(history_url(task))

    assert response.status_code == 200


def test_editor_restores_a_version_as_a_new_edit(as_user, bob, task):
    old = add_version(task.document, "The first plan.\n", "alice")
    add_version(task.document, "", "mallory's script")
    Document.objects.filter(pk=task.document.pk).update(text="")

    response = as_user(bob).post(reverse("tasks:restore_version", args=[task.pk, old.pk]))

    task.document.refresh_from_db()
    assert response.status_code == 302
    assert response["Location"] == history_url(task)
    assert task.document.text == "The first plan.\n"
    assert task.document.versions.count() >= 3  # history is kept; the restore adds to it


def test_viewers_cannot_restore_a_version(as_user, carol, task):
    old = add_version(task.document, "The first plan.\n", "alice")

    response = as_user(carol).post(reverse("tasks:restore_version", args=[task.pk, old.pk]))

    assert response.status_code == 403


def test_restore_only_answers_posts(as_user, bob, task):
    old = add_version(task.document, "x", "alice")

    response = as_user(bob).get(reverse("tasks:restore_version", args=[task.pk, old.pk]))

    assert response.status_code == 405


def test_history_says_who_changed_the_document_and_how(as_user, bob, task):
    apply_text_edit(task=task, new_text="Agenda\n", author_label="Planner (agent)")
    version = task.document.versions.latest("id")
    apply_text_edit(task=task, new_text="Agenda\n- venue\n", author_label="Planner (agent)")
    restore_document_version(
        membership=membership_of(task.workspace, bob), task=task, version_id=version.pk
    )

    html = as_user(bob).get(history_url(task)).content.decode()

    activity = html[html.index('data-testid="contributions"') :]
    assert activity.index("<strong>bob</strong>") < activity.index("<strong>Planner (agent)")
    assert "restored a version" in activity
    assert "edited (server-side)" in activity
    assert "(2 saves)" in activity


def test_flash_messages_show_on_the_task_page_and_chat_stays_out_of_them(as_user, bob, task):
    post_message(membership=membership_of(task.workspace, bob), task=task, body="hello chat")
    client = as_user(bob)
    old = add_version(task.document, "old text", "alice")
    client.post(reverse("tasks:restore_version", args=[task.pk, old.pk]))

    html = client.get(reverse("tasks:detail", args=[task.pk])).content.decode()

    flash = html[html.index('<ul class="flash"') : html.index("</ul>")]
    assert "Restored the version" in flash
    assert "hello chat" not in flash
    assert "hello chat" in html
