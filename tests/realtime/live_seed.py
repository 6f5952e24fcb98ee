"""Run inside a live site's environment: ``python -m tests.realtime.live_seed COMMAND``.

``migrate``; ``seed [TEXT]`` (prints the cast as JSON); ``edit TASK_ID AUTHOR NEW_TEXT``;
``anchor TASK_ID AUTHOR ANCHOR TEXT`` (the server-side edit service, from a process with no
event loop, as a Celery worker would call it).
"""

from __future__ import annotations

import json
import sys

import django


def main(argv: list[str]) -> None:
    django.setup()
    from django.core.management import call_command

    command, *args = argv
    if command == "migrate":
        call_command("migrate", verbosity=0, interactive=False)
    elif command == "seed":
        print(json.dumps(_seed(args[0] if args else "")))
    elif command == "edit":
        from collab.tasks.documents import apply_text_edit
        from collab.tasks.models import Task

        task = Task.objects.get(pk=int(args[0]))
        apply_text_edit(task=task, new_text=args[2], author_label=args[1])
    elif command == "anchor":
        from collab.tasks.documents import insert_at_anchor
        from collab.tasks.models import Task

        task = Task.objects.get(pk=int(args[0]))
        insert_at_anchor(task=task, anchor=args[2], text=args[3], author_label=args[1])
    else:
        raise SystemExit(f"unknown command {command!r}")


def _seed(text: str) -> dict[str, object]:
    from collab.accounts.services import create_api_token
    from collab.tasks.documents import apply_text_edit
    from collab.workspaces.models import Role
    from tests import factories

    alice = factories.make_user("alice")
    bob = factories.make_user("bob")
    carol = factories.make_user("carol")
    workspace = factories.make_workspace(alice)
    factories.add_member(workspace, bob, Role.EDITOR)
    factories.add_member(workspace, carol, Role.VIEWER)
    task = factories.make_task(workspace)
    if text:
        apply_text_edit(task=task, new_text=text, author_label="alice", author=alice)
    tokens = {
        user.get_username(): create_api_token(user=user, name="live test").token
        for user in (alice, bob, carol)
    }
    return {"task_id": task.pk, "document_id": task.document.pk, "tokens": tokens}


if __name__ == "__main__":
    main(sys.argv[1:])
