"""The Celery application. Jobs live in each app's ``jobs.py`` and end in ``_job``."""

from __future__ import annotations

import os
from typing import Any

from celery import Celery
from celery.signals import task_postrun, task_prerun

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "collab.settings")

app = Celery("collab")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(related_name="jobs")


@task_prerun.connect
@task_postrun.connect
def close_old_connections(**kwargs: Any) -> None:
    """Around every job, what Django does around every request: close the database connections
    that failed or are older than ``CONN_MAX_AGE``, and keep the others. Celery's own Django
    fixup would close them all after every job (a new Postgres connection, several
    milliseconds, for every agent turn); ``CELERY_DB_REUSE_MAX`` keeps it from doing so."""
    from django.db import close_old_connections as close

    close()
