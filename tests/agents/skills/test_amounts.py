"""The one reader of amounts and counts the skills work figures out from (share, budget per
thing, rate times quantity)."""

from __future__ import annotations

from agents.skills.amounts import amount, count_of, split_amount


def test_a_canonical_amount_splits_into_currency_and_value() -> None:
    assert split_amount("EUR 1250.5") == ("EUR", 1250.5)
    assert split_amount("about 40 quid") is None


def test_a_worked_out_amount_is_said_without_empty_pence() -> None:
    assert amount("GBP", 135.0) == amount("GBP", 135)
    assert "135" in amount("GBP", 135.0)
    assert ".00" not in amount("GBP", 135.0)
    assert "12.60" in amount("GBP", 12.6)


def test_a_count_is_read_with_an_adjective_between_and_in_words() -> None:
    notes = "Order 14 refurbished laptops and four docking stations for the new starters."
    assert count_of("laptops", notes) == (14, "14 refurbished laptops")
    assert count_of("docking", notes) == (4, "4 docking")
    assert count_of("station", notes) == (4, "4 docking stations")
    assert count_of("monitors", notes) is None
