from __future__ import annotations

from agents.policies.memory_facts import MemoryFact, facts_for_requester


def _fact(person_id, key, value, *, shared=False, kinds=()):
    return MemoryFact(
        item_id=None,
        person_id=person_id,
        person_name=f"p{person_id}",
        key=key,
        value=value,
        scope="workspace",
        kinds=kinds,
        text=f"{key}={value}",
        shared=shared,
    )


def test_only_the_requesters_asking_preference_is_read():
    facts = [_fact(1, "asking", "never"), _fact(2, "asking", "more", shared=True)]
    assert [f.value for f in facts_for_requester(facts, 2)] == ["more"]
    assert [f.value for f in facts_for_requester(facts, 1)] == ["never"]


def test_a_shared_slot_fact_from_someone_else_is_read_but_not_a_shared_preference():
    facts = [
        _fact(1, "slot:budget", "500 EUR", shared=True),
        _fact(1, "spelling", "british", shared=True),
    ]
    assert [f.key for f in facts_for_requester(facts, 2)] == ["slot:budget"]


def test_a_fact_scoped_to_other_kinds_of_work_is_not_read():
    facts = [_fact(1, "slot:duration", "15 minutes", kinds=("meeting_brief",))]
    assert facts_for_requester(facts, 1, kind="travel_plan") == []
    assert facts_for_requester(facts, 1, kind="meeting_brief")[0].slot_name == "duration"
