"""The package-backed parsers (agents/policies/parse_numbers.py, parse_money.py, parse_dates.py,
places.py) on hand-written cases."""

from __future__ import annotations

from datetime import date

import pytest

from agents.policies import parse_dates, parse_money, parse_numbers, places

MONDAY = date(2027, 3, 1)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Plan a trip to Lisbon next Friday for 4 people", ["2027-03-05"]),
        ("Prepare a brief for my meeting with Ana tomorrow about the Q3 roadmap", ["2027-03-02"]),
        ("the day after tomorrow", ["2027-03-03"]),
        ("in two weeks", ["2027-03-15"]),
        ("from 4 May to 9 May", ["2027-05-04", "2027-05-09"]),
        ("4-9 May", ["2027-05-04", "2027-05-09"]),
        ("On the 2nd of June we leave", ["2027-06-02"]),
        ("Start: 2027-05-04", ["2027-05-04"]),
        ("in May", ["2027-05"]),
    ],
)
def test_dates_are_read_against_the_requests_own_date(text, expected):
    assert [f.value for f in parse_dates.find_dates(text, today=MONDAY)] == expected


def test_the_same_words_give_other_dates_on_another_day():
    thursday = date(2027, 3, 4)
    assert parse_dates.find_dates("next Friday", today=thursday)[0].value == "2027-03-05"
    assert parse_dates.find_dates("tomorrow", today=thursday)[0].value == "2027-03-05"


@pytest.mark.parametrize(
    "text",
    [
        "We are 12 people",
        "a 45-minute lesson for year 9",
        "You may 2 go",
        "Budget €1,500",
        "The workshop runs for two days",
        "We will meet Zoë and Łukasz",
    ],
)
def test_what_is_not_a_date_is_not_read_as_one(text):
    assert parse_dates.find_dates(text, today=MONDAY) == []


def test_a_numeric_date_has_two_readings_when_both_exist():
    assert parse_dates.numeric_date_readings("on 03/04", today=MONDAY) == (
        "2027-04-03",
        "2027-03-04",
    )
    assert parse_dates.numeric_date_readings("on 25/03", today=MONDAY) == ("2027-03-25",)
    assert parse_dates.find_dates("on 03/04", today=MONDAY)[0].confidence < 0.5


def test_times_of_day_are_read():
    assert [f.value for f in parse_dates.find_times("tomorrow at 3pm", today=MONDAY)] == ["15:00"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("€1,500", "EUR 1500"),
        ("1.500,00 €", "EUR 1500"),
        ("900 EUR", "EUR 900"),
        ("$2k", "USD 2000"),
        ("CHF 1'200", "CHF 1200"),
        ("1 200 zł", "PLN 1200"),
        ("₹5,000", "INR 5000"),
        ("R$ 200", "BRL 200"),
        ("three thousand pounds", "GBP 3000"),
        ("250 Swiss francs", "CHF 250"),
        ("¥30000", "JPY 30000"),
        ("1,5 million EUR", "EUR 1500000"),
    ],
)
def test_money_is_read_with_its_currency(text, expected):
    assert [f.value for f in parse_money.find_money(text)] == [expected]


def test_a_number_without_a_currency_is_not_money_but_still_an_amount():
    assert parse_money.find_money("budget of about 800") == []
    assert parse_money.parse_amount("budget of about 800") == "800"


def test_numbers_written_as_words_are_read():
    converted = parse_numbers.digits_for_words(
        "twelve people, twenty-five students, two hundred and fifty"
    )
    assert converted == "12 people, 25 students, 250"
    assert parse_numbers.digits_for_words("the first week") == "the first week"  # ordinals stay


def test_counts_of_people_in_digits_or_words():
    found = parse_numbers.find_counts(
        "We are twelve people, 4 adults, a party of six", ["people", "adults"]
    )
    assert [f.value for f in found] == ["12", "4", "6"]


def test_durations_in_many_phrasings():
    found = parse_numbers.find_durations(
        "a 45-minute call, two hours, an hour and a half, a laid-back week"
    )
    assert [f.value for f in found] == ["45 minutes", "120 minutes", "90 minutes", "7 days"]
    assert parse_numbers.find_durations("in 2 weeks") == []  # a date, not a length


def test_a_place_several_cities_share_has_several_readings():
    labels = [p.label for p in places.place_readings("Portland")]
    assert labels[:2] == ["Portland, Oregon", "Portland, Maine"]
    assert len(places.place_readings("Córdoba")) > 1


def test_the_context_naming_a_state_or_country_settles_the_place():
    readings = places.place_readings("Portland", context="Portland, Maine in July")
    assert [p.label for p in readings] == ["Portland, Maine"]


@pytest.mark.parametrize("name", ["Lisbon", "London", "Kraków", "São Paulo", "Paris"])
def test_a_place_one_city_dominates_has_one_reading(name):
    assert len(places.place_readings(name)) == 1
