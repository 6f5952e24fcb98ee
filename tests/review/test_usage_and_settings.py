from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.urls import reverse
from django.utils import timezone

from agents.review.models import ReviewSettings
from agents.review.selectors import ReviewScope
from agents.review.usage import check_budget, usage_by_day, usage_chart
from collab.audit.models import AuditEvent
from tests.review.conftest import make_agent, make_call, make_turn

pytestmark = pytest.mark.django_db


def set_budget(workspace, amount, **kwargs):
    return ReviewSettings.objects.create(
        workspace=workspace, monthly_budget=Decimal(amount), **kwargs
    )


def test_usage_is_summed_per_day_and_model_person_agent_or_workspace(agent, task, alice, bob):
    today = timezone.now()
    yesterday = today - timedelta(days=1)
    make_call(make_turn(agent, task, requested_by=alice), model="small", cost="0.5", at=yesterday)
    make_call(make_turn(agent, task, requested_by=alice), model="small", cost="0.25")
    make_call(
        make_turn(make_agent(task.workspace, "Other"), task, requested_by=bob),
        model="big",
        cost="1",
    )
    scope = ReviewScope(workspace=task.workspace)
    since, until = yesterday.date(), today.date()

    by_model = usage_by_day(scope=scope, since=since, until=until, by="model")
    by_person = usage_by_day(scope=scope, since=since, until=until, by="person")
    by_agent = usage_by_day(scope=scope, since=since, until=until, by="agent")
    by_workspace = usage_by_day(scope=scope, since=since, until=until, by="workspace")

    assert [(r.day, r.label, r.cost, r.calls) for r in by_model] == [
        (since, "small", Decimal("0.5"), 1),
        (until, "big", Decimal("1"), 1),
        (until, "small", Decimal("0.25"), 1),
    ]
    assert {(r.label, r.cost) for r in by_person if r.day == until} == {
        ("alice", Decimal("0.25")),
        ("bob", Decimal("1")),
    }
    assert {r.label for r in by_agent} == {"Scribe", "Other"}
    assert {(r.label, r.tokens_in) for r in by_workspace if r.day == until} == {("Acme", 200)}


def test_the_chart_stacks_one_bar_per_series_and_day(agent, task):
    make_call(make_turn(agent, task), model="small", cost="0.5")
    make_call(make_turn(agent, task), model="big", cost="1.5")
    today = timezone.now().date()
    rows = usage_by_day(scope=ReviewScope(workspace=None), since=today, until=today, by="model")

    chart = usage_chart(rows, since=today, until=today)

    assert [label for _, label in chart.legend] == ["big", "small"]
    heights = sorted(bar.height for bar in chart.bars)
    assert heights[1] == pytest.approx(3 * heights[0], rel=0.01)


def test_usage_page_draws_an_svg_chart(as_user, agent, task, alice):
    make_call(make_turn(agent, task), model="small")

    response = as_user(alice).get(
        reverse("review:workspace_usage", args=[task.workspace_id]),
        {"by": "agent", "metric": "tokens"},
    )

    html = response.content.decode()
    assert '<svg class="chart"' in html
    assert "<rect" in html
    assert "Scribe" in html


def test_usage_page_refuses_a_backwards_range(as_user, workspace, alice):
    response = as_user(alice).get(
        reverse("review:workspace_usage", args=[workspace.pk]),
        {"since": "2026-05-02", "until": "2026-05-01"},
    )

    assert response.status_code == 400


def test_budget_warns_then_blocks_when_spent(agent, task):
    set_budget(task.workspace, "1.00", warn_at_percent=50)
    assert check_budget(task.workspace).state == "ok"

    make_call(make_turn(agent, task), cost="0.60")
    warned = check_budget(task.workspace)
    make_call(make_turn(agent, task), cost="0.40")
    spent = check_budget(task.workspace)

    assert (warned.state, warned.blocked) == ("warning", False)
    assert (spent.state, spent.blocked) == ("exceeded", True)
    assert "spent its monthly model budget" in spent.message


def test_budget_counts_only_this_month_and_this_workspace(agent, task, other_workspace):
    set_budget(task.workspace, "1.00")
    make_call(make_turn(agent, task), cost="5", at=timezone.now() - timedelta(days=40))
    make_call(make_turn(make_agent(other_workspace, "Far"), task), cost="5")

    assert check_budget(task.workspace).spent == Decimal(0)


def test_without_hard_stop_an_exceeded_budget_only_warns(agent, task):
    set_budget(task.workspace, "0.01", hard_stop=False)
    make_call(make_turn(agent, task), cost="1")

    status = check_budget(task.workspace)

    assert (status.state, status.blocked) == ("exceeded", False)


def test_no_budget_never_blocks(agent, task):
    make_call(make_turn(agent, task), cost="100")

    assert check_budget(task.workspace).blocked is False


def test_owners_change_settings_and_the_change_is_audited(as_user, workspace, alice):
    url = reverse("review:workspace_settings", args=[workspace.pk])

    response = as_user(alice).post(
        url,
        {
            "monthly_budget": "25.00",
            "warn_at_percent": "75",
            "hard_stop": "on",
            "export_personal_memory": "",
        },
    )

    assert response.status_code == 302
    saved = ReviewSettings.objects.get(workspace=workspace)
    assert saved.monthly_budget == Decimal("25.00")
    assert saved.warn_at_percent == 75
    event = AuditEvent.objects.get(action=AuditEvent.Action.SETTINGS_CHANGED, workspace=workspace)
    assert event.actor_label == "alice"
    assert event.target == "review settings"
    assert event.data["monthly_budget"] == {"from": None, "to": "25.00"}


def test_saving_unchanged_settings_records_nothing(as_user, workspace, alice):
    url = reverse("review:workspace_settings", args=[workspace.pk])
    form = {"monthly_budget": "", "warn_at_percent": "80", "hard_stop": "on"}

    as_user(alice).post(url, form)

    assert not AuditEvent.objects.filter(action=AuditEvent.Action.SETTINGS_CHANGED).exists()


def test_bad_settings_answer_400_with_reasons(as_user, workspace, alice):
    url = reverse("review:workspace_settings", args=[workspace.pk])

    response = as_user(alice).post(url, {"monthly_budget": "-3", "warn_at_percent": "0"})

    assert response.status_code == 400
    assert set(response.context["form"].errors) == {"monthly_budget", "warn_at_percent"}


def test_editors_cannot_change_settings(as_user, workspace, bob):
    url = reverse("review:workspace_settings", args=[workspace.pk])

    response = as_user(bob).post(url, {"monthly_budget": "1", "warn_at_percent": "80"})

    assert response.status_code == 403
    assert not ReviewSettings.objects.exists()


def test_the_overview_warns_when_the_budget_is_nearly_spent(as_user, agent, task, alice):
    set_budget(task.workspace, "1.00", warn_at_percent=50)
    make_call(make_turn(agent, task), cost="0.70")

    html = (
        as_user(alice)
        .get(reverse("review:workspace_home", args=[task.workspace_id]))
        .content.decode()
    )

    assert "budget-warning" in html
    assert "70%" in html
