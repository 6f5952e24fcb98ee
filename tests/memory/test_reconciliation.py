from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from agents.memory import services
from agents.memory.extractors import Proposal
from agents.memory.models import MemoryHistory, MemoryItem, Scope, Source, Status

CHAT = services.Provenance(source_kind=Source.CHAT_COMMAND, task_id=7, message_id=42, person_id=1)


def remember(owner, text, key="", value="", **kwargs):
    return services.reconcile(
        owner=owner, proposal=Proposal(text=text, key=key, value=value), provenance=CHAT, **kwargs
    )


def test_a_new_preference_is_added_with_its_provenance_and_a_history_row(alice):
    result = remember(alice, "I prefer bullet points", "list_style", "bullets")

    assert result.action == "added"
    item = result.item
    assert (item.owner, item.scope, item.key, item.value) == (
        alice,
        "personal",
        "list_style",
        "bullets",
    )
    assert (item.source_kind, item.source_task_id, item.source_message_id) == (
        "chat_command",
        7,
        42,
    )
    assert item.status == Status.ACTIVE
    assert item.valid_to is None
    assert [h.action for h in item.history.all()] == ["created"]


def test_a_changed_value_supersedes_the_old_item_which_keeps_its_end_date(alice):
    old = remember(alice, "I prefer bullet points", "list_style", "bullets").item

    result = remember(alice, "Write in prose, no bullets", "list_style", "prose")

    old.refresh_from_db()
    assert result.action == "superseded"
    assert old.status == Status.SUPERSEDED
    assert old.valid_to is not None
    assert old.valid_to <= result.item.valid_from
    assert old.superseded_by == result.item
    assert list(MemoryItem.objects.filter(owner=alice, status="active")) == [result.item]
    assert [h.action for h in old.history.all()] == ["created", "superseded"]


def test_saying_the_same_thing_again_keeps_one_item_and_confirms_it(alice):
    first = remember(alice, "I prefer bullet points", "list_style", "bullets").item

    result = remember(alice, "Bullets please", "list_style", "bullets")

    assert result.action == "kept"
    assert result.item == first
    first.refresh_from_db()
    assert first.times_confirmed == 2
    assert MemoryItem.objects.filter(owner=alice).count() == 1
    assert [h.action for h in first.history.all()] == ["created", "confirmed"]


def test_near_identical_free_text_is_kept_not_duplicated(alice):
    remember(alice, "My manager is Priya Shah")

    result = remember(alice, "my manager is Priya Shah.")

    assert result.action == "kept"
    assert MemoryItem.objects.filter(owner=alice).count() == 1


def test_duplicates_that_slipped_in_are_merged_into_one(alice):
    a = MemoryItem.objects.create(
        owner=alice, text="Use bullets", key="list_style", value="bullets"
    )
    b = MemoryItem.objects.create(
        owner=alice, text="Bullet points", key="list_style", value="bullets", pinned=True
    )

    result = remember(alice, "I like bullet points", "list_style", "bullets")

    a.refresh_from_db()
    b.refresh_from_db()
    kept, merged = (b, a) if result.item == b else (a, b)
    assert kept.status == Status.ACTIVE
    assert kept.pinned
    assert merged.status == Status.SUPERSEDED
    assert merged.superseded_by == kept
    assert merged.history.filter(action=MemoryHistory.Action.MERGED).exists()
    assert MemoryItem.objects.filter(owner=alice, status="active").count() == 1


def test_forget_invalidates_matching_items_and_keeps_them_in_history(alice):
    item = remember(alice, "I prefer bullet points", "list_style", "bullets").item

    result = services.reconcile(
        owner=alice,
        proposal=Proposal(text="I like bullets", key="list_style", value="bullets", forget=True),
        provenance=CHAT,
    )

    item.refresh_from_db()
    assert result.action == "invalidated"
    assert item.status == Status.DELETED
    assert item.valid_to is not None
    assert [h.action for h in item.history.all()] == ["created", "invalidated"]


def test_forgetting_something_never_remembered_changes_nothing(alice):
    item = remember(alice, "I prefer bullet points", "list_style", "bullets").item

    result = services.reconcile(
        owner=alice, proposal=Proposal(text="my cat is called Tom", forget=True), provenance=CHAT
    )

    assert result.action == "ignored"
    item.refresh_from_db()
    assert item.status == Status.ACTIVE


def test_scopes_are_reconciled_separately(alice, workspace):
    everywhere = remember(alice, "Bullets", "list_style", "bullets").item

    here = remember(
        alice, "Prose in Acme", "list_style", "prose", scope=Scope.WORKSPACE, workspace=workspace
    ).item

    everywhere.refresh_from_db()
    assert everywhere.status == Status.ACTIVE
    assert here.status == Status.ACTIVE
    assert here.workspace == workspace


def test_people_are_reconciled_separately(alice, bob):
    remember(alice, "Bullets", "list_style", "bullets")

    result = remember(bob, "Prose", "list_style", "prose")

    assert result.action == "added"
    assert MemoryItem.objects.filter(status="active").count() == 2


def test_bad_proposals_are_refused_with_reasons(alice, workspace):
    with pytest.raises(ValidationError) as error:
        remember(alice, "   ", "Lists!", "")
    assert {"text", "key"} <= set(error.value.message_dict)
    with pytest.raises(ValidationError, match="whole number"):
        remember(alice, "Short", "max_words", "short")
    with pytest.raises(ValidationError, match="long, medium, short"):
        remember(alice, "Tiny", "length", "tiny")
    with pytest.raises(ValidationError, match="at_most:N"):
        remember(alice, "Ask me rarely", "asking", "rarely")
    with pytest.raises(ValidationError, match="need a workspace"):
        remember(alice, "Team rule", scope=Scope.TEAM)


def test_memory_off_means_nothing_is_remembered_from_conversations(alice):
    services.update_settings(
        user=alice, enabled=False, review_mode="auto", admin_access_allowed=False
    )

    result = remember(alice, "I prefer bullet points", "list_style", "bullets")

    assert result.action == "ignored"
    assert not MemoryItem.objects.exists()


def test_review_first_puts_agent_proposals_in_the_inbox(alice):
    services.update_settings(
        user=alice, enabled=True, review_mode="review", admin_access_allowed=False
    )
    provenance = services.Provenance(source_kind=Source.AGENT, turn_id=9, task_id=3)

    result = services.propose(
        owner=alice,
        proposal=Proposal(text="Likes bullets", key="list_style", value="bullets"),
        provenance=provenance,
    )
    again = services.propose(
        owner=alice,
        proposal=Proposal(text="Bullets!", key="list_style", value="bullets"),
        provenance=provenance,
    )

    assert result.action == again.action == "proposed"
    assert result.candidate == again.candidate
    assert result.candidate.source_turn_id == 9
    assert not MemoryItem.objects.exists()


def test_accepting_a_proposal_remembers_it_and_rejecting_one_does_not(alice):
    services.update_settings(
        user=alice, enabled=True, review_mode="review", admin_access_allowed=False
    )
    provenance = services.Provenance(source_kind=Source.AGENT, turn_id=9)
    yes = services.propose(
        owner=alice,
        proposal=Proposal(text="Likes bullets", key="list_style", value="bullets"),
        provenance=provenance,
    ).candidate
    no = services.propose(
        owner=alice, proposal=Proposal(text="Hates Mondays"), provenance=provenance
    ).candidate

    accepted = services.accept_candidate(user=alice, candidate=yes)
    services.reject_candidate(user=alice, candidate=no)

    assert accepted.item.source_turn_id == 9
    assert list(MemoryItem.objects.values_list("text", flat=True)) == ["Likes bullets"]
    with pytest.raises(ValidationError):
        services.accept_candidate(user=alice, candidate=no)


def test_auto_accept_reconciles_agent_proposals_at_once(alice):
    result = services.propose(
        owner=alice,
        proposal=Proposal(text="Likes bullets", key="list_style", value="bullets"),
        provenance=services.Provenance(source_kind=Source.AGENT, turn_id=9),
    )

    assert result.action == "added"
    assert result.item.source_turn_id == 9
