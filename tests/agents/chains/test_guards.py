"""The chain guards as pure functions: the hops since a person last wrote, the hop about to
start, the limits in; the guard that trips (or none) out."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from agents.chains import guards
from agents.chains.hops import ERROR, HANDOFF, REVIEW, HopRecord, classify_hop

pytestmark = pytest.mark.mode_independent

ACE, BEE, CY = 1, 2, 3
T0 = datetime(2026, 12, 7, 9, 0, tzinfo=UTC)
ROOMY = guards.Limits(budget=50, rate=50, rate_seconds=60)

_source = iter(range(1, 10_000))


def hop(
    sender: int, receiver: int, text: str, *, kind: str = HANDOFF, second: float = 0
) -> HopRecord:
    return HopRecord(
        sender=sender,
        receiver=receiver,
        kind=kind,
        text=text,
        at=T0 + timedelta(seconds=second),
        source=next(_source),
    )


def walk(hops: list[HopRecord], limits: guards.Limits = ROOMY) -> guards.Trip | None:
    """Offer each hop in turn, as the chain would; the first trip, or None."""
    for n, candidate in enumerate(hops):
        trip = guards.check(hops[:n], candidate, limits)
        if trip is not None:
            return trip
    return None


def test_the_hop_budget_lets_budget_hops_through_and_stops_the_next() -> None:
    limits = guards.Limits(budget=3, rate=50, rate_seconds=60)
    window = [
        hop(ACE, BEE, "draft the venue shortlist"),
        hop(BEE, CY, "price the catering options"),
        hop(CY, ACE, "book the travel for speakers"),
    ]

    assert guards.check(window[:2], window[2], limits) is None
    trip = guards.check(window, hop(ACE, CY, "order badges and signage"), limits)

    assert trip is not None
    assert trip.guard == guards.BUDGET
    assert "3 hops" in trip.reason


def test_the_rate_limit_counts_one_agents_sends_within_its_window() -> None:
    limits = guards.Limits(budget=50, rate=2, rate_seconds=60)
    window = [
        hop(ACE, BEE, "draft the venue shortlist", second=0),
        hop(BEE, ACE, "shortlist ready for a look", second=10),
        hop(ACE, CY, "price the catering options", second=20),
    ]

    trip = guards.check(window, hop(ACE, BEE, "book the travel for speakers", second=30), limits)

    assert trip is not None
    assert trip.guard == guards.RATE


def test_the_rate_limit_forgets_sends_older_than_its_window() -> None:
    limits = guards.Limits(budget=50, rate=2, rate_seconds=60)
    window = [
        hop(ACE, BEE, "draft the venue shortlist", second=0),
        hop(ACE, CY, "price the catering options", second=20),
    ]

    late = hop(ACE, BEE, "book the travel for speakers", second=75)

    assert guards.check(window, late, limits) is None


def test_one_message_addressing_two_agents_is_one_send() -> None:
    limits = guards.Limits(budget=50, rate=2, rate_seconds=60)
    first = hop(ACE, BEE, "@Bee venue, @Cy catering")
    same_message = HopRecord(ACE, CY, HANDOFF, first.text, first.at, first.source)
    window = [first, same_message]

    assert guards.check(window, hop(ACE, BEE, "book the travel for speakers"), limits) is None


def test_a_loop_disguised_by_small_wording_changes_is_caught() -> None:
    hops = [
        hop(ACE, BEE, "@Bee please check the budget section 2.", kind=REVIEW),
        hop(BEE, CY, "@cy: Please check the budget-section (v3)!", kind=REVIEW),
    ]

    trip = walk(hops)

    assert trip is not None
    assert trip.guard == guards.LOOP
    assert "same review" in trip.reason


def test_a_small_edit_to_a_longer_sentence_is_still_the_same_content() -> None:
    hops = [
        hop(ACE, BEE, "Could you turn the notes into an agenda for the kickoff meeting"),
        hop(BEE, CY, "could you turn these notes into an agenda for the kick-off meeting?"),
    ]

    trip = walk(hops)

    assert trip is not None
    assert trip.guard == guards.LOOP


def test_the_same_content_in_another_kind_of_hop_is_not_a_repeat() -> None:
    hops = [
        hop(ACE, BEE, "@Bee check the budget section", kind=REVIEW),
        hop(BEE, ACE, "@Ace check the budget section", kind=HANDOFF),
    ]

    assert walk(hops) is None


def test_one_error_coming_back_is_caught_whatever_its_numbers() -> None:
    hops = [
        hop(BEE, ACE, "Bee could not finish this turn: out of time after 120 s.", kind=ERROR),
        hop(ACE, BEE, "@Bee try the budget again, smaller this time"),
        hop(BEE, ACE, "Bee could not finish this turn: out of time after 95 s.", kind=ERROR),
    ]

    trip = walk(hops)

    assert trip is not None
    assert trip.guard == guards.LOOP
    assert "same error" in trip.reason


def test_two_different_errors_are_not_a_loop() -> None:
    hops = [
        hop(BEE, ACE, "Bee could not finish this turn: out of time after 120 s.", kind=ERROR),
        hop(ACE, BEE, "@Bee try the budget again, smaller this time"),
        hop(BEE, ACE, "Bee could not finish this turn: the model kept failing.", kind=ERROR),
    ]

    assert walk(hops) is None


def test_two_agents_alternating_a_b_a_b_are_caught_whatever_they_say() -> None:
    hops = [
        hop(ACE, BEE, "draft the venue shortlist"),
        hop(BEE, ACE, "price the catering options"),
        hop(ACE, BEE, "book the travel for speakers"),
        hop(BEE, ACE, "order badges and signage"),
    ]

    assert walk(hops[:3]) is None
    trip = walk(hops)

    assert trip is not None
    assert trip.guard == guards.LOOP
    assert "back and forth" in trip.reason


def test_a_third_agent_between_them_breaks_the_alternation() -> None:
    hops = [
        hop(ACE, BEE, "draft the venue shortlist"),
        hop(BEE, ACE, "price the catering options"),
        hop(ACE, CY, "book the travel for speakers"),
        hop(CY, ACE, "order badges and signage"),
        hop(ACE, BEE, "confirm the wifi contract"),
    ]

    assert walk(hops) is None


def test_a_chain_saying_something_new_at_every_hop_is_not_flagged() -> None:
    hops = [
        hop(ACE, BEE, "@Bee please draft the venue shortlist for 40 people", second=0),
        hop(BEE, CY, "@Cy the shortlist is in the document, can you price catering", second=20),
        hop(CY, ACE, "@Ace catering quotes added; who books the speakers' travel", second=40),
        hop(ACE, CY, "@Cy great, next order badges and signage from the printer", second=60),
        hop(CY, BEE, "@Bee printer booked, please confirm the wifi contract", second=80),
        hop(BEE, ACE, "@Ace wifi confirmed, I updated the risks section", second=100),
    ]

    assert walk(hops) is None


@pytest.mark.parametrize(
    ("text", "normalised"),
    [
        ("@Bee: Check section 2!", "check section #"),
        ("  check\tSECTION  3.1  ", "check section #"),
        ("the budget-section (v2)", "the budget section v #"),
    ],
)
def test_normalise_folds_case_punctuation_numbers_names_and_space(
    text: str, normalised: str
) -> None:
    assert guards.normalise(text) == normalised


@pytest.mark.parametrize(
    ("text", "asked", "answering", "kind"),
    [
        ("@Bee please draft the agenda", False, None, "handoff"),
        ("@Bee can you check the budget section", False, None, "review"),
        ("@Bee which venue did we pick?", False, None, "question"),
        ("@Bee which venue did we pick?", True, None, "question"),
        ("@Bee the budget is fine as it is", False, BEE, "answer"),
        ("@Bee the budget is fine as it is", False, CY, "handoff"),
    ],
)
def test_a_hop_is_typed_by_what_the_agent_did_and_said(
    text: str, asked: bool, answering: int | None, kind: str
) -> None:
    assert classify_hop(text=text, asked=asked, answering=answering, receiver=BEE) == kind


def test_one_message_addressing_two_agents_is_not_a_repeat() -> None:
    first = hop(ACE, BEE, "@Bee take the venue and @Cy the catering")
    same_message = HopRecord(ACE, CY, HANDOFF, first.text, first.at, first.source)

    assert guards.check([first], same_message, ROOMY) is None
