"""The rule-based reading of chat: structured preference keys (SHARED_CONTRACTS.md), scoped to
kinds of work where the sentence names one, from commands and plain statements alike."""

from __future__ import annotations

import pytest

from agents.memory.extractors import (
    extract_statements,
    key_problem,
    parse_command,
    structure,
    subject_name,
)


@pytest.mark.parametrize(
    ("sentence", "key", "value"),
    [
        ("I prefer British spelling", "spelling", "british"),
        ("Please use American spelling now: color, organize", "spelling", "american"),
        ("I like numbered lists, not bullet points", "list_style", "numbered"),
        ("Use plain bullet points for lists", "list_style", "bullets"),
        ("No lists please: write it as short paragraphs", "list_style", "prose"),
        ("Keep documents short: 90 words at most", "length", "short"),
        ("Keep answers under 500 words", "length", "medium"),
        ("I want detailed answers", "length", "long"),
        ("Keep the tone formal", "tone", "formal"),
        ("Write in a casual style", "tone", "casual"),
        ("I write informal tone with friends", "tone", "casual"),
        ("Please write ISO dates, like 2027-03-04", "date_format", "iso"),
        ("Dates as 4 March 2027, please", "date_format", "day_month_year"),
        ("I prefer American dates: March 4, 2027", "date_format", "month_day_year"),
        ("I prefer a decimal comma", "number_format", "decimal comma"),
        ("Use spaces as thousands separators", "number_format", "spaces as thousands separators"),
        ("No headings please", "headings", "no"),
        ("I like clear headings", "headings", "yes"),
        ("Ask me less", "asking", "less"),
        ("You ask too many questions", "asking", "less"),
        ("Just go ahead", "asking", "never"),
        ("At most one question, please", "asking", "at_most:1"),
        ("no more than 2 questions", "asking", "at_most:2"),
        ("Check with me first", "asking", "more"),
    ],
)
def test_common_preferences_get_their_structured_key(sentence, key, value):
    found = structure(sentence)

    assert found is not None
    assert (found.key, found.value) == (key, value)
    assert key_problem(found.key, found.value) is None


def test_a_habit_of_one_kind_of_work_fills_that_templates_slot():
    found = structure("our stand-ups always run 15 minutes")

    assert found is not None
    assert (found.key, found.value, found.kinds) == (
        "slot:duration",
        "15 minutes",
        ("meeting_brief",),
    )


def test_a_preference_for_one_kind_of_work_is_scoped_to_it():
    found = structure("For blog posts I prefer a casual tone")

    assert found is not None
    assert (found.key, found.value, found.kinds) == ("tone", "casual", ("blog_post",))
    assert structure("Ask me less about meetings").kinds == ()  # how to be asked: everywhere


@pytest.mark.parametrize(
    ("body", "key", "value"),
    [
        ("remember that I prefer British spelling", "spelling", "british"),
        ("@Mira remember: just go ahead", "asking", "never"),
        ("@Zoë-bot please remember that at most one question", "asking", "at_most:1"),
        ("remember that our stand-ups always run 15 minutes", "slot:duration", "15 minutes"),
    ],
)
def test_chat_commands_are_structured_too(body, key, value):
    command = parse_command(body)

    assert command is not None
    assert (command.proposal.key, command.proposal.value) == (key, value)


def test_non_ascii_text_and_names_are_kept_and_still_structured():
    command = parse_command("remember that I, Zoë Łukasiewicz, prefer British spelling — «colour»")

    assert command is not None
    assert command.proposal.text == "I, Zoë Łukasiewicz, prefer British spelling — «colour»"
    assert (command.proposal.key, command.proposal.value) == ("spelling", "british")
    found = extract_statements("渡辺です。 I prefer numbered lists. Ça va? From now on ask me less")
    assert {(p.key, p.value) for p in found} == {("list_style", "numbered"), ("asking", "less")}


def test_statements_without_a_lasting_preference_are_not_extracted():
    assert extract_statements("Can you make this one short?") == []
    assert extract_statements("The venue is short on chairs") == []
    assert parse_command("remember to call Sam") is None


@pytest.mark.parametrize(
    ("key", "value"),
    [("spelling", "en-GB"), ("asking", "sometimes"), ("length", "tiny"), ("Lists!", "x")],
)
def test_invalid_structured_values_are_named(key, value):
    assert key_problem(key, value) is not None


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Zoë prefers American spelling", "Zoë"),
        ("@渡辺 always wants ISO dates", "渡辺"),
        ("Łukasz is the venue contact", "Łukasz"),
        ("I prefer bullets", None),
        ("Our stand-ups always run 15 minutes", None),
        ("Bullet points, please", None),
    ],
)
def test_the_person_a_sentence_is_about_is_read_from_its_start(text, name):
    assert subject_name(text) == name


@pytest.mark.parametrize(
    "sentence",
    [
        "Put the key numbers in bold.",
        "bold the numbers",
        "Please put figures in bold",
        "make amounts bold",
        "I like the totals in bold type",
        "Use bold for the key figures",
        "Prices should always be bold",
        "Zoë here 👋: put the figures in bold, s'il vous plaît — danke!",
        "Für Berichte: make the amounts bold (Kraków, Zürich, 東京)",
    ],
)
def test_a_wish_for_bold_numbers_gets_its_structured_key(sentence):
    found = structure(sentence)

    assert found is not None
    assert (found.key, found.value) == ("bold_numbers", "yes")
    assert key_problem(found.key, found.value) is None


def test_a_wish_against_bold_numbers_is_no_and_other_bold_words_are_not_about_numbers():
    against = structure("Please don't bold the numbers")
    headings = structure("Use bold headings and number the steps")

    assert against is not None
    assert (against.key, against.value) == ("bold_numbers", "no")
    assert headings is not None
    assert headings.key == "headings"  # bold, and a number, but not bold numbers
    assert structure("Bitte die Zahlen fett") is None  # not read; its unicode breaks nothing


def test_bold_numbers_are_remembered_from_a_command_and_a_statement():
    command = parse_command("@Eve remember that key figures go in bold, für alle Berichte")
    statements = extract_statements("Thanks Zoë! From now on, please make amounts bold.")

    assert command is not None
    assert (command.proposal.key, command.proposal.value) == ("bold_numbers", "yes")
    assert [(p.key, p.value) for p in statements] == [("bold_numbers", "yes")]
