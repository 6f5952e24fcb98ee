"""The usefulness rules (agents/evaluation/usefulness.py): each can fail, the trivial answers do
not meet them, and the benchmark reads only the frozen corpus. Tasks here are made up for the
tests (not from the corpus)."""

from __future__ import annotations

from typing import Any

import pytest

from agents.evaluation import usefulness as u

TASK: dict[str, Any] = {
    "task_id": "T-1",
    "title": "Quarterly review with Harbour Foods",
    "goal": "Agree the 2027 prices with Harbour Foods",
    "created": "2027-01-11",
    "document": "Attendees: Lena, Omar\nWhen: Tuesday 19 January, 14:00\nBudget: 18,000 EUR\n",
    "chat": [{"author": "Lena", "text": "we're 8 people now, not 6"}],
}


def _request(shape: str, *, count: int | None = None, must=(), must_not=()) -> dict[str, Any]:
    return {
        "id": "T-1-1",
        "author": "Lena",
        "text": "@Assistant ...",
        "expect": {
            "shape": shape,
            "count": count,
            "must_mention": [list(group) for group in must],
            "must_not_mention": list(must_not),
        },
    }


def test_an_answer_of_the_right_shape_with_the_tasks_values_is_useful() -> None:
    verdict = u.judge(
        TASK,
        _request("answer", must=[["Lena"], ["Omar"]]),
        u.Answer(reply="Lena and Omar are in the meeting."),
    )
    assert verdict.useful, verdict.reasons


@pytest.mark.parametrize(
    ("request_", "answer", "reason"),
    [
        (_request("answer", must=[["Omar"]]), u.Answer(reply="Lena is coming."), "missing 'Omar'"),
        (
            _request("answer", must=[["8"]]),
            u.Answer(reply="The review is on the 18th."),  # "8" is not a word of "18th"
            "missing '8'",
        ),
        (
            _request("answer", must=[["8"]], must_not=["6 people"]),
            u.Answer(reply="8 people, or maybe 6 people."),
            "said '6 people'",
        ),
        (_request("list", count=3), u.Answer(reply="- one\n- two"), "2 items, 3 asked"),
        (_request("list"), u.Answer(reply="Price, timing and volume."), "no list"),
        (
            _request("sentence"),
            u.Answer(reply="One. Two. Three. Four sentences here."),
            "more than a sentence or two",
        ),
        (_request("draft"), u.Answer(reply="Here is a draft: Agenda, prices."), "no document"),
        (_request("estimate"), u.Answer(reply="It will take a while."), "no figure"),
        (_request("title"), u.Answer(reply=" ".join(["word"] * 50)), "no short title"),
        (
            _request("checklist"),
            u.Answer(reply="- a\n- b", asked=True),
            "asked a question instead",
        ),
        (
            _request("answer", must=[["Omar"]]),
            u.Answer(reply="Sorry, I can't answer that."),
            "a disclaimer alone",
        ),
        (
            _request("sentence"),
            u.Answer(reply="Great question! The review is on Tuesday."),
            "filler 'great question'",
        ),
        (
            _request("answer", must=[["Omar"]]),
            u.Answer(reply="Is Omar coming, or Lena?", asked=True),
            "asked a question instead",
        ),
        (
            _request("answer", must=[["8"]]),
            u.Answer(reply="There were 8 of you: can you tell us what day it is?"),
            "ends in a question",
        ),
        (
            _request("answer", must=[["Omar"]]),
            u.Answer(reply="- Attendees: Lena, Omar\n- When: Tuesday 19 January, 14:00"),
            "copies the task back",
        ),
    ],
)
def test_each_rule_can_fail(request_: dict[str, Any], answer: u.Answer, reason: str) -> None:
    verdict = u.judge(TASK, request_, answer)
    assert not verdict.useful
    assert any(r.startswith(reason) for r in verdict.reasons), verdict.reasons


def test_a_draft_may_state_only_what_the_task_gave_or_say_it_is_assumed() -> None:
    request = _request("draft", must=[["Harbour"]])
    given = "# Review with Harbour Foods\n- Tuesday 19 January, 14:00\n- Budget 18,000 EUR\n"
    assert u.judge(TASK, request, u.Answer(change=given)).useful
    # A weekday worked out from a date the line states is not invented; one on its own is.
    assert u.judge(
        TASK, request, u.Answer(change=given + "- Since: Monday 11 January 2027\n")
    ).useful
    alone = u.judge(TASK, request, u.Answer(change=given + "- Follow-up on Thursday\n"))
    assert alone.invented == ("thursday",)
    made_up = given + "- Venue: the Grand Hotel, 21 March\n"
    verdict = u.judge(TASK, request, u.Answer(change=made_up))
    assert not verdict.useful
    assert verdict.invented == ("21", "march")
    assumed = given + "- Follow-up: 21 March (assumed, to confirm)\n1. Open\n2. Close\n"
    assert u.judge(TASK, request, u.Answer(change=assumed)).useful


def test_no_trivial_answer_is_useful_on_a_varied_set() -> None:
    requests = [
        _request("answer", must=[["Omar"]]),
        _request("list", count=3, must=[["Harbour"]]),
        _request("sentence", must=[["Harbour"]]),
        _request("title", must=[["review"]]),
        _request("estimate"),
        _request("draft", must=[["18,000", "18000"]]),
        _request("checklist", must=[["Lena"]]),
    ]
    for name, answer_for in u.TRIVIAL.items():
        tally = u.tally([(TASK, r, answer_for(TASK, r)) for r in requests])
        assert tally.useful() <= 2 / 7, name  # pasting the task back carries values, not shapes


def test_the_benchmark_reads_only_the_frozen_corpus(tmp_path: Any, monkeypatch: Any) -> None:
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "bench" / "usefulness.py"
    spec = importlib.util.spec_from_file_location("bench_usefulness", path)
    assert spec is not None
    assert spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    tasks = bench.load("dev")
    assert len(tasks) == 6
    assert sum(len(t["requests"]) for t in tasks) >= 30
    for name in ("usefulness", "BLIND_SHA256SUMS"):
        src = bench.DATA / name
        dst = tmp_path / name
        if src.is_dir():
            dst.mkdir()
            (dst / "dev.jsonl").write_bytes((src / "dev.jsonl").read_bytes() + b"\n{}")
        else:
            dst.write_bytes(src.read_bytes())
    monkeypatch.setattr(bench, "DATA", tmp_path)
    with pytest.raises(SystemExit, match="not the frozen corpus"):
        bench.load("dev")
