from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from agents.memory import services
from agents.memory.models import MemoryCandidate, MemoryHistory, MemoryItem, Scope, Status
from collab.audit.models import AuditEvent


@pytest.fixture
def alices(alice, workspace):
    """alice's memory: one item everywhere, one only in Acme, one team item of Acme."""
    return {
        "personal": MemoryItem.objects.create(
            owner=alice, text="I prefer bullet points", key="list_style", value="bullets"
        ),
        "workspace": MemoryItem.objects.create(
            owner=alice, text="In Acme, cite sources", scope=Scope.WORKSPACE, workspace=workspace
        ),
        "team": MemoryItem.objects.create(
            owner=alice, text="Acme writes formally", scope=Scope.TEAM, workspace=workspace
        ),
    }


def test_the_page_lists_my_memory_by_scope(as_user, alice, alices):
    page = as_user(alice).get(reverse("memory:page")).content.decode()

    assert "Everywhere" in page
    assert "I prefer bullet points" in page
    assert "Only in Acme" in page
    assert "In Acme, cite sources" in page
    assert "Team memory of Acme" in page
    assert "Acme writes formally" in page


def test_search_narrows_the_list(as_user, alice, alices):
    page = as_user(alice).get(reverse("memory:page"), {"q": "sources"}).content.decode()

    assert "In Acme, cite sources" in page
    assert "I prefer bullet points" not in page


@pytest.mark.parametrize("who", ["bob", "carol", "mallory"])
def test_nobody_sees_anothers_personal_memory(as_user, request, alices, who):
    client = as_user(request.getfixturevalue(who))

    page = client.get(reverse("memory:page")).content.decode()
    assert "I prefer bullet points" not in page
    assert "In Acme, cite sources" not in page
    assert "I prefer bullet points" not in client.get(reverse("memory:export")).content.decode()
    for kind in ("personal", "workspace"):
        pk = alices[kind].pk
        assert client.get(reverse("memory:item", args=[pk])).status_code == 404
        for name in ("edit", "delete", "pin"):
            response = client.post(
                reverse(f"memory:{name}", args=[pk]), {"text": "hijacked", "kind": "fact"}
            )
            assert response.status_code == 404
    assert MemoryItem.objects.filter(text="hijacked").count() == 0
    assert MemoryItem.objects.filter(status=Status.ACTIVE).count() == 3


def test_team_memory_is_seen_by_members_and_changed_by_owners_and_editors(
    as_user, bob, carol, mallory, alices
):
    team = alices["team"]
    url = reverse("memory:edit", args=[team.pk])
    change = {"text": "Acme writes plainly", "kind": "preference"}

    assert as_user(mallory).get(reverse("memory:item", args=[team.pk])).status_code == 404
    assert (
        "Acme writes formally" not in as_user(mallory).get(reverse("memory:page")).content.decode()
    )
    assert as_user(carol).get(reverse("memory:item", args=[team.pk])).status_code == 200
    assert as_user(carol).post(url, change).status_code == 403
    assert as_user(carol).post(reverse("memory:delete", args=[team.pk])).status_code == 403
    assert as_user(bob).post(url, change).status_code == 302
    team.refresh_from_db()
    assert team.text == "Acme writes plainly"


def test_edit_pin_and_delete_record_history(as_user, alice, alices):
    client = as_user(alice)
    pk = alices["personal"].pk

    client.post(
        reverse("memory:edit", args=[pk]),
        {
            "text": "Bullets, short ones",
            "kind": "preference",
            "key": "list_style",
            "value": "bullets",
        },
    )
    client.post(reverse("memory:pin", args=[pk]), {"pinned": "1"})
    client.post(reverse("memory:delete", args=[pk]))

    item = MemoryItem.objects.get(pk=pk)
    assert item.text == "Bullets, short ones"
    assert item.pinned
    assert item.status == Status.DELETED
    assert list(item.history.values_list("action", flat=True)) == ["edited", "pinned", "deleted"]
    assert "Bullets, short ones" not in client.get(reverse("memory:page")).content.decode()


def test_bad_edits_answer_400_with_reasons(as_user, alice, alices):
    response = as_user(alice).post(
        reverse("memory:edit", args=[alices["personal"].pk]),
        {"text": "Short", "kind": "preference", "key": "max_words", "value": "short"},
    )

    assert response.status_code == 400
    assert "whole number" in response.content.decode()


def test_adding_a_memory_on_the_page(as_user, alice, bob, workspace, carol):
    response = as_user(alice).post(
        reverse("memory:create"),
        {"text": "Agendas go in tables", "kind": "preference", "where": f"team:{workspace.pk}"},
    )
    assert response.status_code == 302
    assert MemoryItem.objects.get(text="Agendas go in tables").scope == Scope.TEAM

    viewer = as_user(carol).post(
        reverse("memory:create"),
        {"text": "Viewer rule", "kind": "preference", "where": f"team:{workspace.pk}"},
    )
    assert viewer.status_code == 403
    bad = as_user(alice).post(reverse("memory:create"), {"text": "x", "where": "team:abc"})
    assert bad.status_code == 400


def test_export_then_import_round_trips(as_user, alice, alices):
    client = as_user(alice)
    exported = client.get(reverse("memory:export"))
    assert exported.status_code == 200
    data = json.loads(exported.content)
    assert {i["text"] for i in data["items"]} == {"I prefer bullet points", "In Acme, cite sources"}
    services.forget_everything(user=alice)

    response = client.post(
        reverse("memory:import"),
        {"file": SimpleUploadedFile("memory.json", exported.content, "application/json")},
    )

    assert response.status_code == 302
    back = MemoryItem.objects.filter(owner=alice).exclude(scope=Scope.TEAM)
    assert {(i.text, i.scope, i.key, i.value, i.source_kind) for i in back} == {
        ("I prefer bullet points", "personal", "list_style", "bullets", "import"),
        ("In Acme, cite sources", "workspace", "", "", "import"),
    }
    # Importing the same file again merges instead of duplicating.
    client.post(
        reverse("memory:import"),
        {"file": SimpleUploadedFile("memory.json", exported.content, "application/json")},
    )
    assert back.count() == 2


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"not json", "Invalid JSON"),
        (b'{"format": "other", "version": 1, "items": []}', "format"),
        (b'{"format": "collab-memory", "version": 1, "items": [{"text": ""}]}', "items.0.text"),
        (
            b'{"format": "collab-memory", "version": 1, "items": '
            b'[{"text": "x", "scope": "workspace", "workspace_id": 999}]}',
            "not a workspace you belong to",
        ),
    ],
)
def test_bad_import_files_answer_400_with_reasons(as_user, alice, content, reason):
    response = as_user(alice).post(
        reverse("memory:import"), {"file": SimpleUploadedFile("m.json", content)}
    )

    assert response.status_code == 400
    assert reason in response.content.decode()
    assert not MemoryItem.objects.exists()


def test_importing_into_someone_elses_workspace_is_refused(as_user, mallory, workspace):
    content = json.dumps(
        {
            "format": "collab-memory",
            "version": 1,
            "items": [{"text": "x", "scope": "workspace", "workspace_id": workspace.pk}],
        }
    ).encode()

    response = as_user(mallory).post(
        reverse("memory:import"), {"file": SimpleUploadedFile("m.json", content)}
    )

    assert response.status_code == 400
    assert not MemoryItem.objects.exists()


def test_forget_everything_hard_deletes_my_memory_and_is_audited(as_user, alice, bob, alices):
    bobs = MemoryItem.objects.create(owner=bob, text="Bob likes prose")
    MemoryCandidate.objects.create(owner=alice, text="Maybe likes tea", source_kind="agent")
    client = as_user(alice)

    refused = client.post(reverse("memory:forget_everything"), {"confirm": "yes"})
    response = client.post(reverse("memory:forget_everything"), {"confirm": "Forget everything"})

    assert refused.status_code == 400
    assert response.status_code == 302
    assert not MemoryItem.objects.filter(owner=alice).exclude(scope=Scope.TEAM).exists()
    assert not MemoryHistory.objects.filter(item_id=alices["personal"].pk).exists()
    assert not MemoryCandidate.objects.filter(owner=alice).exists()
    assert MemoryItem.objects.filter(pk=alices["team"].pk).exists()  # team memory stays
    assert MemoryItem.objects.filter(pk=bobs.pk).exists()
    event = AuditEvent.objects.get(action=AuditEvent.Action.MEMORY_FORGOTTEN)
    assert event.actor == alice
    assert event.data["items"] == 2
    assert "bullet" not in json.dumps(event.data)


def test_switching_memory_off_is_saved_and_shown(as_user, alice):
    client = as_user(alice)

    client.post(reverse("memory:settings"), {"review_mode": "review"})

    settings = services.settings_for(alice)
    assert not settings.enabled
    assert settings.review_mode == "review"
    assert 'data-testid="memory-off"' in client.get(reverse("memory:page")).content.decode()
    assert as_user(alice).post(reverse("memory:settings"), {"review_mode": "??"}).status_code == 400


def test_the_review_inbox_accepts_and_rejects(as_user, alice, bob):
    yes = MemoryCandidate.objects.create(
        owner=alice,
        text="Likes numbered lists",
        key="list_style",
        value="numbered",
        source_kind="agent",
    )
    no = MemoryCandidate.objects.create(owner=alice, text="Hates Mondays", source_kind="agent")
    client = as_user(alice)
    assert "Likes numbered lists" in client.get(reverse("memory:page")).content.decode()

    assert as_user(bob).post(reverse("memory:accept", args=[yes.pk])).status_code == 404
    client.post(reverse("memory:accept", args=[yes.pk]))
    client.post(reverse("memory:reject", args=[no.pk]))

    assert list(MemoryItem.objects.values_list("text", flat=True)) == ["Likes numbered lists"]
    assert client.post(reverse("memory:reject", args=[no.pk])).status_code == 400


def test_admins_read_memory_only_when_allowed_and_every_read_is_audited(
    as_user, alice, mallory, alices
):
    mallory.is_staff = True
    mallory.save()
    url = reverse("memory:admin_read", args=[alice.pk])

    assert as_user(mallory).get(url).status_code == 404
    services.update_settings(
        user=alice, enabled=True, review_mode="auto", admin_access_allowed=True
    )
    page = as_user(mallory).get(url)

    assert page.status_code == 200
    assert "I prefer bullet points" in page.content.decode()
    event = AuditEvent.objects.get(action=AuditEvent.Action.MEMORY_ADMIN_ACCESS)
    assert (event.actor, event.data["subject_user_id"]) == (mallory, alice.pk)


def test_non_staff_never_read_others_memory_even_when_allowed(as_user, alice, bob):
    services.update_settings(
        user=alice, enabled=True, review_mode="auto", admin_access_allowed=True
    )

    assert as_user(bob).get(reverse("memory:admin_read", args=[alice.pk])).status_code == 404


def test_the_nav_links_to_the_memory_page(as_user, alice):
    page = as_user(alice).get(reverse("workspaces:list")).content.decode()

    assert f'href="{reverse("memory:page")}"' in page


def test_sharing_with_my_workspaces_is_off_by_default_and_a_switch_on_the_page(
    as_user, alice, bob, alices
):
    client = as_user(alice)
    item = alices["personal"]
    page = client.get(reverse("memory:page")).content.decode()
    assert not item.shared
    assert "Share with my workspaces" in page

    client.post(reverse("memory:share", args=[item.pk]), {"shared": "1"})
    item.refresh_from_db()
    assert item.shared
    assert "Stop sharing" in client.get(reverse("memory:page")).content.decode()
    client.post(reverse("memory:share", args=[item.pk]), {"shared": "0"})
    item.refresh_from_db()
    assert not item.shared
    assert list(item.history.values_list("action", flat=True)) == ["shared", "unshared"]

    # nobody else can share alice's memory, and team memory is the workspace's already
    assert as_user(bob).post(reverse("memory:share", args=[item.pk])).status_code == 404
    team = client.post(reverse("memory:share", args=[alices["team"].pk]), {"shared": "1"})
    assert team.status_code == 400


def test_the_history_names_the_person_who_said_it_in_chat(as_user, alice, workspace, task):
    from collab.tasks.services import post_message
    from tests.factories import membership_of

    post_message(
        membership=membership_of(workspace, alice),
        task=task,
        body="remember that I prefer British spelling",
    )
    item = MemoryItem.objects.get(owner=alice, key="spelling")

    assert item.value == "british"
    assert item.history.get().actor == alice
    page = as_user(alice).get(reverse("memory:item", args=[item.pk])).content.decode()
    assert "an agent" not in page


def test_an_item_kept_for_one_workspace_is_widened_only_by_its_owner(as_user, alice, bob, alices):
    local = alices["workspace"]
    assert "Use everywhere" in as_user(alice).get(reverse("memory:page")).content.decode()
    assert as_user(bob).post(reverse("memory:everywhere", args=[local.pk])).status_code == 404

    as_user(alice).post(reverse("memory:everywhere", args=[local.pk]))

    local.refresh_from_db()
    everywhere = MemoryItem.objects.get(owner=alice, text=local.text, status=Status.ACTIVE)
    assert (everywhere.scope, everywhere.workspace) == (Scope.PERSONAL, None)
    assert (local.status, local.superseded_by) == (Status.SUPERSEDED, everywhere)
    assert everywhere.history.get().actor == alice
    again = as_user(alice).post(reverse("memory:everywhere", args=[alices["personal"].pk]))
    assert again.status_code == 400
