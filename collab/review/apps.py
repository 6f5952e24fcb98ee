from __future__ import annotations

from django.apps import AppConfig


class ReviewConfig(AppConfig):
    name = "collab.review"
    label = "review"
    verbose_name = "Review"
