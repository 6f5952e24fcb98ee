"""The task templates a task can start from. ``Task.template`` stores the kind; empty means
free-form. The templates themselves come from the ``task_templates`` hook (the agents app
serves its data files, agents/task_templates/*.toml); with no hook there is only free-form."""

from __future__ import annotations

from dataclasses import dataclass

from collab.core import hooks
from collab.core.hooks import TaskTemplateLike

FREE_FORM_LABEL = "Free-form"


@dataclass(frozen=True)
class TemplateInfo:
    kind: str
    title: str
    description: str


def known_templates() -> dict[str, TaskTemplateLike]:
    found: dict[str, TaskTemplateLike] = {}
    for templates in hooks.task_templates():
        found.update(templates)
    return found


def template_choices() -> list[tuple[str, str]]:
    """Choices for a select: free-form first, then every shipped template with its summary."""
    choices = [("", FREE_FORM_LABEL)]
    for kind, template in sorted(known_templates().items(), key=lambda kv: kv[1].title):
        label = f"{template.title}: {template.description}" if template.description else kind
        choices.append((kind, label))
    return choices


def template_error(kind: str) -> str | None:
    """Why ``kind`` is not a template a task can start from (None when it is one, or empty)."""
    if not kind or kind in known_templates():
        return None
    names = ", ".join(sorted(known_templates()))
    return f"Unknown template {kind[:40]!r}: use one of {names}, or leave it empty for free-form."


def template_info(kind: str) -> TemplateInfo | None:
    """Title and description for a task page (None for free-form or a retired template)."""
    template = known_templates().get(kind) if kind else None
    if template is None:
        return None
    return TemplateInfo(kind=kind, title=template.title, description=template.description)


def skeleton(kind: str) -> str:
    """The document a new task of this kind starts with ("" for free-form)."""
    template = known_templates().get(kind) if kind else None
    return template.skeleton if template else ""
