"""What the small embedded model writes is kept to what it does reliably
(agents/llm/embedded_prompt.py and embedded_reply.py): the failures seen on a fresh install, as
inputs."""

from __future__ import annotations

import json

import pytest

from agents import llm
from agents.llm import embedded
from agents.llm.embedded_prompt import CAPABILITIES, SYSTEM, describe_capabilities, prompt
from agents.llm.embedded_reply import (
    MAX_CHARS,
    TurnFacts,
    finish,
    grounded,
    loop_start,
    should_stop,
    shown_so_far,
)

FACTS = TurnFacts(
    requester="ana",
    people=("ana", "ben"),
    document="# Lisbon offsite\n"
    "- Day 1: arrive, check in at the hotel near the river, dinner at eight",
    request="which neighbourhood should we stay in and what does a hotel cost?",
    agent="Assistant",
)


@pytest.mark.parametrize(
    "looping",
    [
        "I'll make sure to provide the most accurate inform. "
        "I'll make sure to provide the most accurate inform. I'll make",
        "Ben Ben Ben Ben Ben",
        "2023-04-23 12:34:53.12.12.10.10.10.10.10",
    ],
)
def test_a_repetition_loop_is_found_and_ends_the_stream(looping: str) -> None:
    assert loop_start(looping) is not None
    assert should_stop(looping, FACTS)


def test_ordinary_text_is_not_a_loop() -> None:
    text = "Alfama is central and lively. A double room costs about 120 EUR... in May, less."
    assert loop_start(text) is None
    assert loop_start("The budget is 1000000 EUR for the group.") is None


def test_a_reply_keeps_its_first_saying_of_a_loop_and_ends_in_a_whole_sentence() -> None:
    reply = finish(
        "Alfama is a good choice. I'll make sure to provide the most accurate inform. "
        "I'll make sure to provide the most accurate inform. I'll ma",
        FACTS,
    )
    assert reply.text == (
        "ana, Alfama is a good choice. I'll make sure to provide the most accurate inform."
    )
    assert reply.text.endswith(".")
    assert "repetition loop cut" in reply.problems


def test_a_reply_cut_off_mid_word_is_trimmed_to_its_last_sentence() -> None:
    reply = finish("ana, stay in Alfama. Hotels there cost about 120 EUR a nig", FACTS)
    assert reply.text == "ana, stay in Alfama."


def test_the_reply_addresses_the_person_who_asked() -> None:
    assert finish("Ben, Alfama is close to the river.", FACTS).text.startswith("ana, ")
    assert finish("Stay near the river.", FACTS).text == "ana, stay near the river."
    assert finish("ana: try Alfama.", FACTS).text == "ana, try Alfama."


def test_a_copy_of_the_document_is_never_the_answer() -> None:
    reply = finish("Day 1: arrive, check in at the hotel near the river, dinner at eight.", FACTS)
    assert "I could not do this well" in reply.text
    assert "a copy of the document" in reply.problems[-1]


def test_nothing_usable_gives_an_honest_short_answer_instead_of_a_retry() -> None:
    reply = finish("Ben Ben Ben Ben Ben Ben", FACTS)
    assert reply.kind == "reply"
    assert reply.text.startswith("Sorry ana, I could not do this well: I am a small local model")
    assert "A stronger model (an administrator can add one on the Models page) would answer" in (
        reply.text
    )
    drafting = finish("", TurnFacts(requester="ana", request="draft the agenda"))
    assert "would draft that in the document" in drafting.text


def test_a_question_is_asked_as_a_question() -> None:
    reply = finish("Which dates do you want to travel?", FACTS)
    assert (reply.kind, reply.text) == ("ask", "ana, which dates do you want to travel?")


def test_the_model_starting_the_next_chat_line_is_cut() -> None:
    reply = finish("Stay in Alfama, it is central. - ben: I agree", FACTS)
    assert reply.text == "ana, stay in Alfama, it is central."


def test_the_prompt_is_short_and_puts_the_request_last() -> None:
    system, user = prompt(
        agent="Assistant",
        requester="ana",
        title="Lisbon offsite",
        goal="Two days for 8 people, 1500 EUR each.",
        document="x" * 5000,
        chat=[("ben", f"line {n}") for n in range(10)],
        request="@Assistant which hotel?",
    )
    assert len(system) + len(user) < 1600
    assert user.endswith("ana asks you: which hotel?\n\nReply to ana.")
    assert "line 5" not in user  # only the last few chat lines
    assert "ana" not in system  # the system message is the same whoever asks ...
    assert system.startswith(SYSTEM)  # ... and starts with the one for every agent (cached)


def test_the_prompt_keeps_what_changes_least_first() -> None:
    base = {
        "agent": "Assistant",
        "title": "Lisbon offsite",
        "goal": "Two days for 8 people.",
        "document": "# Plan\n- Day 1",
    }
    one = "\n".join(prompt(requester="ana", chat=[("ben", "hi")], request="which hotel?", **base))
    two = "\n".join(prompt(requester="ben", chat=[("ana", "yo")], request="what time?", **base))
    shared = next(i for i, (a, b) in enumerate(zip(one, two, strict=False)) if a != b)
    assert one[:shared].endswith("# Plan\n- Day 1\n>>>\n\nChat:\n- ")  # all up to the chat


def test_the_embedded_envelope_gives_the_vetted_decision() -> None:
    profile = llm.embedded_profile()
    envelope = json.dumps(
        {"text": "Ben, raw preview", "final": {"kind": "reply", "text": "ana, stay in Alfama."}}
    )
    decision = llm.parse_decision(profile, envelope)
    assert [(a.kind, a.text) for a in decision.actions] == [("reply", "ana, stay in Alfama.")]


def test_the_signal_grammar_keeps_control_characters_out_of_strings() -> None:
    pytest.importorskip("llama_cpp")
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    schema = {"type": "object", "properties": {"text": {"type": "string", "maxLength": 20}}}
    loose = json_schema_to_gbnf(json.dumps(schema))
    assert embedded._LOOSE_CHAR in loose  # what llama-cpp-python's converter writes
    strict = loose.replace(embedded._LOOSE_CHAR, embedded._STRICT_CHAR)
    assert '[^"\\\\\\x7F\\x00-\\x1F]' in strict
    assert embedded.EMBEDDED_TEXT_GRAMMAR.count("\\x00-\\x1F") == 2


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("Stay in Alfama", "Stay in"),  # whole words only
        ("Stay in Alfama ", "Stay in Alfama"),  # a space may start " - " or " ben:"
        ("Stay in Alfama. Reply to", "Stay in Alfama. "),  # may become "Reply to ana"
        ("Stay in Alfama -", "Stay in Alfama"),  # may become " - ben: ..."
        ("Stay in Alfama ben", "Stay in Alfama"),  # may become " ben: ..."
        ("Stay in Alfama bench.", "Stay in Alfama"),
        ("Stay in Alfama, bench it. ", "Stay in Alfama, bench it."),
        ("Stay", ""),
    ],
)
def test_the_card_shows_whole_words_and_never_the_start_of_a_stop_sequence(
    text: str, shown: str
) -> None:
    assert text[: shown_so_far(text, FACTS)] == shown


FIGURES = {
    "kinds": {
        "reply": {"usable": 18, "of": 20, "reliable": True},
        "ask": {"usable": 9, "of": 20, "reliable": False},
        "suggest": {"usable": 2, "of": 20, "reliable": False},
        "edit": {"usable": 0, "of": 20, "reliable": False},
    }
}


def test_the_panel_says_what_the_model_did_reliably_from_the_measured_figures() -> None:
    text = describe_capabilities(FIGURES)
    assert text.startswith("Measured on varied requests, it manages short replies in the chat (18")
    assert "unreliable at questions (9 of 20 usable), document suggestions" in text
    assert "direct document edits (0 of 20 usable)" in text


def test_other_figures_say_other_things() -> None:
    both = {**FIGURES["kinds"], "ask": {"usable": 17, "of": 20, "reliable": True}}
    text = describe_capabilities({"kinds": both})
    assert text.startswith(
        "Measured on varied requests, it manages short replies in the chat (18 of 20 usable) and "
    )
    assert "questions (17 of 20" in text.split(";")[0]
    assert describe_capabilities(None) == CAPABILITIES  # never measured: the plain words
    nothing = {k: {**v, "reliable": False} for k, v in FIGURES["kinds"].items()}
    text = describe_capabilities({"kinds": nothing})
    assert text.startswith("Measured on varied requests, it manages no kind of work reliably: ")
    assert text.endswith("read what the task says.")  # whole sentences, for the panel


def test_the_shipped_figures_are_the_benchs_and_are_what_the_panel_says() -> None:
    figures = json.loads(embedded.CAPABILITIES_FILE.read_text())
    assert figures["by"] == "bench/embedded_kinds.py"
    assert set(figures["kinds"]) == {"reply", "ask", "suggest", "edit"}
    for row in figures["kinds"].values():
        assert 0 <= row["usable"] <= row["of"]
        assert row["reliable"] == (row["usable"] >= figures["reliable_at"] * row["of"])
    assert embedded.capabilities() == describe_capabilities(figures)


# --- What the turn knows, said first; greetings and pleasantries dropped ---------------------

KNOWN = TurnFacts(
    requester="ana",
    people=("ana", "ben"),
    document="# Offsite\n\n## Costs\n",
    request="plan the offsite",
    agent="Assistant",
    title="Team offsite",
    goal="Plan the team offsite. Keep it cheap.",
    known=(("dates", "12-13 May"), ("", "8 travelers")),
    still_open=("budget",),
)


def test_the_grounded_sentence_says_what_the_turn_knows_and_what_is_open() -> None:
    assert grounded(KNOWN) == (
        "ana, here is what I have for plan the team offsite: dates 12-13 May, 8 travelers; "
        "still open: budget."
    )
    only_open = TurnFacts(requester="ben", title="Blog post", still_open=("audience", "length"))
    assert (
        grounded(only_open)
        == "ben, here is what I have for blog post: still open: audience and length."
    )
    goal_only = TurnFacts(requester="ana", goal="Two days in Lisbon for 8 people. Then more.")
    assert grounded(goal_only) == (
        "ana, the goal I am working from is: Two days in Lisbon for 8 people."
    )
    assert grounded(TurnFacts(requester="ana", title="Untitled")) == ""


def test_an_unusable_reply_still_says_what_the_turn_knows_never_invented() -> None:
    for raw in ("", "Ben Ben Ben Ben Ben Ben", "Hello ana! I'm glad you're excited."):
        reply = finish(raw, KNOWN)
        assert reply.kind == "reply"
        assert reply.text.startswith(grounded(KNOWN)), raw
        assert reply.text.endswith(".")
        assert "could not do more" in reply.text
        assert "Ben" not in reply.text
        assert "excited" not in reply.text


def test_a_usable_reply_comes_after_the_grounded_sentence_without_its_pleasantries() -> None:
    reply = finish(
        "Ana: Hello ana, I'm glad you're excited about the offsite. Porto is a good choice. "
        "Which budget do you have in mind?",
        KNOWN,
    )
    assert reply.text == (
        f"{grounded(KNOWN)} Porto is a good choice. Which budget do you have in mind?"
    )
    assert reply.kind == "ask"
    assert "greetings or pleasantries removed" in reply.problems


@pytest.mark.parametrize(
    ("raw", "kept"),
    [
        ("Hello alice, Alfama is central.", "ana, Alfama is central."),
        ("Hi there! I am so happy to help. Alfama is central.", "ana, Alfama is central."),
        ("Ben: Thank you for asking. Alfama is central.", "ana, Alfama is central."),
        ("I\u2019m sorry for any confusion. Alfama is central.", "ana, Alfama is central."),
        ("ana, what a wonderful question. Alfama is central.", "ana, Alfama is central."),
        ("A great idea! Alfama is central.", "ana, Alfama is central."),
        # a sentence that only opens with praise keeps what it says
        ("What a great idea: stay in Alfama.", "ana, what a great idea: stay in Alfama."),
    ],
)
def test_greetings_and_pleasantries_are_dropped(raw: str, kept: str) -> None:
    facts = TurnFacts(requester="ana", people=("ana", "ben", "alice"), agent="Assistant")
    assert finish(raw, facts).text == kept


def test_the_grounded_reply_keeps_to_the_length_and_whole_sentences() -> None:
    many = TurnFacts(
        requester="ana",
        goal="Plan it.",
        known=tuple((f"item {n}", "x" * 30) for n in range(9)),
        still_open=("a", "b", "c", "d"),
    )
    reply = finish("Alfama is central. " * 1 + "Porto is a long way north of Lisbon. " * 8, many)
    assert len(reply.text) <= MAX_CHARS
    assert reply.text.endswith(".")
    assert reply.text.count("item ") == 5  # at most five known values, never all of them


TRAINING = TurnFacts(
    requester="ana",
    people=("ana", "ben"),
    request="plan it",
    agent="Assistant",
    title="Team training",
    goal="Plan a two-day team training for 8 people in Porto, budget 6,000 EUR.",
)


@pytest.mark.parametrize(
    "invented",
    [
        "It is a 3-day training session with 20 people.",  # two-day, 8 people
        "You have a budget of 600 euros for it.",  # 6,000
        "Twelve people can join the training.",  # a number in words
    ],
)
def test_a_sentence_stating_a_number_the_task_never_gave_is_dropped(invented: str) -> None:
    reply = finish(f"Porto is a good place for it. {invented}", TRAINING)
    assert "Porto is a good place for it." in reply.text
    assert invented not in reply.text
    assert "sentences with numbers the task never gave removed" in reply.problems


@pytest.mark.parametrize(
    "supported",
    [
        "Two days are enough for 8 people.",  # words and digits of the goal
        "A budget of 6000 EUR covers the venue.",  # without the thousands separator
        "Ben said 14 of them come by train.",  # from the chat
    ],
)
def test_a_sentence_whose_numbers_come_from_the_task_or_the_chat_is_kept(supported: str) -> None:
    facts = TurnFacts(**{**TRAINING.__dict__, "heard": ("14 of us come by train",)})
    reply = finish(supported, facts)
    assert supported in reply.text
    assert "sentences with numbers the task never gave removed" not in reply.problems


def test_a_reply_whose_only_sentence_invents_a_number_falls_back_to_what_the_turn_knows() -> None:
    reply = finish("The training lasts 5 days.", TRAINING)
    assert "5 days" not in reply.text
    assert "two-day team training for 8 people" in reply.text  # the grounded goal sentence


def test_a_reply_opening_with_it_s_is_addressed_with_a_lower_case_opener() -> None:
    reply = finish("It's worth booking the venue first.", FACTS)
    assert reply.text.endswith("it's worth booking the venue first.")
    assert "It's" not in reply.text


def test_a_decimal_in_a_reply_stays_whole() -> None:
    facts = TurnFacts(**{**TRAINING.__dict__, "heard": ("the room costs 1.5 times more",)})
    reply = finish("The bigger room costs 1.5 times more. We meet at 8 people.", facts)
    assert "1.5 times more." in reply.text
    assert "1. 5" not in reply.text
