"""``{% agents_panel as panel %}``: what the task page's agents pane shows."""

from __future__ import annotations

from typing import Any

from django import template

from agents import forms, selectors
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
    """The lines of a unified diff as a person reads them: ``(kind, text)`` with kind added,
    removed or context and the text without its ``+``/``-``/space marker. Hunk headers
    (``@@ -4 +4,3 @@``) are dropped; a ``gap`` (text "") stands between two hunks, where lines
    that did not change are left out."""
    lines: list[tuple[str, str]] = []
    for line in diff.splitlines():
        if line.startswith(("+++", "---")):
            continue
        if line.startswith("@@"):
            if lines:
                lines.append(("gap", ""))
            continue
        if line.startswith("\\"):  # "\ No newline at end of file"
            continue
        kind = {"+": "added", "-": "removed"}.get(line[:1], "context")
        lines.append((kind, line[1:] if line[:1] in "+- " else line))
    return lines


@register.filter
def policy_phrase(name: str) -> str:
    """``never`` -> "never asks": an agent's clarification policy on its card."""
    return forms.policy_phrase(name)


@register.filter
def text_lines(text: str) -> list[str]:
    """``text`` as its lines, without the blank lines it starts or ends with."""
    return (text or "").strip("\n").split("\n")


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
