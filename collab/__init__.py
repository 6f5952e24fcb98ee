"""Collab: people and AI agents working on the same task at the same time."""

from __future__ import annotations

from collab.celery import app as celery_app

__all__ = ["celery_app"]
