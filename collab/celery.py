"""The Celery application. Jobs live in each app's ``jobs.py`` and end in ``_job``."""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "collab.settings")

app = Celery("collab")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(related_name="jobs")
