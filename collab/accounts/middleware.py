"""Times in the person's own time zone (Settings): activated for each request from the session,
where login and the settings page put it, so that no request pays a query for it."""

from __future__ import annotations

import zoneinfo
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.utils import timezone

SESSION_KEY = "time_zone"


def time_zone_context(request: HttpRequest) -> dict[str, str]:
    """``time_zone_label``: the zone the page's times are in ("UTC" unless one was chosen)."""
    return {"time_zone_label": timezone.get_current_timezone_name()}


def remember_time_zone(request: HttpRequest, name: str) -> None:
    request.session[SESSION_KEY] = name


class TimeZoneMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        name = request.session.get(SESSION_KEY, "") if hasattr(request, "session") else ""
        try:
            if name:
                timezone.activate(zoneinfo.ZoneInfo(name))
            else:
                timezone.deactivate()
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):
            timezone.deactivate()
        try:
            return self.get_response(request)
        finally:
            timezone.deactivate()
