"""/api/memory: sharing an item, using it everywhere, the review inbox, forgetting everything,
as on the Memory page; never anyone else's memory."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from agents.memory import services
from agents.memory.models import MemoryCandidate, MemoryItem, Scope, Status
from collab.workspaces.models import Workspace
from tests.api.conftest import ApiClientFactory
from tests.api.conftest import remember as _remember
from tests.api.conftest import send_json as _send

pytestmark = pytest.mark.django_db


def test_a_person_shares_their_item_and_nobody_else_can(
    bob: User, mallory: User, api_as: ApiClientFactory
) -> None:
    item = _remember(bob, "I prefer bullet points")
    url = f"/api/memory/items/{item.pk}/share"

    assert _send(api_as(mallory), "PUT", url, {"shared": True}).status_code == 404
    assert _send(api_as(bob), "PUT", url, {"shared": "yes please"}).status_code == 400
    shared = _send(api_as(bob), "PUT", url, {"shared": True})

    assert shared.status_code == 200
    assert shared.json()["shared"] is True
    item.refresh_from_db()
    assert item.shared
    assert _send(api_as(bob), "PUT", url, {"shared": False}).json()["shared"] is False


def test_an_item_of_one_workspace_is_used_everywhere_once(
    workspace: Workspace, bob: User, api_as: ApiClientFactory
) -> None:
    item = _remember(bob, "Meetings after 10", scope=Scope.WORKSPACE, workspace=workspace)
    url = f"/api/memory/items/{item.pk}/everywhere"

    widened = _send(api_as(bob), "POST", url)

    assert widened.status_code == 200, widened.json()
    assert (widened.json()["scope"], widened.json()["workspace_id"]) == ("personal", None)
    item.refresh_from_db()
    assert item.status == Status.SUPERSEDED
    assert _send(api_as(bob), "POST", url).status_code == 409
    personal = widened.json()["id"]
    not_one_workspace = _send(api_as(bob), "POST", f"/api/memory/items/{personal}/everywhere")
    assert not_one_workspace.status_code == 400


def test_a_person_reviews_what_agents_noticed_and_only_their_own(
    bob: User, mallory: User, api_as: ApiClientFactory
) -> None:
    tea = MemoryCandidate.objects.create(owner=bob, text="Likes green tea", source_kind="agent")
    mondays = MemoryCandidate.objects.create(owner=bob, text="Hates Mondays", source_kind="agent")
    client = api_as(bob)

    listed = client.get("/api/memory/candidates").json()
    assert [c["text"] for c in listed["candidates"]] == ["Likes green tea", "Hates Mondays"]
    assert api_as(mallory).get("/api/memory/candidates").json()["candidates"] == []
    accept = f"/api/memory/candidates/{tea.pk}/accept"
    assert _send(api_as(mallory), "POST", accept).status_code == 404
    accepted = _send(client, "POST", accept)
    rejected = _send(client, "POST", f"/api/memory/candidates/{mondays.pk}/reject")

    assert accepted.status_code == 200, accepted.json()
    assert accepted.json()["candidate"]["decision"] == "accepted"
    assert accepted.json()["item"]["text"] == "Likes green tea"
    assert MemoryItem.objects.filter(owner=bob, text="Likes green tea").exists()
    assert rejected.json()["decision"] == "rejected"
    assert not MemoryItem.objects.filter(text="Hates Mondays").exists()
    assert _send(client, "POST", accept).status_code == 409
    assert client.get("/api/memory/candidates").json()["candidates"] == []
    assert _send(client, "POST", "/api/memory/candidates/0/accept").status_code == 400


def test_forget_everything_needs_the_words_and_erases_only_the_callers_memory(
    bob: User, mallory: User, api_as: ApiClientFactory
) -> None:
    _remember(bob, "I prefer bullet points")
    kept = _remember(mallory, "I prefer tables")
    MemoryCandidate.objects.create(owner=bob, text="Likes tea", source_kind="agent")
    url = "/api/memory/forget-everything"

    refused = _send(api_as(bob), "POST", url, {"confirm": "yes"})
    assert refused.status_code == 400
    assert "confirm" in refused.json()["errors"]
    assert MemoryItem.objects.filter(owner=bob).exists()
    forgotten = _send(api_as(bob), "POST", url, {"confirm": "Forget everything"})

    assert forgotten.status_code == 200
    assert forgotten.json()["items"] == 1
    assert forgotten.json()["candidates"] == 1
    assert not MemoryItem.objects.filter(owner=bob).exists()
    assert MemoryItem.objects.filter(pk=kept.pk).exists()


def test_a_person_reads_their_items_history_and_nobody_else_can(
    bob: User, mallory: User, api_as: ApiClientFactory
) -> None:
    item = _remember(bob, "I prefer bullet points")
    services.set_pinned(user=bob, item=item, pinned=True)
    url = f"/api/memory/items/{item.pk}/history"

    history = api_as(bob).get(url)

    assert history.status_code == 200
    assert [(row["action"], row["actor"]) for row in history.json()] == [
        ("created", "bob"),
        ("pinned", "bob"),
    ]
    assert api_as(mallory).get(url).status_code == 404
    assert api_as(bob).get("/api/memory/items/0/history").status_code == 400
