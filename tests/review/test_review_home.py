"""The staff review home starts somewhere (#19.15): the workspaces and the newest turns, not only
an export form; a usage page whose costs are all 0 shows tokens and says why."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User

from agents.models import Agent
from collab.tasks.models import Task
from tests.review.conftest import make_call, make_turn

pytestmark = pytest.mark.django_db


def test_the_staff_review_home_lists_workspaces_and_recent_turns(
    as_user: Any, staff: User, agent: Agent, task: Task, django_assert_max_num_queries: Any
) -> None:
    turn = make_turn(agent, task)
    client = as_user(staff)

    # session, user, the workspaces, the turns
    with django_assert_max_num_queries(4):
        page = client.get("/review/").content.decode()

    assert 'id="review-workspaces"' in page
    assert "<td>Acme</td><td>1</td><td>3</td>" in page  # one task, three members
    assert f'href="/review/turns/{turn.pk}/"' in page
    assert f'href="/review/tasks/{task.pk}/"' in page


def test_usage_with_every_cost_zero_charts_tokens_and_says_why(
    as_user: Any, staff: User, agent: Agent, task: Task
) -> None:
    make_call(make_turn(agent, task), cost="0", tokens_in=700, tokens_out=40)

    response = as_user(staff).get("/review/usage/")

    assert response.context["chart"].metric == "tokens"
    assert 'data-testid="all-free"' in response.content.decode()


def test_usage_with_a_real_cost_charts_cost(
    as_user: Any, staff: User, agent: Agent, task: Task
) -> None:
    make_call(make_turn(agent, task), cost="0.020000")

    response = as_user(staff).get("/review/usage/")

    assert response.context["chart"].metric == "cost"
    assert 'data-testid="all-free"' not in response.content.decode()


def test_the_all_free_notice_points_to_the_models_page_where_prices_are_set(
    as_user: Any, staff: User, agent: Agent, task: Task
) -> None:
    """#32.8: it said prices are set in the admin; they are on the Models page."""
    make_call(make_turn(agent, task), cost="0", tokens_in=700, tokens_out=40)

    page = as_user(staff).get("/review/usage/").content.decode()

    notice = page[page.index('data-testid="all-free"') :].split("</p>", 1)[0]
    assert "admin" not in notice
    assert '<a href="/models/">Models page</a>' in notice
