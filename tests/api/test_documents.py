"""/api/tasks/{id}/document: read, edit against a version, history, restore."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from collab.tasks import documents
from collab.tasks.models import DocumentVersion, Task
from tests import factories
from tests.api.conftest import ApiClientFactory

pytestmark = pytest.mark.django_db


def _write(task: Task, text: str, who: str = "setup") -> None:
    documents.apply_text_edit(task=task, new_text=text, author_label=who)


def _put(client: Client, task: Task, body: object) -> Any:
    return client.put(f"/api/tasks/{task.pk}/document", data=body, content_type="application/json")


def test_every_member_reads_the_document_with_its_version(
    request: pytest.FixtureRequest, task: Task, api_as: ApiClientFactory
) -> None:
    _write(task, "# Agenda 🏔️\n")
    version = documents.read_document(task=task).update_id
    for name in ("alice", "bob", "carol"):
        response = api_as(request.getfixturevalue(name)).get(f"/api/tasks/{task.pk}/document")
        assert response.status_code == 200
        assert response.json() == {"text": "# Agenda 🏔️\n", "version": version}


def test_an_editor_edits_the_current_version(
    bob: User, task: Task, api_as: ApiClientFactory
) -> None:
    _write(task, "Venue: TBD\n")
    read = api_as(bob).get(f"/api/tasks/{task.pk}/document").json()

    response = _put(
        api_as(bob), task, {"text": "Venue: 山 lodge\n", "base_version": read["version"]}
    )

    assert response.status_code == 200
    assert response.json()["text"] == "Venue: 山 lodge\n"
    assert response.json()["version"] > read["version"]
    assert documents.read_document(task=task).text == "Venue: 山 lodge\n"


def test_an_edit_of_a_stale_version_keeps_what_others_wrote_since(
    alice: User, task: Task, api_as: ApiClientFactory
) -> None:
    _write(task, "Dates: TBD\nVenue: TBD\n")
    read = api_as(alice).get(f"/api/tasks/{task.pk}/document").json()
    _write(task, "Dates: May 12\nVenue: TBD\n", who="bob")  # someone else, meanwhile

    response = _put(
        api_as(alice), task, {"text": "Dates: TBD\nVenue: barn\n", "base_version": read["version"]}
    )

    assert response.status_code == 200
    assert response.json()["text"] == "Dates: May 12\nVenue: barn\n"


def test_an_edit_of_a_compacted_version_conflicts(
    alice: User, task: Task, api_as: ApiClientFactory
) -> None:
    _write(task, "one\n")
    old = documents.read_document(task=task).update_id
    _write(task, "one\ntwo\n")
    documents.compact_document(document_id=task.document.pk)

    response = _put(api_as(alice), task, {"text": "uno\n", "base_version": old})

    assert response.status_code == 409
    assert "can no longer be merged" in response.json()["detail"]
    assert documents.read_document(task=task).text == "one\ntwo\n"


def test_a_version_from_the_future_answers_400(
    alice: User, task: Task, api_as: ApiClientFactory
) -> None:
    current = documents.read_document(task=task).update_id
    response = _put(api_as(alice), task, {"text": "x", "base_version": current + 10})
    assert response.status_code == 400
    assert response.json()["errors"] == {"base_version": ["The document has no such version yet."]}


def test_a_bad_edit_body_answers_400_with_fields(
    alice: User, task: Task, api_as: ApiClientFactory
) -> None:
    missing = _put(api_as(alice), task, {"text": "x"})
    nul = _put(api_as(alice), task, {"text": "a\x00b", "base_version": 0})
    assert missing.status_code == 400
    assert "base_version" in missing.json()["errors"]
    assert nul.status_code == 400
    assert "text" in nul.json()["errors"]


def test_a_viewer_cannot_edit_or_restore_and_an_outsider_sees_nothing(
    carol: User, mallory: User, task: Task, api_as: ApiClientFactory
) -> None:
    _write(task, "kept\n")
    version = DocumentVersion.objects.filter(document__task=task).first()
    assert version is not None
    body = {"text": "changed\n", "base_version": documents.read_document(task=task).update_id}
    restore = f"/api/tasks/{task.pk}/document/versions/{version.pk}/restore"

    assert _put(api_as(carol), task, body).status_code == 403
    assert api_as(carol).post(restore).status_code == 403
    assert _put(api_as(mallory), task, body).status_code == 404
    assert api_as(mallory).get(f"/api/tasks/{task.pk}/document").status_code == 404
    assert api_as(mallory).get(f"/api/tasks/{task.pk}/document/versions").status_code == 404
    assert api_as(mallory).post(restore).status_code == 404
    assert documents.read_document(task=task).text == "kept\n"


def test_history_lists_versions_and_restoring_one_is_a_new_edit(
    alice: User, task: Task, api_as: ApiClientFactory
) -> None:
    _write(task, "first\n")
    _write(task, "second\n")
    client = api_as(alice)
    history = client.get(f"/api/tasks/{task.pk}/document/versions").json()
    first = next(v for v in history["versions"] if v["text"] == "first\n")

    restored = client.post(f"/api/tasks/{task.pk}/document/versions/{first['id']}/restore")
    after = client.get(f"/api/tasks/{task.pk}/document/versions").json()

    assert restored.status_code == 200
    assert restored.json()["text"] == "first\n"
    assert after["versions"][-1]["kind"] == "restore"
    assert len(after["versions"]) == len(history["versions"]) + 1


def test_history_pages_walk_back(alice: User, task: Task, api_as: ApiClientFactory) -> None:
    for n in range(3):
        _write(task, f"v{n}\n")
    url = f"/api/tasks/{task.pk}/document/versions"
    newest = api_as(alice).get(url, {"limit": 1}).json()
    older = api_as(alice).get(url, {"limit": 1, "before": newest["next_before"]}).json()
    assert newest["has_more"] is True
    assert newest["versions"][0]["text"] == "v2\n"
    assert older["versions"][0]["id"] < newest["versions"][0]["id"]


def test_a_version_of_another_task_answers_404(
    alice: User, task: Task, api_as: ApiClientFactory
) -> None:
    other = factories.make_task(task.workspace, "Other")
    _write(other, "theirs\n")
    version = DocumentVersion.objects.filter(document__task=other).first()
    assert version is not None
    url = f"/api/tasks/{task.pk}/document/versions/{version.pk}/restore"
    assert api_as(alice).post(url).status_code == 404
