"""Django signal receivers that tell open sockets about access changes made outside our services
(Django's logout view, the admin's "active" box); connected by ``RealtimeConfig.ready``
(collab/realtime/access.py re-checks the sockets)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.signals import user_logged_out
from django.db import transaction
from django.db.models.signals import post_save

from collab.realtime import broadcast


def connect() -> None:
    user_logged_out.connect(logged_out, dispatch_uid="realtime-logged-out")
    post_save.connect(user_saved, sender=get_user_model(), dispatch_uid="realtime-user-saved")


def logged_out(sender: Any, request: Any, user: Any, **kwargs: Any) -> None:
    # Sent before the session is deleted: name it, so that its sockets close all the same.
    session_key = getattr(getattr(request, "session", None), "session_key", None)
    if user is not None and user.pk is not None:
        broadcast.access_changed(user.pk, ended_sessions=[session_key] if session_key else [])


def user_saved(sender: Any, instance: Any, created: bool, **kwargs: Any) -> None:
    if created or instance.is_active:
        return
    user_id = instance.pk
    transaction.on_commit(lambda: broadcast.access_changed(user_id))
