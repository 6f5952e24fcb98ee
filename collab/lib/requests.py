"""Typed request classes for view signatures (django-htmx adds ``request.htmx``)."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.http import HttpRequest
from django_htmx.middleware import HtmxDetails


class HtmxHttpRequest(HttpRequest):
    htmx: HtmxDetails


class AuthedRequest(HtmxHttpRequest):
    """A request behind ``@login_required``."""

    user: User
