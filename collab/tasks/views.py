from __future__ import annotations

from typing import Any

from django.contrib import messages as flash
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from collab.core import hooks
from collab.lib.markdown import render_markdown
from collab.lib.requests import AuthedRequest
from collab.lib.textdiff import change_size, diff_lines
from collab.tasks import documents, selectors, services
from collab.tasks.forms import MessageForm, StatusForm, TaskForm
from collab.tasks.models import TaskStatus
from collab.tasks.serializers import message_event
from collab.tasks.task_templates import template_info
from collab.workspaces.selectors import get_membership


@login_required
def task_list(request: AuthedRequest, workspace_id: int) -> HttpResponse:
    membership = get_membership(request.user, workspace_id)
    status = request.GET.get("status") or None
    if status not in (None, *TaskStatus.values):
        status = None
    form = TaskForm(request.POST or None)
    http_status = 200
    if request.method == "POST":
        if form.is_valid():
            try:
                task = services.create_task(membership=membership, **form.cleaned_data)
            except ValidationError as exc:
                form.add_error(None, exc)
            else:
                return redirect("tasks:detail", task_id=task.pk)
        http_status = 400
    context = {
        "workspace": membership.workspace,
        "membership": membership,
        "tasks": selectors.list_tasks(membership.workspace, status=status),
        "status": status,
        "statuses": TaskStatus.choices,
        "form": form,
    }
    if request.htmx and request.method == "GET":
        return render(request, "tasks/task_list.html#task-rows", context)
    return render(request, "tasks/task_list.html", context, status=http_status)


def _attach_fragments(request: AuthedRequest, task_id: int, messages: list[dict[str, Any]]) -> None:
    """What the hooks show beside messages (e.g. an agent message's feedback widget)."""
    hooks.message_fragments(task_id=task_id, messages=messages, viewer=request.user)


@login_required
def task_detail(request: AuthedRequest, task_id: int) -> HttpResponse:
    access = selectors.get_task_access(request.user, task_id)
    messages = [message_event(m) for m in selectors.list_messages(access.task)]
    _attach_fragments(request, access.task.pk, messages)
    context = {
        "task": access.task,
        "task_template": template_info(access.task.template),
        "workspace": access.task.workspace,
        "membership": access.membership,
        "can_edit": access.can_edit,
        "chat_messages": messages,
        "has_older": len(messages) == selectors.page_size(),
        "form": MessageForm(),
        "status_form": StatusForm(initial={"status": access.task.status}),
        "statuses": TaskStatus.choices,
    }
    for extra in hooks.task_page_context(task=access.task, membership=access.membership):
        context.update(extra)
    return render(request, "tasks/task_detail.html", context)


@login_required
@require_GET
def older_messages(request: AuthedRequest, task_id: int) -> HttpResponse:
    access = selectors.get_task_access(request.user, task_id)
    try:
        before = int(request.GET["before"])
    except (KeyError, ValueError):
        return HttpResponse("before must be a message id", status=400)
    messages = [message_event(m) for m in selectors.list_messages(access.task, before=before)]
    _attach_fragments(request, access.task.pk, messages)
    return render(
        request,
        "tasks/task_detail.html#older-messages",
        {
            "task": access.task,
            "chat_messages": messages,
            "has_older": len(messages) == selectors.page_size(),
        },
    )


@login_required
@require_GET
def newer_messages(request: AuthedRequest, task_id: int) -> HttpResponse:
    """Messages after ``after``: what a chat socket missed while it was reconnecting."""
    access = selectors.get_task_access(request.user, task_id)
    try:
        after = int(request.GET["after"])
    except (KeyError, ValueError):
        return HttpResponse("after must be a message id", status=400)
    messages = [message_event(m) for m in selectors.list_messages_after(access.task, after=after)]
    _attach_fragments(request, access.task.pk, messages)
    return render(
        request,
        "tasks/task_detail.html#newer-messages",
        {
            "task": access.task,
            "chat_messages": messages,
            "has_newer": len(messages) == selectors.page_size(),
        },
    )


@login_required
@require_POST
def post_message(request: AuthedRequest, task_id: int) -> HttpResponse:
    access = selectors.get_task_access(request.user, task_id)
    form = MessageForm(request.POST)
    if form.is_valid():
        try:
            posted = services.post_message(
                membership=access.membership, task=access.task, body=form.cleaned_data["body"]
            )
        except ValidationError as exc:
            form.add_error("body" if hasattr(exc, "error_dict") else None, exc)
        except PermissionDenied as exc:
            # Demoted (or never an editor): say so where they typed, keep their text, and
            # answer with the read-only chat footer; a 403 logged on one line, no traceback.
            return _chat_refused(request, access, str(exc))
        else:
            # What a "remember that …" / "forget …" did: for the person who said it only.
            notice = posted.memory_notice
            if request.htmx:
                # The message itself arrives over the WebSocket, like everyone else's.
                return render(
                    request,
                    "tasks/_chat_posted.html",
                    {
                        "task": access.task,
                        "form": MessageForm(),
                        "can_edit": True,
                        "notice": notice,
                        "about_memory": posted.about_memory,
                    },
                )
            if notice:
                flash.info(request, notice)
            return redirect("tasks:detail", task_id=task_id)
    if request.htmx:
        return render(
            request,
            "tasks/task_detail.html#chat-form",
            {"task": access.task, "form": form, "can_edit": True},
            status=400,
        )
    return HttpResponse(" ".join(str(e) for errs in form.errors.values() for e in errs), status=400)


def _chat_refused(request: AuthedRequest, access: Any, reason: str) -> HttpResponse:
    detail = f"Your message was not sent: {reason} Copy it if you need it; reload to see your role."
    if request.htmx:
        html = render(
            request, "tasks/_chat_error.html", {"detail": detail, "oob": False}
        ).content.decode()
        return HttpResponse(html, status=403)
    return HttpResponse(detail, status=403, content_type="text/plain; charset=utf-8")


@login_required
@require_POST
def set_status(request: AuthedRequest, task_id: int) -> HttpResponse:
    access = selectors.get_task_access(request.user, task_id)
    form = StatusForm(request.POST)
    if not form.is_valid():
        return HttpResponse("Unknown status.", status=400)
    services.set_task_status(
        membership=access.membership, task=access.task, status=form.cleaned_data["status"]
    )
    if request.htmx:
        return HttpResponse(status=204)
    return redirect("tasks:detail", task_id=task_id)


# The preview renders what the editor holds, so it is bounded like a document.
DOCUMENT_PREVIEW_MAX_CHARS = 1_000_000


@login_required
@require_POST
def document_preview(request: AuthedRequest, task_id: int) -> HttpResponse:
    """Sanitised HTML for the editor's live preview (any member may ask; nothing is saved)."""
    selectors.get_task_access(request.user, task_id)
    text = request.POST.get("text", "")
    if len(text) > DOCUMENT_PREVIEW_MAX_CHARS:
        return HttpResponse(
            f"text must be at most {DOCUMENT_PREVIEW_MAX_CHARS} characters", status=400
        )
    return HttpResponse(render_markdown(text))


@login_required
@require_GET
def document_history(request: AuthedRequest, task_id: int) -> HttpResponse:
    """Versions of the document (who, when, how much) and the diff of one of them."""
    access = selectors.get_task_access(request.user, task_id)
    task = access.task
    versions = selectors.list_version_summaries(task)
    selected = request.GET.get("version")
    context: dict[str, object] = {
        "task": task,
        "workspace": task.workspace,
        "can_edit": access.can_edit,
        "versions": versions,
        "contributions": selectors.list_document_contributions(task, limit=20),
    }
    if selected is not None or versions:
        try:
            version_id = int(selected) if selected is not None else versions[0].version.pk
        except ValueError:
            return HttpResponse("version must be a version id", status=400)
        version, previous = selectors.get_version_with_previous_text(task, version_id)
        context.update(
            selected=version,
            diff=diff_lines(previous, version.text),
            size=change_size(previous, version.text),
            is_current=version.text == task.document.text,
        )
    if request.htmx and request.htmx.target == "version-diff":
        return render(request, "tasks/document_history.html#version-diff", context)
    return render(request, "tasks/document_history.html", context)


@login_required
@require_POST
def restore_version(request: AuthedRequest, task_id: int, version_id: int) -> HttpResponse:
    """Make the document read like an earlier version again, as a new edit."""
    access = selectors.get_task_access(request.user, task_id)
    version, _previous = selectors.get_version_with_previous_text(access.task, version_id)
    try:
        documents.restore_document_version(
            membership=access.membership, task=access.task, version_id=version.pk
        )
    except ValidationError as exc:  # the version vanished (e.g. the task was deleted meanwhile)
        raise Http404(str(exc)) from exc
    when = version.created_at.strftime("%H:%M")
    flash.success(request, f"Restored the version from {when} as a new edit.")
    # Back to the history, where the restore is now the newest version with its diff.
    return redirect("tasks:document_history", task_id=task_id)
