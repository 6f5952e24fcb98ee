"""Each metric of docs/evaluation.md on a hand-computed case, and a counter-example that makes it
fail (a figure that cannot fail proves nothing)."""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any

import pytest

from agents.evaluation.checks import adheres, passes, written_lines
from agents.evaluation.metrics import (
    adherence_from_second_session,
    ask_scores,
    asking_budget_adherence,
    blocker_recall,
    by_category,
    contradictions_noticed,
    document_preservation,
    final_adherence,
    interval,
    leakage,
    over_asking,
    per_seed,
    question_grounding,
    redundant_questions,
    silent_wrong_episodes,
    summarise,
    task_success,
)
from agents.evaluation.offline import MemoryStore, OfflineAgent
from agents.evaluation.results import EpisodeResult
from agents.evaluation.runner import grounded, leaked_content, play_episode, preserved
from agents.evaluation.scenario import Preference, parse_scenarios
from agents.evaluation.users import ScriptedUser, asking_limit
from agents.evaluation.writer import Known, SlotLine, write_document
from agents.policies import Assumption, Decision, Question, Situation
from agents.policies.style import enforce
from agents.policies.templates import get_template
from tests.evaluation.results import ep
from tests.evaluation.v2data import tiny


def test_per_category_ask_rate_and_f1_on_a_hand_computed_case() -> None:
    results = [
        ep("c1", category="clear", asked=True),  # FP
        ep("c2", category="clear"),  # TN
        ep("m1", category="missing", needs_clarification=True, blockers=["b"], asked=True),  # TP
        ep("m2", category="missing", needs_clarification=True, blockers=["b"]),  # FN
        ep("a1", category="ambiguous", needs_clarification=True, blockers=["b"]),  # FN
    ]
    table = by_category(results)
    assert table["clear"]["ask_rate"] == 0.5
    assert table["clear"]["ask_f1"] == 0.0  # asking on a clear request is only ever wrong
    assert table["missing"]["ask_rate"] == 0.5
    assert table["missing"]["ask_f1"] == pytest.approx(2 / 3)  # 2*1 / (2*1 + 0 + 1)
    assert table["ambiguous"]["ask_f1"] == 0.0
    assert "contradictory" not in table


def test_a_policy_that_always_asks_gets_no_mcc_and_full_over_asking() -> None:
    results = [
        ep("a", needs_clarification=True, blockers=["x"], asked=True),
        ep("b", asked=True),
        ep("c", asked=True),
    ]
    assert ask_scores(results)["ask_mcc"] is None  # no negative prediction: undefined, not 1
    assert ask_scores(results)["ask_f1"] == pytest.approx(2 / 4)
    assert over_asking(results) == 1.0


def test_blocker_recall_counts_only_blockers_asked_before_the_first_document() -> None:
    results = [
        ep("a", blockers=["budget", "start_date"], asked_before_first=["budget"]),
        ep("b", blockers=["budget"], asked_slots=["budget"], asked_before_first=[]),
    ]
    assert blocker_recall(results) == pytest.approx(1 / 3)


def test_redundant_questions_are_the_share_of_targets_the_agent_could_know() -> None:
    results = [ep("a", asked_slots=["budget", "destination"], redundant=1), ep("b")]
    assert redundant_questions(results) == 0.5
    assert redundant_questions([ep("c")]) is None  # no question: not measurable, not 0


def test_the_person_calls_a_question_about_a_value_in_the_document_redundant() -> None:
    # given a value the agent can read in the document (format 2 "in": "document")
    scenarios = parse_scenarios(tiny())
    episode = scenarios.episodes[0]
    person = ScriptedUser(
        user=scenarios.users["zoe"],
        episode=episode,
        preferences=[],
        today=scenarios.day(episode),
        knowable=["destination", "travelers", "start_date", "budget"],
    )
    from agents.evaluation.users import AgentOutput, AskedQuestion

    reply = person.respond(
        AgentOutput(action="ask", questions=(AskedQuestion("What budget?", ("budget",)),))
    )
    assert reply.redundant == 1
    # but an ambiguous statement is not redundant to ask about
    blog = scenarios.episodes[3]
    person = ScriptedUser(
        user=scenarios.users["soren"], episode=blog, preferences=[], today=scenarios.day(blog)
    )
    reply = person.respond(
        AgentOutput(action="ask", questions=(AskedQuestion("Who for?", ("audience",)),))
    )
    assert reply.redundant == 0
    assert reply.answers == {"audience": "practitioners"}


def test_question_grounding_fails_on_an_invented_choice() -> None:
    template = get_template("travel_plan")
    sources = ["Plan a trip to Porto or Braga in June."]
    assert grounded("Braga", sources, template, ("destination",))
    assert grounded("packed", sources, template, ("pace",))  # a template choice
    assert not grounded("Madrid", sources, template, ("destination",))  # invented
    results = [ep("a", choices_offered=4, choices_grounded=3)]
    assert question_grounding(results) == 0.75


def test_contradictions_noticed_is_the_share_of_conflicts_asked_about_or_assumed() -> None:
    results = [ep("a", conflicts=1, conflicts_noticed=1), ep("b", conflicts=2)]
    assert contradictions_noticed(results) == pytest.approx(1 / 3)
    assert contradictions_noticed([ep("c")]) is None


def test_adherence_from_the_second_session_counts_first_documents_after_session_one() -> None:
    results = [
        ep("a", session=1, first_attempt={"p": False, "q": False}),  # not counted
        ep("b", session=2, first_attempt={"p": True, "q": False}, final={"p": True, "q": True}),
        ep("c", session=3, first_attempt={"p": True}),
    ]
    # 2 of the 3 checks of sessions 2 and 3 pass at the first attempt (a fix after a
    # restatement does not count)
    assert adherence_from_second_session(results) == pytest.approx(2 / 3)
    assert adherence_from_second_session(results[:1]) is None
    assert adherence_from_second_session([replace(results[1], first_attempt={"p": False})]) == 0


NOTES = "# Trip\n\nNotes from Monday (keep these):\n- Check with legal.\n- Ping the channel.\n"
NUMBERED = {"type": "list_style", "style": "numbered"}
NO_LISTS = {"type": "list_style", "style": "none"}


def test_a_style_check_judges_the_agents_lines_not_the_persons_notes_it_kept() -> None:
    # given the person's own bulleted notes, kept as asked, and the agent's numbered plan
    document = NOTES + "\n## Plan\n\n1. Book the train.\n2. Book the hotel.\n"
    # then the old definition (the whole document) fails the numbered-lists person
    assert not passes(NUMBERED, document)
    # and the new one judges the lines the agent wrote: its numbered list
    assert written_lines(NOTES, document) == "## Plan\n1. Book the train.\n2. Book the hotel.\n"
    assert adheres(NUMBERED, document, before=NOTES)
    # a "no lists" person's notes kept, with the agent writing prose, passes too
    assert adheres(NO_LISTS, NOTES + "\nWe take the train, then the hotel.\n", before=NOTES)


def test_a_style_check_still_fails_on_a_list_the_agent_wrote_itself() -> None:
    # the agent writes bullets for a numbered-lists person
    bullets = NOTES + "\n- Book the train.\n- Book the hotel.\n"
    assert not adheres(NUMBERED, bullets, before=NOTES)
    # or a list of any kind for a "no lists" person
    numbered = NOTES + "\n1. Book the train.\n2. Book the hotel.\n"
    assert not adheres(NO_LISTS, numbered, before=NOTES)
    # or it rewrites the person's bullet as its own line: that line is the agent's now
    edited = NOTES.replace("Ping the channel.", "Ping the channel on Friday.")
    assert not adheres(NUMBERED, edited + "\n1. Book the train.\n", before=NOTES)
    # one kept copy of a line accounts for one line only: the agent repeating it is writing
    assert not adheres(NO_LISTS, NOTES + "- Check with legal.\n", before=NOTES)


def test_a_content_check_still_judges_the_whole_document() -> None:
    # a value, a phrase or a line the person's notes hold counts wherever it is
    document = NOTES + "\nWe take the train.\n"
    assert adheres({"type": "contains", "text": "legal"}, document, before=NOTES)
    assert not adheres({"type": "contains", "text": "legal"}, "# Trip\n", before=NOTES)
    # and a date the person wrote in ISO fails a "never ISO dates" regex: only the list style
    # and spelling types are style checks (a regex cannot tell content from form)
    iso_free = {"type": "regex", "pattern": r"\A(?![\s\S]*\b\d{4}-\d{2}-\d{2}\b)"}
    dated = "# Trip\n\nBooked on 2027-03-01.\n"
    assert not adheres(iso_free, dated + "We leave on 4 March 2027.\n", before=dated)


def test_a_spelling_check_judges_the_agents_words_not_the_persons() -> None:
    british = {"type": "spelling_variant", "variant": "british"}
    notes = "# Plan\n\nPick a color for the slides.\n"
    assert not passes(british, notes + "Organise the team.\n")
    assert adheres(british, notes + "Organise the team.\n", before=notes)
    assert not adheres(british, notes + "Organize the team.\n", before=notes)


def test_the_first_attempt_of_an_episode_is_judged_against_the_starting_document() -> None:
    # given a person who wants numbered lists and whose document holds their own bullets
    data = tiny()
    data["users"][0]["preferences"].append(
        {
            "id": "zoe-numbered",
            "key": "list_style",
            "value": "numbered",
            "text": "Numbered lists, please.",
            "check": NUMBERED,
            "remembered": True,
        }
    )
    data["episodes"][0]["task"]["document"] = NOTES
    data["episodes"][0]["request"] = "Plan a trip to Porto for 2 people from 12 June 2027, €1,500."
    data["episodes"][0]["slots"]["budget"] = {
        "value": "€1,500",
        "in": "request",
        "evidence": "€1,500",
    }
    data["episodes"][0]["category"] = "clear"
    data["episodes"][0]["blockers"] = []
    scenarios = parse_scenarios(data)
    episode = scenarios.episodes[0]
    memory = MemoryStore()
    memory.remember(scenarios.users["zoe"], scenarios.users["zoe"].preferences[-1])
    agent = OfflineAgent(
        policy="ask_when_blocked", today=scenarios.today, memory=memory, users=scenarios.users
    )
    result = ep(episode.id)
    documents: list[str] = []

    def log(*args: object, document: str = "", **kwargs: object) -> None:
        documents.extend([document] if document else [])

    play_episode(agent=agent, episode=episode, scenarios=scenarios, result=result, log=log)
    # then the agent's numbered details pass though the person's bullets are still there
    assert "- Check with legal." in documents[0]
    assert "\n1. " in documents[0]
    assert not passes(NUMBERED, documents[0])
    assert result.first_attempt["zoe-numbered"] is True
    assert result.kept_lines == result.original_lines == 3


def test_asking_budget_adherence_counts_question_messages_against_the_preference() -> None:
    at_most = Preference(id="p", key="asking", text="At most one.", value="at_most:1")
    never = Preference(id="q", key="asking", text="Just go ahead.", value="never")
    assert asking_limit([at_most]) == 1
    assert asking_limit([never]) == 0
    assert asking_limit([]) is None
    results = [
        ep("a", asking_limit=1, asking_respected=True),
        ep("b", asking_limit=0, asking_respected=False),
        ep("c"),  # no asking preference: not counted
    ]
    assert asking_budget_adherence(results) == 0.5


def test_silent_wrong_values_count_wrong_values_used_without_an_assumption() -> None:
    # given a policy that acts at once, once stating its guess and once silently
    scenarios = parse_scenarios(tiny())
    episode = scenarios.episodes[0]  # the budget is hidden

    class Silent:
        name = "silent"

        def decide(self, situation: Situation) -> Decision:
            return Decision(action="act", policy=self.name)

    class Stated(Silent):
        name = "stated"

        def decide(self, situation: Situation) -> Decision:
            return Decision(
                action="act",
                policy=self.name,
                assumptions=(Assumption(slot="budget", value="EUR 900"),),
                assumption_text="I assumed the budget is EUR 900.",
            )

    counts = {}
    for policy in (Silent(), Stated()):
        agent = OfflineAgent(policy=policy, today=scenarios.today, users=scenarios.users)
        result = ep(episode.id)
        play_episode(
            agent=agent,
            episode=episode,
            scenarios=scenarios,
            result=result,
            log=lambda *a, **k: None,
        )
        counts[policy.name] = (result.wrong_first, result.silent_wrong)
    assert counts["silent"][0] >= 1
    assert counts["silent"][1] >= 1
    assert counts["stated"][0] >= 1
    assert counts["stated"][1] == counts["stated"][0] - 1
    assert silent_wrong_episodes([ep("a", silent_wrong=2), ep("b")]) == 0.5


def test_the_writer_never_sees_a_check_so_a_wish_it_cannot_read_fails() -> None:
    # given a wish neither the writer nor the product's output pass reads
    emoji = {"type": "regex", "pattern": r"(?m)^## [^\w\s]"}
    lines = [SlotLine("Budget", "EUR 1500")]
    known = [Known(key="decoration", value="emoji", text="Put an emoji before each section.")]
    document = write_document(title="Trip", template="travel_plan", lines=lines, known=known)
    # then the writer, which only reads the words, writes what it writes without it, and the
    # check it never saw fails on it
    assert document == write_document(title="Trip", template="travel_plan", lines=lines)
    assert not passes(emoji, document)
    assert final_adherence([ep("a", final={"emoji": False, "tldr": True})]) == 0.5


def test_the_writer_bolds_numbers_only_through_the_products_output_pass() -> None:
    # given a wish for bold numbers kept under a key of its own, in words the extractor reads
    lines = [SlotLine("Budget", "EUR 1500"), SlotLine("Travelers", "2")]
    known = [Known(key="emphasis", value="yes", text="Make the amounts bold, merci!")]
    plain = write_document(title="Trip", template="travel_plan", lines=lines)
    bold = write_document(title="Trip", template="travel_plan", lines=lines, known=known)
    # then the fresh draft is the plain one with the product's pass run over it
    assert bold == enforce(plain, {"bold_numbers": "yes"})
    assert "- Budget: **EUR 1500**" in bold
    assert "- Day 1: organize" in bold  # a name, not a key number
    # and in a kept document only what the writer writes is bolded: the value it updates and
    # the lines it adds, never the person's own lines
    notes = "# Trip\n\nBudget: EUR 900\nWe were 3 last year.\n"
    edited = write_document(
        title="Trip", template="travel_plan", lines=lines, known=known, document=notes
    )
    assert "Budget: **EUR 1500**" in edited
    assert "We were 3 last year." in edited
    assert "- Travelers: **2**" in edited


def test_task_success_comes_from_the_final_document_and_fails_on_a_wrong_value() -> None:
    scenarios = parse_scenarios(tiny())
    episode = scenarios.episodes[0]
    right = "# Trip\n\nKeep the hotel list.\n\n- Destination: Porto\n- Budget: EUR 1500\n"
    wrong = right.replace("1500", "900")
    assert all(passes(c, right) for c in episode.success)
    assert not all(passes(c, wrong) for c in episode.success)
    assert task_success([ep("a", success=True), ep("b")]) == 0.5
    # a person who gave up over an unmet preference fails the task even with the values right
    gave_up = ep("c", gave_up=True, values_right=True)
    assert task_success([gave_up]) == 0.0
    assert summarise([gave_up])["values_right"] == 1.0


def test_document_preservation_fails_when_a_line_the_person_kept_is_dropped() -> None:
    original = "# Trip\n\nKeep the hotel list.\nBudget: €2,000\nCall Ana.\n"
    kept, total = preserved(
        original, "# Trip\n\nKeep the hotel list.\nBudget: €1,500\n", ["€2,000"]
    )
    assert (kept, total) == (1, 2)  # "Call Ana." is gone; the conflicting budget line may change
    assert document_preservation([ep("a", kept_lines=kept, original_lines=total)]) == 0.5
    # the writer keeps the person's lines and updates the labelled value in place
    edited = write_document(
        title="Trip",
        template="travel_plan",
        lines=[SlotLine("Budget", "EUR 1500")],
        document=original,
    )
    assert preserved(original, edited, ["€2,000"]) == (2, 2)
    assert "Budget: EUR 1500" in edited


def test_leakage_sees_another_persons_preference_content_not_only_owner_lines() -> None:
    tldr = Preference(
        id="z", key="tldr", text="TL;DR first.", check={"type": "contains", "text": "TL;DR"}
    )
    no_iso = Preference(
        id="d",
        key="date_format",
        text="No ISO dates.",
        check={"type": "regex", "pattern": r"\A(?!.*\d{4}-)"},
    )
    doc = "# Trip\n\nTL;DR: Porto in June.\n"
    assert leaked_content(doc, "soren", [], {"zoe": [tldr]}) == 1
    assert leaked_content(doc, "soren", [tldr], {"zoe": [tldr]}) == 0  # his own wish too
    assert leaked_content(doc, "soren", [], {"zoe": [no_iso]}) == 0  # an absence is no content
    assert leakage([ep("a", leaked_items=1, leaked_content=2)]) == 3


def test_memory_items_of_someone_else_are_not_followed_for_the_requester() -> None:
    # given Zoë's TL;DR preference in memory and Søren's request with Zoë in the chat
    scenarios = parse_scenarios(tiny())
    memory = MemoryStore()
    memory.remember(scenarios.users["zoe"], scenarios.users["zoe"].preferences[0])
    agent = OfflineAgent(
        policy="never", today=scenarios.today, memory=memory, users=scenarios.users
    )
    episode = scenarios.episodes[2]
    agent.start(episode)
    record = agent.turn()
    # then the turn was handed Zoë's item (she is in the conversation) but did not use it
    assert "zoe" in record.handed_owners
    assert "zoe" not in record.memory_owners
    assert "TL;DR" not in record.output.document


def test_intervals_are_deterministic_contain_the_estimate_and_widen_with_fewer_episodes() -> None:
    many = [ep(f"e{i}", success=i % 2 == 0) for i in range(40)]
    few = many[:6]
    band = interval(many, task_success)
    assert band == interval(many, task_success)
    assert band is not None
    assert band[0] <= 0.5 <= band[1]
    small = interval(few, task_success)
    assert small is not None
    assert (small[1] - small[0]) > (band[1] - band[0])
    assert interval([ep("a")], redundant_questions) is None
    two_seeds = [replace(r, seed=1, success=True) for r in many] + many
    assert per_seed(two_seeds, task_success) == [0.5, 1.0]


def test_under_just_go_ahead_a_blocker_is_assumed_not_asked() -> None:
    """A person who said "just go ahead" (asking limit 0) is not to be asked: acting there is a
    true negative, asking a false positive, and the blocker leaves recall's denominator. The
    counter-examples: an agent that asks them anyway loses precision; one that never asks
    anybody still misses the blockers of people who allow questions."""
    go_ahead = {"needs_clarification": True, "blockers": ["b"], "asking_limit": 0}
    allows = {"needs_clarification": True, "blockers": ["b"], "asking_limit": 1}
    respectful = [
        ep("g1", **go_ahead),  # TN: acted, as asked to
        ep("a1", **allows, asked=True, asked_before_first=["b"]),  # TP
        ep("c1"),  # TN
    ]
    assert ask_scores(respectful)["ask_f1"] == 1.0
    assert blocker_recall(respectful) == 1.0
    pushy = [ep("g1", **go_ahead, asked=True, asked_before_first=["b"]), *respectful[1:]]
    assert ask_scores(pushy)["ask_precision"] == 0.5  # the go-ahead question is a false positive
    assert ask_scores(pushy)["ask_f1"] < 1.0
    silent = [ep("g1", **go_ahead), ep("a1", **allows), ep("c1")]
    assert ask_scores(silent)["ask_recall"] == 0.0
    assert blocker_recall(silent) == 0.0
    # no preference at all (None) still counts as allowing questions
    assert ep("n", needs_clarification=True, blockers=["b"]).should_ask


# --- Issue 25: six figures that could be met without doing the work --------------------------
# Each test below fails on the code before it (new names are imported inside the tests, so that
# each fails on its own there).


def _play(policy: object, data: dict[str, object], episode_id: str) -> EpisodeResult:
    scenarios = parse_scenarios(data)
    episode = next(e for e in scenarios.episodes if e.id == episode_id)
    memory = MemoryStore()
    for user in scenarios.users.values():
        for pref in user.preferences:
            if pref.remembered:
                memory.remember(user, pref)
    agent = OfflineAgent(
        policy=policy,  # type: ignore[arg-type]
        today=scenarios.today,
        memory=memory,
        users=scenarios.users,
    )
    result = ep(episode.id)
    play_episode(
        agent=agent, episode=episode, scenarios=scenarios, result=result, log=lambda *a, **k: None
    )
    return result


def test_task_success_is_met_through_corrections_and_the_first_document_is_not() -> None:
    # given Zoë's trip (the budget is hidden) and her TL;DR wish in memory
    data = tiny()
    data["users"][0]["preferences"][0]["remembered"] = True  # type: ignore[index]
    # when a policy acts at once and one asks about the blocker first
    at_once = _play("never", data, "zoe-trip")
    asks = _play("ask_when_blocked", data, "zoe-trip")
    # then both succeed after the person's corrections: that figure cannot tell them apart
    assert at_once.success
    assert asks.success
    assert at_once.corrections >= 1
    assert asks.corrections == 0
    # and the first document, before any correction, can
    assert asks.first_correct is True
    assert at_once.first_correct is False
    summary = summarise([replace(asks, episode="a"), replace(at_once, episode="b")])
    assert summary["first_document_correctness"] == 0.5
    assert summary["corrections_per_episode"] == at_once.corrections / 2
    assert summary["task_success"] == 1.0  # the secondary figure, after corrections
    assert summary["intervals"]["first_document_correctness"]["ci95"] is not None
    # an episode with no document at all has no correct first document
    assert summarise([ep("c", success=False)])["first_document_correctness"] == 0.0


def test_asking_forever_meets_episode_f1_but_not_mcc_or_blocker_targeted_f1() -> None:
    need = {"needs_clarification": True, "blockers": ["budget"]}
    # the default: asks the blocker of e1, misses e2's, asks once on a clear request
    default = [
        ep("e1", **need, asked=True, asked_before_first=["budget"]),
        ep("e2", **need),
        ep("c1", asked=True, asked_before_first=["pace"]),
        ep("c2"),
    ]
    # a policy that asks on every turn: in e2 about something that blocked nothing
    forever = [
        ep("e1", **need, asked=True, asked_before_first=["budget"]),
        ep("e2", **need, asked=True, asked_before_first=["pace"]),
        ep("c1", asked=True, asked_before_first=["pace"]),
        ep("c2", asked=True, asked_before_first=["pace"]),
    ]
    # then episode-level F1 (no true negatives, any question a hit) rewards asking forever
    assert ask_scores(forever)["ask_f1"] >= ask_scores(default)["ask_f1"]
    # and the headline does not: MCC is undefined for a policy that always asks, and a
    # question counts for the blocker-targeted F1 only when it asks about a blocker
    fig_default, fig_forever = summarise(default), summarise(forever)
    assert fig_forever["ask_mcc"] is None
    assert fig_default["blocker_f1"] == pytest.approx(2 / (2 + 1 + 1))
    assert fig_forever["blocker_f1"] == pytest.approx(2 / (2 + 3 + 1))
    assert fig_forever["blocker_f1"] < fig_default["blocker_f1"]
    assert "ci95" in fig_default["intervals"]["blocker_f1"]


def test_naming_every_value_as_an_assumption_handles_no_slot() -> None:
    from agents.policies.asking import assumption_text

    class NamingAll:
        """Acts at once, every slot of the template named as assumed."""

        name = "naming_all"

        def decide(self, situation: Situation) -> Decision:
            assumptions = tuple(
                Assumption(slot=s.name, value=s.value or "EUR 900", label=s.spec.display)
                for s in situation.slots
            )
            return Decision(
                action="act",
                policy=self.name,
                assumptions=assumptions,
                assumption_text=assumption_text(assumptions),
            )

    class Unseen:
        """States its guess in the decision record only: the person never sees it."""

        name = "unseen"

        def decide(self, situation: Situation) -> Decision:
            return Decision(
                action="act",
                policy=self.name,
                assumptions=(Assumption(slot="budget", value="EUR 900"),),
            )

    # given Søren's trip, whose budget the request and the document contradict
    naming = _play(NamingAll(), tiny(), "soren-trip")
    # then a list naming every slot notices no contradiction
    assert naming.conflicts == 1
    assert naming.conflicts_noticed == 0
    # and Zoë's hidden budget, guessed wrong under such a list, is a silent wrong value
    hidden = _play(NamingAll(), tiny(), "zoe-trip")
    assert hidden.wrong_first >= 1
    assert hidden.silent_wrong == hidden.wrong_first
    assert summarise([hidden])["assumption_precision"] == hidden.uncertain / len(
        get_template("travel_plan").slots
    )
    assert hidden.assumptions_visible > hidden.uncertain
    # an assumption the person cannot see handles nothing either
    unseen = _play(Unseen(), tiny(), "zoe-trip")
    assert unseen.silent_wrong == unseen.wrong_first >= 1


def test_a_closing_remark_never_said_and_an_unstated_asking_limit_are_not_scored() -> None:
    from agents.evaluation.runner import RunConfig, run_offline

    class AskForever:
        name = "ask_forever"

        def decide(self, situation: Situation) -> Decision:
            return Decision(
                action="ask",
                policy=self.name,
                questions=(Question(text="Anything else before I start?"),),
            )

    # given Zoë, whose trip ends with "numbered lists from now on" only when she says done,
    # and whose "at most one question" she has never said
    scenarios = parse_scenarios(tiny())
    run = run_offline(scenarios, RunConfig(policies=[AskForever()], memory=(True,)))
    by_id = {r.episode: r for r in run.results}
    # when the agent never writes, she gives up: the remark is never said
    assert by_id["zoe-trip"].gave_up
    # then her next session is not scored on it
    assert "zoe-numbered" not in by_id["zoe-recipe"].first_attempt
    # and the limit she never stated scores no asking budget
    assert by_id["zoe-trip"].asking_limit is None
    # while a remark she did say holds from her next session
    said = run_offline(scenarios, RunConfig(policies=["ask_when_blocked"], memory=(True,)))
    by_id = {r.episode: r for r in said.results}
    assert by_id["zoe-trip"].closing_said
    assert "zoe-numbered" in by_id["zoe-recipe"].first_attempt


def test_leakage_looks_only_at_the_conversation_and_can_fail_on_a_set_without_chat(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from agents.evaluation import offline
    from agents.evaluation.runner import RunConfig, run_offline

    # given Søren's own post starting with a TL;DR line, and Zoë (who wants one) not in it
    data = tiny()
    data["episodes"][3]["task"]["document"] = "# Post\n\nTL;DR: CRDTs merge.\n"  # type: ignore[index]
    blog = _play("ask_when_blocked", data, "soren-blog")
    # then his document leaks nothing of hers: only the conversation's people are "others"
    assert blog.leaked_content == 0
    # given a set without chat, Zoë's TL;DR remembered, and a filter letting everyone through
    data = tiny()
    del data["episodes"][2]["chat"]  # type: ignore[attr-defined]
    data["users"][0]["preferences"][0]["remembered"] = True  # type: ignore[index]
    scenarios = parse_scenarios(data)
    product = run_offline(scenarios, RunConfig(policies=["ask_when_blocked"], memory=(True,)))
    monkeypatch.setattr(
        offline, "facts_for_requester", lambda facts, requester, *, kind=None: list(facts)
    )
    leaky = run_offline(scenarios, RunConfig(policies=["ask_when_blocked"], memory=(True,)))
    # then the leaky filter fails there (shared-task probes put several memories in play)
    # and the product's does not
    assert summarise(leaky.results, probes=leaky.probes)["cross_user_leakage"] > 0
    assert leaky.summaries()[0]["metrics"]["cross_user_leakage"] > 0
    assert product.summaries()[0]["metrics"]["cross_user_leakage"] == 0
    # and the probes change no other figure
    assert len(product.results) == len(scenarios.episodes)


def test_preference_adherence_written_by_the_harness_is_labelled_as_the_writers() -> None:
    from agents.evaluation.report import build_report, headline_table, render_html
    from agents.evaluation.runner import RunConfig, run_offline

    scenarios = parse_scenarios(tiny())
    run = run_offline(scenarios, RunConfig(policies=["ask_when_blocked"], memory=(True,)))
    report = build_report(run, scenarios_name="tiny")
    table = headline_table(report)
    header = table.splitlines()[2]
    # then every adherence column of a detectors run says whose figure it is
    columns = [c.strip() for c in header.split("|") if "adherence" in c]
    assert columns
    assert all("[harness writer]" in c for c in columns)
    assert "[harness writer]" in render_html(report)


def _slice(people: int) -> object:
    """collab-v2's dev split cut down to its first `people` people (all their sessions)."""
    import copy

    from agents.evaluation.scenario import load_scenarios

    raw = copy.deepcopy(dict(load_scenarios("collab-v2").raw))
    dev = list(dict.fromkeys(e["user"] for e in raw["episodes"] if e["split"] == "dev"))
    keep = set(dev[:people])
    raw["episodes"] = [e for e in raw["episodes"] if e["user"] in keep]
    return parse_scenarios(raw)


@pytest.mark.timeout(600)  # seven configurations over 40 episodes on a shared 2-core host
def test_no_counter_example_meets_a_headline_figure() -> None:
    from agents.evaluation.runner import RunConfig, run_offline
    from agents.evaluation.trivial import CATCHES, meets, trivial_policies
    from agents.policies import DEFAULT_POLICY

    scenarios = _slice(2)
    run = run_offline(
        scenarios, RunConfig(policies=[DEFAULT_POLICY, *trivial_policies()], memory=(True,))
    )
    figures = {s["policy"]: s["metrics"] for s in run.summaries()}
    default = figures.pop(DEFAULT_POLICY)
    met = [
        (name, key, figures[name][key], default[key])
        for name, catches in CATCHES.items()
        for key, higher in catches
        if meets(figures[name][key], default[key], higher=higher)
    ]
    assert not met
    assert default["cross_user_leakage"] == 0


@pytest.mark.timeout(600)
def test_the_leaky_filter_fails_leakage_on_the_set_without_chat() -> None:
    import copy

    from agents.evaluation.runner import RunConfig, run_offline
    from agents.evaluation.scenario import load_scenarios
    from agents.evaluation.trivial import LeakyFilter
    from agents.policies import DEFAULT_POLICY

    raw = copy.deepcopy(dict(load_scenarios("default").raw))
    keep = {u["id"] for u in raw["users"][:4]}
    raw["users"] = [u for u in raw["users"] if u["id"] in keep]
    raw["episodes"] = [e for e in raw["episodes"] if e["user"] in keep]
    scenarios = parse_scenarios(raw)
    assert not any(e.chat for e in scenarios.episodes)
    run = run_offline(
        scenarios, RunConfig(policies=[DEFAULT_POLICY, LeakyFilter()], memory=(True,))
    )
    figures = {s["policy"]: s["metrics"] for s in run.summaries()}
    assert figures["trivial:leaky_filter"]["cross_user_leakage"] > 0
    assert figures[DEFAULT_POLICY]["cross_user_leakage"] == 0


# --- Issue 25, second round: the first document of a policy that asks about everything ------


def test_asking_about_everything_first_does_not_buy_a_first_time_right_document() -> None:
    from agents.evaluation.metrics import first_time_right
    from agents.evaluation.trivial import AlwaysAsk

    # given Zoë's trip made clear (the budget in the request) and her TL;DR wish in memory
    data = tiny()
    data["users"][0]["preferences"][0]["remembered"] = True  # type: ignore[index]
    trip = data["episodes"][0]  # type: ignore[index]
    trip.update(category="clear", blockers=[])
    trip["request"] = "Plan a trip to Porto for 2 people from 12 June 2027, budget €1,500."
    trip["slots"]["budget"] = {"value": "€1,500", "in": "request", "evidence": "€1,500"}
    # when the default acts at once and always-ask asks about everything first
    default = _play("ask_when_blocked", data, "zoe-trip")
    always = _play(AlwaysAsk(), data, "zoe-trip")
    # then both first documents need no correction: that figure cannot tell them apart
    assert default.first_correct
    assert always.first_correct
    # and the headline can: always-ask's question before it was needless
    assert always.asked
    assert always.needless_question
    assert not default.needless_question
    assert default.first_time_right
    assert not always.first_time_right
    assert first_time_right([replace(default, episode="a"), replace(always, episode="b")]) == 0.5
    # a question is due only where a blocker is asked about and the person allows questions
    due: dict[str, Any] = {
        "needs_clarification": True,
        "blockers": ["budget"],
        "first_correct": True,
    }
    assert ep(**due, asked=True, asked_before_first=["budget"]).first_time_right
    assert not ep(**due, asked=True, asked_before_first=["pace"]).first_time_right
    assert not ep(**due, asked=True, asked_before_first=["budget"], asking_limit=0).first_time_right
    assert ep(first_correct=True).first_time_right
    summary = summarise([default, replace(always, episode="b")])
    assert summary["first_time_right"] == 0.5
    assert summary["first_document_correctness"] == 1.0  # kept, as a secondary figure
    assert summary["intervals"]["first_time_right"]["ci95"] is not None


def test_a_check_matched_by_another_line_does_not_make_a_wrong_value_right() -> None:
    class Stated:
        name = "stated"

        def decide(self, situation: Situation) -> Decision:
            return Decision(
                action="act",
                policy=self.name,
                assumptions=(Assumption(slot="budget", value="EUR 900"),),
                assumption_text="I assumed the budget is EUR 900.",
            )

    # given Zoë's trip (budget €1,500, hidden) whose notes hold "1,500" for another reason
    data = tiny()
    data["episodes"][0]["task"]["document"] = (  # type: ignore[index]
        "# Trip\n\nKeep the hotel list.\nThe hotel is 1,500 m from the beach.\n"
    )
    # when the agent writes a budget of EUR 900
    result = _play(Stated(), data, "zoe-trip")
    # then the budget's success check passes on the notes' line, by coincidence
    assert result.wrong_first == 1
    # but the first document's values are not right: it uses a wrong budget
    assert result.first_values_right is False
    assert result.first_correct is False


def test_the_app_engine_scores_a_closing_remark_only_after_it_was_said(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import contextlib

    from agents.evaluation import app_engine
    from agents.evaluation.runner import RunConfig

    # given Zoë's trip, ending with "numbered lists from now on" only if she says done, and
    # her trip again in session 2 (shipped templates only, as the app engine plays)
    data = tiny()
    again = copy.deepcopy(data["episodes"][0])  # type: ignore[index]
    again.update(id="zoe-trip-2", session=2, date="2027-03-12", weekday="Friday")
    data["episodes"] = [data["episodes"][0], again]  # type: ignore[index]
    scenarios = parse_scenarios(data)
    held: dict[str, list[str]] = {}

    def fake_play(*, episode, result, **kwargs) -> None:  # type: ignore[no-untyped-def]
        prefs = kwargs.get("held")
        if prefs is None:  # the engine before: the set as written, per episode id
            prefs = (kwargs.get("held_preferences") or {}).get(episode.id, ())
        held[episode.id] = [p.id for p in prefs]
        result.gave_up = not said
        result.closing_said = said and episode.closing is not None

    monkeypatch.setattr(app_engine, "play_app_episode", fake_play)
    monkeypatch.setattr(app_engine, "AppSession", lambda **kwargs: object())
    monkeypatch.setattr(app_engine, "worker", contextlib.nullcontext)
    config = RunConfig(policies=["ask_when_blocked"], mode="real", memory=(True,))
    # when she gives up on the first trip, the remark is never said
    said = False
    app_engine.run_app(scenarios, config)
    # then her next session is not scored on it
    assert "zoe-numbered" not in held["zoe-trip-2"]
    # and when she ends it with "done", it holds from her next session
    said = True
    app_engine.run_app(scenarios, config)
    assert "zoe-numbered" in held["zoe-trip-2"]
    assert "zoe-numbered" not in held["zoe-trip"]
