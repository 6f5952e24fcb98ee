"""The Models page (staff), the review usage pages (owners and staff) and the evaluation pages
(staff) over the API (issue 29), through the pages' forms, selectors and services."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth.models import User

from agents import profiles
from agents.evaluation.models import EvaluationRun
from agents.models import Agent, ModelCall, ModelProfile, Provider
from collab.workspaces.models import Workspace
from tests.agents.openai_server import closed_port  # noqa: F401
from tests.api.conftest import ApiClientFactory
from tests.api.conftest import send_json as _send

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(db: None) -> User:
    return User.objects.create_user(username="root", password="x", is_staff=True)


def _local(base_url: str) -> ModelProfile:
    return ModelProfile.objects.create(
        name="Local server", provider=Provider.OPENAI, model="smollm2", base_url=base_url
    )


# --- models ----------------------------------------------------------------------------------


def test_staff_add_and_edit_a_model_as_the_page_checks_it(
    staff: User, alice: User, api_as: ApiClientFactory
) -> None:
    body = {"name": "Team GPT", "provider": "openai", "model": "gpt-4.1-mini"}
    assert _send(api_as(alice), "POST", "/api/models", body).status_code == 403
    no_key = _send(api_as(staff), "POST", "/api/models", body)
    assert no_key.status_code == 400
    assert "api_key_env" in no_key.json()["errors"]  # the page's own check
    added = _send(api_as(staff), "POST", "/api/models", {**body, "api_key_env": "TEAM_KEY"})
    assert added.status_code == 201, added.json()
    profile_id = added.json()["id"]
    url = f"/api/models/{profile_id}"

    assert _send(api_as(alice), "PATCH", url, {"temperature": 0.5}).status_code == 403
    assert _send(api_as(staff), "PATCH", url, {"temperature": 7}).status_code == 400
    edited = _send(api_as(staff), "PATCH", url, {"temperature": 0.5, "max_tokens": 256})

    assert edited.status_code == 200, edited.json()
    profile = ModelProfile.objects.get(pk=profile_id)
    assert (profile.temperature, profile.max_tokens, profile.model) == (0.5, 256, "gpt-4.1-mini")
    assert _send(api_as(staff), "PATCH", "/api/models/999999", {"name": "x"}).status_code == 404
    site = api_as(staff).get("/api/models/site").json()
    assert [(m["name"], m["key_set"]) for m in site] == [("Team GPT", False)]
    assert api_as(alice).get("/api/models/site").status_code == 403


def test_staff_test_a_model_and_get_its_exact_error(
    staff: User,
    alice: User,
    api_as: ApiClientFactory,
    closed_port: str,  # noqa: F811
) -> None:
    profile = _local(closed_port)
    url = f"/api/models/{profile.pk}/test"

    assert _send(api_as(alice), "POST", url).status_code == 403
    tested = _send(api_as(staff), "POST", url)

    assert tested.status_code == 200
    assert tested.json()["ok"] is False
    assert f"Could not connect to the model at {closed_port}" in tested.json()["error"]
    assert _send(api_as(staff), "POST", "/api/models/-1/test").status_code == 400


def test_staff_make_a_model_the_default_and_the_built_in_one_again(
    staff: User, alice: User, api_as: ApiClientFactory
) -> None:
    profile = _local("http://127.0.0.1:9/v1")

    assert _send(api_as(alice), "POST", f"/api/models/{profile.pk}/default").status_code == 403
    made = _send(api_as(staff), "POST", f"/api/models/{profile.pk}/default")
    assert made.json()["default"]["id"] == profile.pk
    assert profiles.resolve_profile(None) == profile
    back = _send(api_as(staff), "POST", "/api/models/0/default")
    assert back.json() == {"default": None}
    assert profiles.resolve_profile(None).is_embedded


# --- usage -----------------------------------------------------------------------------------


def test_owners_read_their_workspaces_usage_and_budget(
    workspace: Workspace,
    alice: User,
    bob: User,
    mallory: User,
    staff: User,
    api_as: ApiClientFactory,
) -> None:
    mira = Agent.objects.create(workspace=workspace, name="Mira")
    for tokens in (100, 50):
        ModelCall.objects.create(
            agent=mira, provider="openai", model="gpt", tokens_in=tokens, cost=Decimal("0.01")
        )
    url = f"/api/workspaces/{workspace.pk}/review/usage"

    assert api_as(bob).get(url).status_code == 403
    assert api_as(mallory).get(url).status_code == 404
    read = api_as(alice).get(url, {"by": "agent"})

    assert read.status_code == 200, read.json()
    usage = read.json()
    assert [(t["label"], t["calls"], t["tokens_in"]) for t in usage["totals"]] == [("Mira", 2, 150)]
    assert Decimal(usage["totals"][0]["cost"]) == Decimal("0.02")
    assert usage["budget"]["state"] == "none"
    assert api_as(alice).get(url, {"since": "2026-12-05", "until": "2026-12-01"}).status_code == 400
    assert api_as(alice).get(url, {"by": "colour"}).status_code == 400
    assert api_as(staff).get(url).status_code == 200
    everything = api_as(staff).get("/api/review/usage", {"by": "workspace"})
    assert [t["label"] for t in everything.json()["totals"]] == ["Acme"]
    assert everything.json()["budget"] is None
    assert api_as(alice).get("/api/review/usage").status_code == 404


# --- evaluation ------------------------------------------------------------------------------


def test_staff_start_list_and_read_evaluation_runs(
    staff: User, alice: User, api_as: ApiClientFactory, django_capture_on_commit_callbacks: Any
) -> None:
    body = {"scenarios": "default", "policies": ["ask_once"], "mode": "oracle"}
    assert _send(api_as(alice), "POST", "/api/evaluation/runs", body).status_code == 404
    assert api_as(alice).get("/api/evaluation/runs").status_code == 404
    unknown = _send(api_as(staff), "POST", "/api/evaluation/runs", {**body, "policies": ["nope"]})
    assert unknown.status_code == 400
    assert "policies" in unknown.json()["errors"]

    with django_capture_on_commit_callbacks() as enqueued:
        started = _send(api_as(staff), "POST", "/api/evaluation/runs", body)

    assert started.status_code == 201, started.json()
    assert len(enqueued) == 1  # its job, once committed
    run_id = started.json()["id"]
    assert started.json()["status"] == "queued"
    listed = api_as(staff).get("/api/evaluation/runs").json()
    assert [run["id"] for run in listed["runs"]] == [run_id]
    EvaluationRun.objects.filter(pk=run_id).update(status="done", report={"config": {"x": 1}})
    read = api_as(staff).get(f"/api/evaluation/runs/{run_id}")
    assert (read.json()["status"], read.json()["report"]) == ("done", {"config": {"x": 1}})
    assert api_as(alice).get(f"/api/evaluation/runs/{run_id}").status_code == 404
    assert api_as(staff).get("/api/evaluation/runs/999999").status_code == 404


def test_owners_set_the_monthly_budget_and_usage_shows_it(
    workspace: Workspace, alice: User, bob: User, mallory: User, api_as: ApiClientFactory
) -> None:
    url = f"/api/workspaces/{workspace.pk}/review/settings"
    assert api_as(alice).get(url).json()["monthly_budget"] is None
    assert _send(api_as(bob), "PUT", url, {"monthly_budget": "5"}).status_code == 403
    assert _send(api_as(mallory), "PUT", url, {"monthly_budget": "5"}).status_code == 404
    assert _send(api_as(alice), "PUT", url, {"warn_at_percent": 0}).status_code == 400

    saved = _send(api_as(alice), "PUT", url, {"monthly_budget": "5.00", "warn_at_percent": 50})

    assert saved.status_code == 200, saved.json()
    assert Decimal(saved.json()["monthly_budget"]) == Decimal(5)
    assert saved.json()["hard_stop"] is True  # left out: kept
    budget = api_as(alice).get(f"/api/workspaces/{workspace.pk}/review/usage").json()["budget"]
    assert (budget["state"], Decimal(budget["limit"])) == ("ok", Decimal(5))
    cleared = _send(api_as(alice), "PUT", url, {"monthly_budget": None})
    assert cleared.json()["monthly_budget"] is None
    assert cleared.json()["warn_at_percent"] == 50
