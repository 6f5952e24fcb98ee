"""A refused request (403) is logged in one line, not with a traceback (#32.10)."""

from __future__ import annotations

import logging
from collections.abc import Callable

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse


def _request_records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "django.request"]


def test_a_refused_request_is_logged_in_one_line_with_user_path_and_reason(
    bob: User, as_user: Callable[[User], Client], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="django.request")

    answer = as_user(bob).get(reverse("agents:models"))

    assert answer.status_code == 403
    [record] = _request_records(caplog)
    assert record.levelno == logging.WARNING
    assert record.exc_info is None  # no traceback
    line = record.getMessage()
    assert "\n" not in line
    assert "bob" in line
    assert reverse("agents:models") in line
    assert "Only site administrators manage models." in line


def test_a_not_found_is_logged_as_django_logs_it(
    bob: User, as_user: Callable[[User], Client], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="django.request")

    as_user(bob).get("/t/999999/")

    [record] = _request_records(caplog)
    assert record.getMessage() == "Not Found: /t/999999/"
