from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied

from agents.evaluation import services
from agents.evaluation.jobs import run_evaluation_job
from agents.evaluation.models import EvaluationRun, RunStatus
from tests import factories


@pytest.fixture
def staff(db: None) -> User:
    user = factories.make_user("sofia")
    user.is_staff = True
    user.save(update_fields=["is_staff"])
    return user


def start(staff: User, **fields) -> EvaluationRun:
    options = {"scenarios": "default", "policies": ["never", "llm_judge"], "mode": "oracle"}
    options.update(fields)
    return services.create_run(user=staff, sessions=1, memory="off", **options)


def test_staff_starts_a_run_from_the_page_and_the_job_is_enqueued_on_commit(
    staff, as_user, django_capture_on_commit_callbacks
) -> None:
    client = as_user(staff)
    data = {
        "scenarios": "default",
        "policies": ["never", "value_of_information"],
        "mode": "oracle",
        "memory": "on",
        "seeds": "1",
        "sessions": "1",
    }
    with django_capture_on_commit_callbacks() as callbacks:
        response = client.post("/evaluation/", data)
    run = EvaluationRun.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"/evaluation/{run.pk}/"
    assert len(callbacks) == 1
    assert (run.status, run.episodes_total, run.created_by) == (RunStatus.QUEUED, 40, staff)


def test_bad_run_form_answers_400_with_reasons(staff, as_user) -> None:
    response = as_user(staff).post("/evaluation/", {"policies": ["psychic"], "seeds": "0"})
    assert response.status_code == 400
    assert EvaluationRun.objects.count() == 0


def test_real_mode_needs_a_model_profile(staff) -> None:
    with pytest.raises(Exception, match="model profile"):
        start(staff, mode="real")


def test_only_staff_start_runs(alice) -> None:
    with pytest.raises(PermissionDenied):
        start(alice)


def test_job_plays_the_run_stores_its_report_and_is_not_played_twice(staff) -> None:
    run = start(staff)
    assert run_evaluation_job(run.pk) == "done"
    run.refresh_from_db()
    assert run.status == RunStatus.DONE
    assert run.episodes_done == 40
    assert [s["policy"] for s in run.report["summaries"]] == ["never", "llm_judge"]
    assert run.report["config"]["mode"] == "oracle"
    assert run_evaluation_job(run.pk) == "skipped"


def test_failing_run_is_marked_failed_with_the_reason(staff) -> None:
    run = start(staff)
    EvaluationRun.objects.filter(pk=run.pk).update(scenarios="missing-set")
    assert run_evaluation_job(run.pk) == "failed"
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED
    assert "missing-set" in run.error


def test_report_page_shows_the_mode_metrics_and_plots(staff, as_user) -> None:
    run = start(staff)
    run_evaluation_job(run.pk)
    response = as_user(staff).get(f"/evaluation/{run.pk}/")
    page = response.content.decode()
    assert response.status_code == 200
    assert "Mode: oracle" in page
    assert page.count("<svg") == 5
    assert "llm_judge" in page
    assert as_user(staff).get(f"/evaluation/{run.pk}/report.json").json()["summaries"]


def test_two_runs_compare_side_by_side(staff, as_user) -> None:
    first, second = start(staff), start(staff, policies=["ask_once"])
    run_evaluation_job(first.pk)
    run_evaluation_job(second.pk)
    response = as_user(staff).get(f"/evaluation/compare/?run={first.pk}&run={second.pk}")
    page = response.content.decode()
    assert response.status_code == 200
    assert f"#{first.pk} never" in page
    assert f"#{second.pk} ask_once" in page


@pytest.mark.parametrize(
    "path", ["/evaluation/", "/evaluation/1/", "/evaluation/1/report.json", "/evaluation/compare/"]
)
def test_evaluation_pages_are_hidden_from_non_staff(alice, as_user, path) -> None:
    assert as_user(alice).get(path).status_code == 404


def test_run_list_shows_runs(staff, as_user, django_assert_max_num_queries) -> None:
    for _ in range(3):
        start(staff)
    client = as_user(staff)
    with django_assert_max_num_queries(6):
        response = client.get("/evaluation/")
    assert response.content.decode().count('name="run"') == 3
