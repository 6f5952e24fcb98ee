"""The Models page says which agents use each model, the built-in one included, and its price
help says something its label does not (#32.8)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from agents.forms import ModelProfileForm
from agents.models import Agent, ModelProfile

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(db: None) -> User:
    return User.objects.create_user(username="root", password="x", is_staff=True)


def _agents_column(as_user: Any, staff: User) -> dict[str, str]:
    """Each model row's Agents cell, by the row's test id."""
    page = as_user(staff).get(reverse("agents:models")).content.decode()
    rows = re.findall(r'<tr data-testid="(model-\d+)">(.*?)</tr>', page, re.S)
    cells = {}
    for row_id, row in rows:
        match = re.search(r'<td data-testid="model-agents">(.*?)</td>', row, re.S)
        assert match, row
        cells[row_id] = match.group(1).strip()
    return cells


def test_the_built_in_models_agents_column_counts_the_agents_that_use_it_by_default(
    as_user: Any, staff: User, make_agent: Callable[..., Agent]
) -> None:
    # given two agents without a model of their own and one with a model profile
    for name in ("Mira", "Nova"):
        agent = make_agent(name)
        agent.model_profile = None
        agent.save()
    chosen = make_agent("Sage")

    cells = _agents_column(as_user, staff)

    assert cells["model-0"] == "2, all by default"
    assert cells[f"model-{chosen.model_profile_id}"] == "1"


def test_the_default_models_row_counts_the_agents_without_a_model_of_their_own(
    as_user: Any, staff: User, make_agent: Callable[..., Agent]
) -> None:
    sage = make_agent("Sage")
    ModelProfile.objects.filter(pk=sage.model_profile_id).update(is_default=True)
    mira = make_agent("Mira")
    mira.model_profile = None
    mira.save()

    cells = _agents_column(as_user, staff)

    assert cells[f"model-{sage.model_profile_id}"] == "2, 1 of them by default"
    assert cells["model-0"] == "none"


def test_the_price_help_says_more_than_the_price_label() -> None:
    form = ModelProfileForm()
    for name in ("price_in_per_1k", "price_out_per_1k"):
        field = form.fields[name]
        label = str(field.label).lower().replace(",", "").replace("1000", "1k")
        help_text = str(field.help_text).lower().rstrip(".")
        assert help_text, name
        assert help_text not in label, (field.label, field.help_text)
        assert label not in help_text, (field.label, field.help_text)
