"""/api/memory: the caller's own memory, never anyone else's."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import User

from agents.memory import selectors
from agents.memory.models import MemoryItem, Scope, Status
from collab.workspaces.models import Workspace
from tests.api.conftest import ApiClientFactory
from tests.api.conftest import remember as _remember
from tests.api.conftest import send_json as _send

pytestmark = pytest.mark.django_db


def test_a_person_creates_lists_edits_pins_and_deletes_their_memory(
    bob: User, api_as: ApiClientFactory
) -> None:
    client = api_as(bob)

    created = _send(client, "POST", "/api/memory/items", {"text": "I prefer bullet points"})
    item_id = created.json()["id"]
    edited = _send(client, "PUT", f"/api/memory/items/{item_id}", {"text": "I prefer short lists"})
    pinned = _send(client, "PUT", f"/api/memory/items/{item_id}/pin", {"pinned": True})
    listed = client.get("/api/memory/items").json()
    deleted = _send(client, "DELETE", f"/api/memory/items/{item_id}")
    again = _send(client, "DELETE", f"/api/memory/items/{item_id}")

    assert created.status_code == 201
    assert created.json()["scope"] == "personal"
    assert edited.json()["text"] == "I prefer short lists"
    assert pinned.json()["pinned"] is True
    assert [i["id"] for i in listed["items"]] == [item_id]
    assert deleted.status_code == 204
    assert MemoryItem.objects.get(pk=item_id).status == Status.DELETED
    assert again.status_code == 409
    assert client.get("/api/memory/items").json()["items"] == []


def test_nobody_reads_or_changes_anyone_elses_memory(
    alice: User, bob: User, api_as: ApiClientFactory
) -> None:
    theirs = _remember(alice, "I take my coffee black")
    client = api_as(bob)

    assert client.get("/api/memory/items").json()["items"] == []
    assert client.get("/api/memory/search", {"q": "coffee"}).json() == []
    assert _send(client, "PUT", f"/api/memory/items/{theirs.pk}", {"text": "x"}).status_code == 404
    assert (
        _send(client, "PUT", f"/api/memory/items/{theirs.pk}/pin", {"pinned": True}).status_code
        == 404
    )
    assert _send(client, "DELETE", f"/api/memory/items/{theirs.pk}").status_code == 404
    assert "coffee" not in json.dumps(client.get("/api/memory/export").json())
    theirs.refresh_from_db()
    assert (theirs.status, theirs.text, theirs.pinned) == (
        Status.ACTIVE,
        "I take my coffee black",
        False,
    )


def test_team_memory_is_not_part_of_your_own(
    alice: User, workspace: Workspace, api_as: ApiClientFactory
) -> None:
    team = _remember(alice, "We meet on Mondays", scope=Scope.TEAM, workspace=workspace)
    assert api_as(alice).get("/api/memory/items").json()["items"] == []
    assert _send(api_as(alice), "DELETE", f"/api/memory/items/{team.pk}").status_code == 404


def test_search_finds_your_own_items(bob: User, api_as: ApiClientFactory) -> None:
    _remember(bob, "I prefer bullet points")
    wanted = _remember(bob, "My timezone is Europe/Paris")
    found = api_as(bob).get("/api/memory/search", {"q": "timezone Paris"}).json()
    assert found[0]["id"] == wanted.pk


def test_a_memory_can_be_kept_to_one_workspace_you_belong_to(
    bob: User, mallory: User, workspace: Workspace, api_as: ApiClientFactory
) -> None:
    body = {"text": "Use British spelling", "workspace_id": workspace.pk}
    mine = _send(api_as(bob), "POST", "/api/memory/items", body)
    outsider = _send(api_as(mallory), "POST", "/api/memory/items", body)
    assert (mine.json()["scope"], mine.json()["workspace_id"]) == ("workspace", workspace.pk)
    assert outsider.status_code == 404


def test_bad_input_answers_400_with_fields(bob: User, api_as: ApiClientFactory) -> None:
    client = api_as(bob)
    blank = _send(client, "POST", "/api/memory/items", {"text": ""})
    bad_kind = _send(client, "POST", "/api/memory/items", {"text": "x", "kind": "gossip"})
    no_query = client.get("/api/memory/search")
    assert blank.status_code == 400
    assert "text" in blank.json()["errors"]
    assert "kind" in bad_kind.json()["errors"]
    assert "q" in no_query.json()["errors"]


def test_switching_memory_off_keeps_the_other_settings(bob: User, api_as: ApiClientFactory) -> None:
    client = api_as(bob)
    review = _send(client, "PUT", "/api/memory/settings", {"review_mode": "review"})
    off = _send(client, "PUT", "/api/memory/settings", {"enabled": False})
    bad = _send(client, "PUT", "/api/memory/settings", {"review_mode": "sometimes"})
    assert review.json()["review_mode"] == "review"
    assert off.json() == {"enabled": False, "review_mode": "review", "admin_access_allowed": False}
    assert selectors.get_settings(bob).enabled is False
    assert bad.status_code == 400


def test_export_holds_your_items(bob: User, api_as: ApiClientFactory) -> None:
    _remember(bob, "I prefer bullet points")
    exported = api_as(bob).get("/api/memory/export")
    assert exported.status_code == 200
    assert [i["text"] for i in exported.json()["items"]] == ["I prefer bullet points"]


def test_an_export_imports_back_into_your_own_memory(
    bob: User, alice: User, api_as: ApiClientFactory
) -> None:
    _remember(bob, "I prefer bullet points", key="lists", value="bullets")
    exported = api_as(bob).get("/api/memory/export").json()
    MemoryItem.objects.filter(owner=bob).delete()

    imported = _send(api_as(alice), "POST", "/api/memory/import", exported)
    again = _send(api_as(alice), "POST", "/api/memory/import", exported)

    assert imported.status_code == 200
    assert imported.json() == {"added": 1, "superseded": 0, "kept": 0}
    assert again.json()["added"] == 0
    assert list(
        MemoryItem.objects.filter(owner=alice, status=Status.ACTIVE).values_list("text", flat=True)
    ) == ["I prefer bullet points"]
    assert not MemoryItem.objects.filter(owner=bob).exists()


def test_an_import_into_a_workspace_you_do_not_belong_to_answers_400(
    mallory: User, workspace: Workspace, api_as: ApiClientFactory
) -> None:
    body = {
        "format": "collab-memory",
        "version": 1,
        "items": [{"scope": "workspace", "workspace_id": workspace.pk, "text": "Planted"}],
    }

    response = _send(api_as(mallory), "POST", "/api/memory/import", body)

    assert response.status_code == 400
    assert "not a workspace you belong to" in response.json()["detail"]
    assert not MemoryItem.objects.filter(owner=mallory).exists()
