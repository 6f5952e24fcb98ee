from __future__ import annotations

from django import template
from django.utils.safestring import SafeString, mark_safe

from collab.lib.markdown import render_markdown

register = template.Library()


@register.filter(name="markdown")
def markdown_filter(text: str) -> SafeString:
    """Render markdown to HTML that nh3 has sanitised (see collab.lib.markdown)."""
    return mark_safe(render_markdown(text))  # noqa: S308 - sanitised by nh3 above
