from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from agents.memory import search, services
from agents.memory.models import MemoryItem, Scope
from agents.memory.selectors import retrieve_for_turn
from agents.policies.memory_facts import MemoryFact, facts_for_requester
from tests.factories import make_workspace


def item(owner, text, **fields):
    return MemoryItem.objects.create(owner=owner, text=text, **fields)


def test_relevant_items_are_found_by_full_text_search_and_stemming(alice):
    budget = item(alice, "The offsite budget is capped at 5000 euros")
    item(alice, "My cat is called Tom")

    memory = retrieve_for_turn([alice], None, "What budgets do we have for the offsite?")

    assert [m.item_id for m in memory.relevant] == [budget.pk]


def test_recent_and_confident_items_rank_above_stale_or_doubtful_ones(alice):
    now = timezone.now()
    stale = item(
        alice, "Venue ideas: the old mill", confirmed_at=now - timedelta(days=200), confidence=0.9
    )
    doubtful = item(alice, "Venue ideas: a boat", confidence=0.1)
    fresh = item(alice, "Venue ideas: the lighthouse", confidence=0.9)

    memory = retrieve_for_turn([alice], None, "venue ideas", now=now)

    assert [m.item_id for m in memory.relevant] == [fresh.pk, doubtful.pk, stale.pk]


def test_more_relevant_items_rank_first(alice):
    weak = item(alice, "Lunch is at noon")
    strong = item(alice, "Lunch: vegetarian lunch options for the lunch order")

    memory = retrieve_for_turn([alice], None, "lunch order vegetarian")

    assert [m.item_id for m in memory.relevant] == [strong.pk, weak.pk]


def test_the_structured_profile_is_always_included_and_the_most_specific_scope_wins(
    alice, workspace
):
    item(alice, "Bullets", key="list_style", value="bullets")
    local = item(
        alice,
        "Prose in Acme",
        key="list_style",
        value="prose",
        scope=Scope.WORKSPACE,
        workspace=workspace,
    )
    spelling = item(alice, "British spelling", key="spelling", value="british")

    memory = retrieve_for_turn([alice], workspace, "unrelated words entirely")

    assert {m.item_id for m in memory.profile} == {local.pk, spelling.pk}
    assert {(f.key, f.value) for f in memory.facts} == {
        ("list_style", "prose"),
        ("spelling", "british"),
    }


def test_retrieval_stays_within_the_token_budget(alice):
    for n in range(30):
        item(alice, f"Preference number {n} about coffee " + "x" * 80, key=f"k{n}", value="v")

    memory = retrieve_for_turn([alice], None, "coffee", token_budget=120)

    assert 0 < memory.tokens <= 120
    assert len(memory.items) < 30


def test_the_prompt_says_whose_preference_each_item_is(alice, bob, workspace):
    item(alice, "I prefer bullet points", key="list_style", value="bullets")
    item(bob, "I write in US spelling", key="spelling", value="american")
    item(
        bob,
        "Formal tone for clients",
        scope=Scope.TEAM,
        workspace=workspace,
        key="tone",
        value="formal",
    )

    prompt = retrieve_for_turn([alice, bob], workspace, "draft").as_prompt()

    assert "(alice's preference) I prefer bullet points [list_style=bullets]" in prompt
    assert "(bob's preference) I write in US spelling" in prompt
    assert "(team preference) Formal tone for clients" in prompt


def test_nobody_elses_personal_memory_is_retrieved(alice, bob, workspace):
    item(bob, "Bob's secret: planning a surprise party for alice", key="secret", value="party")
    item(bob, "Bob prefers prose in Acme", scope=Scope.WORKSPACE, workspace=workspace)

    memory = retrieve_for_turn([alice], workspace, "surprise party prose secret")

    assert memory.items == []


def test_personal_memory_from_another_workspace_is_not_retrieved(alice, workspace):
    elsewhere = make_workspace(alice, name="Elsewhere")
    item(alice, "In Elsewhere we use numbered lists", scope=Scope.WORKSPACE, workspace=elsewhere)
    item(alice, "Team rule of Elsewhere: numbered lists", scope=Scope.TEAM, workspace=elsewhere)

    memory = retrieve_for_turn([alice], workspace, "numbered lists")

    assert memory.items == []


def test_memory_off_means_nothing_is_used(alice, workspace):
    item(alice, "I prefer bullet points", key="list_style", value="bullets")
    item(alice, "Offsite budget is 5000")
    services.update_settings(
        user=alice, enabled=False, review_mode="auto", admin_access_allowed=False
    )

    memory = retrieve_for_turn([alice], workspace, "offsite budget")

    assert memory.items == []


def test_superseded_and_deleted_items_are_not_used(alice):
    item(alice, "Bullets about the offsite", key="list_style", value="bullets", status="superseded")
    item(alice, "Offsite at the lake", status="deleted")

    assert retrieve_for_turn([alice], None, "offsite").items == []


def test_asking_less_is_a_structured_fact_of_that_person_only(alice, bob):
    item(alice, "Ask me fewer questions", key="asking", value="less")

    facts = retrieve_for_turn([alice, bob], None, "").facts

    assert [(f.person_id, f.key, f.value) for f in facts] == [(alice.pk, "asking", "less")]
    assert facts_for_requester(facts, bob.pk) == []
    assert [f.value for f in facts_for_requester(facts, alice.pk)] == ["less"]


def test_memory_facts_carry_whose_key_value_scope_kinds_text_and_sharing(alice, workspace):
    mine = item(
        alice,
        "Our stand-ups always run 15 minutes",
        key="slot:duration",
        value="15 minutes",
        kinds="meeting_brief",
        scope=Scope.WORKSPACE,
        workspace=workspace,
        shared=True,
    )
    everywhere = item(alice, "Zoë écrit en anglais britannique", key="spelling", value="british")

    facts = retrieve_for_turn([alice], workspace, "").facts

    assert set(facts) == {
        MemoryFact(
            item_id=mine.pk,
            person_id=alice.pk,
            person_name="alice",
            key="slot:duration",
            value="15 minutes",
            scope="workspace",
            kinds=("meeting_brief",),
            text="Our stand-ups always run 15 minutes",
            shared=True,
        ),
        MemoryFact(
            item_id=everywhere.pk,
            person_id=alice.pk,
            person_name="alice",
            key="spelling",
            value="british",
            scope="global",
            kinds=(),
            text="Zoë écrit en anglais britannique",
            shared=False,
        ),
    }


def test_a_turn_for_one_person_reads_no_one_elses_unshared_memory(alice, bob, workspace):
    item(alice, "Alice's private: planning to leave in March", key="plan", value="leave")
    item(alice, "Alice's budget notes for the offsite", scope=Scope.WORKSPACE, workspace=workspace)
    shared = item(alice, "Offsite venue is the boathouse", shared=True)
    own = item(bob, "Bob prefers bullets", key="list_style", value="bullets")

    memory = retrieve_for_turn(
        [alice, bob], workspace, "offsite budget venue plan", requester_id=bob.pk
    )

    assert {m.item_id for m in memory.items} == {shared.pk, own.pk}
    nobody = retrieve_for_turn([alice, bob], workspace, "offsite venue", requester_id=None)
    assert {m.item_id for m in nobody.items} == {shared.pk}


def test_full_text_search_works_with_filters_across_tables(alice, bob):
    mine = item(alice, "Offsite catering: vegetarian")
    item(bob, "Offsite catering: vegan")

    hits = search.search(
        MemoryItem.objects.filter(owner__username="alice"), "catering offsite", limit=10
    )

    assert [item_id for item_id, _ in hits] == [mine.pk]


def test_the_search_index_follows_edits_and_status_changes(alice):
    memo = item(alice, "Venue is the lighthouse")
    memo.text = "Venue is the boathouse"
    memo.save()

    assert [m.item_id for m in retrieve_for_turn([alice], None, "boathouse").relevant] == [memo.pk]
    assert retrieve_for_turn([alice], None, "lighthouse").relevant == []
    memo.status = "superseded"
    memo.save()
    assert retrieve_for_turn([alice], None, "boathouse").relevant == []


def test_the_score_computed_in_sql_is_the_documented_formula(alice):
    from agents.memory.selectors import score

    now = timezone.now()
    month_old = item(
        alice, "Offsite catering: no fish", confidence=0.6, confirmed_at=now - timedelta(days=30)
    )

    memory = retrieve_for_turn([alice], None, "offsite catering", now=now)

    expected = score(relevance=1.0, confidence=0.6, confirmed_at=month_old.confirmed_at, now=now)
    assert [m.item_id for m in memory.relevant] == [month_old.pk]
    assert abs(memory.relevant[0].score - expected) < 1e-6
    assert abs(expected - 0.8 * 0.75) < 1e-9


def test_retrieval_reads_profile_and_matches_in_one_query(
    alice, bob, workspace, django_assert_num_queries
):
    item(alice, "Bullets", key="list_style", value="bullets")
    item(bob, "Lunch is vegetarian", scope=Scope.WORKSPACE, workspace=workspace)
    item(alice, "Team lunch on Fridays", scope=Scope.TEAM, workspace=workspace)
    services.update_settings(user=bob, enabled=True, review_mode="auto", admin_access_allowed=False)

    with django_assert_num_queries(1):
        memory = retrieve_for_turn([alice, bob], workspace, "lunch plans")

    assert len(memory.profile) == 1
    assert len(memory.relevant) == 2
