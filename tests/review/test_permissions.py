from __future__ import annotations

import pytest
from django.urls import reverse

from tests.review.conftest import make_call, make_turn

pytestmark = pytest.mark.django_db

WORKSPACE_PAGES = [
    "review:workspace_home",
    "review:workspace_traces",
    "review:workspace_usage",
    "review:workspace_settings",
    "review:workspace_export",
    "review:workspace_turns_csv",
]
SITE_PAGES = [
    "review:site_home",
    "review:site_traces",
    "review:site_usage",
    "review:site_export",
    "review:site_turns_csv",
]


@pytest.fixture
def turn(agent, task, bob):
    turn = make_turn(agent, task, requested_by=bob)
    make_call(turn)
    return turn


def task_and_turn_pages(task, turn):
    return [
        reverse("review:replay", args=[task.pk]),
        reverse("review:task_export", args=[task.pk]),
        reverse("review:turn", args=[turn.pk]),
    ]


@pytest.mark.parametrize("name", WORKSPACE_PAGES)
def test_owners_and_staff_open_workspace_review_pages(as_user, workspace, alice, staff, name):
    url = reverse(name, args=[workspace.pk])

    assert as_user(alice).get(url).status_code == 200
    assert as_user(staff).get(url).status_code == 200


@pytest.mark.parametrize("name", WORKSPACE_PAGES)
def test_other_members_are_refused_and_outsiders_see_nothing(
    as_user, workspace, bob, carol, mallory, name
):
    url = reverse(name, args=[workspace.pk])

    assert as_user(bob).get(url).status_code == 403
    assert as_user(carol).get(url).status_code == 403
    assert as_user(mallory).get(url).status_code == 404


@pytest.mark.parametrize("name", SITE_PAGES)
def test_site_wide_review_pages_are_for_staff_only(as_user, workspace, alice, staff, name):
    url = reverse(name)

    assert as_user(staff).get(url).status_code == 200
    assert as_user(alice).get(url).status_code == 404


def test_task_and_turn_pages_follow_the_workspace_rule(
    as_user, task, turn, alice, bob, carol, mallory, staff
):
    for url in task_and_turn_pages(task, turn):
        assert as_user(alice).get(url).status_code == 200, url
        assert as_user(staff).get(url).status_code == 200, url
        assert as_user(bob).get(url).status_code == 403, url
        assert as_user(carol).get(url).status_code == 403, url
        assert as_user(mallory).get(url).status_code == 404, url


def test_anonymous_visitors_are_sent_to_log_in(client, workspace, task, turn):
    urls = [reverse(name, args=[workspace.pk]) for name in WORKSPACE_PAGES]
    urls += [reverse(name) for name in SITE_PAGES] + task_and_turn_pages(task, turn)
    for url in urls:
        response = client.get(url)
        assert response.status_code == 302, url
        assert "/accounts/login/" in response["Location"]


def test_missing_workspace_task_and_turn_are_404_even_for_staff(as_user, staff):
    assert as_user(staff).get(reverse("review:workspace_home", args=[999])).status_code == 404
    assert as_user(staff).get(reverse("review:replay", args=[999])).status_code == 404
    assert as_user(staff).get(reverse("review:turn", args=[999])).status_code == 404


def test_owners_find_the_review_link_and_editors_do_not(as_user, workspace, alice, bob):
    review = reverse("review:workspace_home", args=[workspace.pk])
    page = reverse("tasks:list", args=[workspace.pk])

    assert review in as_user(alice).get(page).content.decode()
    assert review not in as_user(bob).get(page).content.decode()
