from __future__ import annotations

from django import template
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

from collab.lib.colors import presence_color

register = template.Library()


@register.filter(name="presence_color")
def presence_color_filter(user: AbstractBaseUser | AnonymousUser) -> str:
    """The user's cursor and presence colour in the document editor."""
    return presence_color(f"user:{user.pk}")


@register.filter(name="display_name")
def display_name(user: AbstractBaseUser | AnonymousUser) -> str:
    full_name = getattr(user, "get_full_name", lambda: "")()
    return str(full_name or user.get_username())
