"""Celery jobs treat database connections the way Django treats requests: a healthy one is kept
for the next job (no new Postgres connection per agent turn), an old or broken one is closed."""

from __future__ import annotations

import time

import pytest
from celery.signals import task_postrun, task_prerun
from django.db import connection

from collab.celery import app

pytestmark = pytest.mark.django_db(transaction=True)


def test_celerys_django_fixup_does_not_close_connections_after_every_job() -> None:
    assert app.conf.get("CELERY_DB_REUSE_MAX") >= 100


@pytest.mark.parametrize("signal", [task_prerun, task_postrun])
def test_a_job_keeps_a_connection_younger_than_conn_max_age(signal) -> None:
    connection.ensure_connection()
    raw = connection.connection
    connection.close_at = time.monotonic() + 60  # as with CONN_MAX_AGE=60

    signal.send(sender=None)

    assert connection.connection is raw


@pytest.mark.parametrize("signal", [task_prerun, task_postrun])
def test_a_job_closes_a_connection_past_conn_max_age(signal) -> None:
    connection.ensure_connection()
    connection.close_at = time.monotonic() - 1

    signal.send(sender=None)

    assert connection.connection is None
