from __future__ import annotations

from django import template
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

from collab.lib.colors import presence_color
from collab.tasks.models import Task

register = template.Library()


@register.filter(name="presence_color")
def presence_color_filter(user: AbstractBaseUser | AnonymousUser) -> str:
    """The user's cursor and presence colour in the document editor."""
    return presence_color(f"user:{user.pk}")


@register.filter(name="display_name")
def display_name(user: AbstractBaseUser | AnonymousUser) -> str:
    full_name = getattr(user, "get_full_name", lambda: "")()
    return str(full_name or user.get_username())


@register.simple_tag
def document_agents(task: Task) -> list[dict[str, str]]:
    """The task's active agents, listed in the editor's presence list even when they are not
    connected (agents that join the document's awareness replace their entry)."""
    agents = getattr(task, "agents", None)  # the reverse relation from agents.Agent.tasks
    if agents is None:
        return []
    return [
        {"name": agent.name, "color": agent.colour}
        for agent in agents.filter(is_active=True).order_by("name")
    ]
