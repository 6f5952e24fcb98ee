"""A rate times a quantity, worked out from the task's own lines and said as such; no figure
when the task lacks either."""

from __future__ import annotations

import pytest

from agents import skills
from agents.skills.grounding import unknown_values
from tests.agents.skills.tasks import context

SHIFT = "Role: kitchen porter, 16 hours a week\nPay: €14.50 per hour\nBudget: €4,000 for the year\n"
STAY = "Cabin: Pine Lodge, £80/night\nDates: 2-5 Aug\n"


def _answer(request: str, document: str, figure: str = "") -> tuple[str, str]:
    routed, answer, facts = skills.respond(
        context("Hiring", "Fill the kitchen porter job.", request, document=document)
    )
    # the only number the task did not state is the product itself
    assert set(unknown_values(answer.text, facts)) <= {figure}
    return routed.skill, answer.text


@pytest.mark.parametrize(
    ("request_text", "document", "figure", "quoted"),
    [
        ("@Assistant what's the weekly pay?", SHIFT, "232", "16 hours a week"),
        ("@Assistant 3 nights cost in total?", STAY, "240", "3 nights"),
    ],
)
def test_the_product_is_worked_out_and_both_sources_quoted(request_text, document, figure, quoted):
    skill, text = _answer(request_text, document, figure)
    assert skill == "rate"
    assert figure in text
    assert quoted in text
    assert "worked out from the task" in text


@pytest.mark.parametrize(
    "request_text",
    ["@Assistant what's the budget in total?", "@Assistant monthly pay?"],
)
def test_without_a_period_quantity_no_product_is_made_up(request_text):
    _, text = _answer(request_text, SHIFT)
    assert "worked out" not in text
