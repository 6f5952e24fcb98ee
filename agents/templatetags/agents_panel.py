"""``{% agents_panel as panel %}``: what the task page's agents pane shows."""

from __future__ import annotations

from typing import Any

from django import template

from agents import selectors
from agents.llm import embedded
from agents.selectors import FeedbackWidget

register = template.Library()


@register.simple_tag(takes_context=True)
def agents_panel(context: template.Context) -> dict[str, Any]:
    task = context["task"]
    membership = context.get("membership")
    return selectors.task_panel(task=task, membership=membership)


@register.filter
def diff_lines(diff: str) -> list[tuple[str, str]]:
    """Lines of a unified diff with a CSS class: added, removed, hunk or context."""
    lines = []
    for line in diff.splitlines():
        if line.startswith(("+++", "---")):
            continue
        if line.startswith("@@"):
            kind = "hunk"
        elif line.startswith("+"):
            kind = "added"
        elif line.startswith("-"):
            kind = "removed"
        else:
            kind = "context"
        lines.append((kind, line))
    return lines


@register.simple_tag
def message_feedback(message: dict[str, Any]) -> FeedbackWidget:
    """An agent chat message's feedback widget: the one the view attached, else (a message
    that was just broadcast) an empty one."""
    widget = message.get("feedback")
    if isinstance(widget, FeedbackWidget):
        return widget
    return FeedbackWidget(kind="message", target_id=message["id"], task_id=message["task_id"])


@register.simple_tag
def embedded_capabilities() -> str:
    """What the embedded model can do, in plain words, from its measured figures
    (``agents/llm/embedded.py``, ``capabilities``)."""
    return embedded.capabilities()
