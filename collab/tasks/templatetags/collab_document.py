from __future__ import annotations

from django import template
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from collab.core import hooks
from collab.lib.colors import presence_color
from collab.lib.markdown import render_markdown
from collab.tasks.models import Task

register = template.Library()

# The task page renders this much of the document (the editor loads all of it over its
# socket): rendering a 1 MB document's markdown on every page load took seconds.
PAGE_PREVIEW_CHARS = 50_000


@register.filter(name="document_start")
def document_start(text: str) -> SafeString:
    """The rendered start of the document for the page (cut at a line end), with a note when
    the rest is left to the editor."""
    if len(text) <= PAGE_PREVIEW_CHARS:
        return mark_safe(render_markdown(text))  # noqa: S308 - sanitised by render_markdown
    cut = text.rfind("\n", 0, PAGE_PREVIEW_CHARS)
    head = text[: cut if cut > PAGE_PREVIEW_CHARS // 2 else PAGE_PREVIEW_CHARS]
    note = format_html(
        '<p class="muted" data-role="truncated">… {} more characters: the editor shows the'
        " whole document.</p>",
        f"{len(text) - len(head):,}",
    )
    return mark_safe(render_markdown(head) + note)  # noqa: S308 - sanitised by render_markdown


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
    connected (agents that join the document's awareness replace their entry): what the
    ``task_participants`` hook reports."""
    return [entry for entries in hooks.task_participants(task=task) for entry in entries]
