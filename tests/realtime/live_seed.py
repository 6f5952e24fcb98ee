"""Run inside a live site's environment: ``python -m tests.realtime.live_seed COMMAND``.

``migrate``; ``seed [TEXT]`` (prints the cast as JSON); ``edit TASK_ID AUTHOR NEW_TEXT``;
``anchor TASK_ID AUTHOR ANCHOR TEXT`` (the server-side edit service, from a process with no
event loop, as a Celery worker would call it); ``type TASK_ID AUTHOR FIND REPLACE`` (the same
edit typed live, in the small steps an agent's direct edit takes).
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
    elif command == "tasks":
        print(json.dumps(_tasks(int(args[0]))))
    elif command == "coldload":
        print(json.dumps(_cold_load(chars=int(args[0]), updates=int(args[1]))))
    elif command == "edit":
        from collab.tasks.documents import apply_text_edit
        from collab.tasks.models import Task

        task = Task.objects.get(pk=int(args[0]))
        apply_text_edit(task=task, new_text=args[2], author_label=args[1])
    elif command == "anchor":  # insert after the first occurrence of an anchor ("" = the end)
        from collab.tasks.documents import replace_in_document
        from collab.tasks.models import Task

        task = Task.objects.get(pk=int(args[0]))
        anchor, text = args[2], args[3]
        replace_in_document(task=task, find=anchor, replace=anchor + text, author_label=args[1])
    elif command == "remove":  # alice removes USERNAME from the workspace (the service)
        _remove(args[0])
    elif command == "revoke":  # USERNAME's live-test tokens are revoked (the service)
        _revoke(args[0])
    elif command == "agent":  # alice adds agent NAME (fake model BEHAVIOUR) to the first task
        _agent(args[0], args[1])
    elif command == "type":
        _type(int(args[0]), author=args[1], find=args[2], replace=args[3])
    else:
        raise SystemExit(f"unknown command {command!r}")


def _type(task_id: int, *, author: str, find: str, replace: str) -> None:
    """What ``agents.services.live_typing`` does for a direct edit typed live (steps of about 4
    characters here, so that emoji sequences are cut between steps), paced a little."""
    import time

    from collab.lib import ytext
    from collab.tasks import documents
    from collab.tasks.models import Task

    task = Task.objects.get(pk=task_id)
    base = documents.read_document(task=task)
    groups = ytext.typing_steps(base.text, base.text.replace(find, replace, 1), chunk_chars=4)
    for number, group in enumerate(groups):
        text = ytext.apply_steps(base.text, group)
        edit = documents.apply_text_edit(
            task=task,
            new_text=text,
            author_label=author,
            base=base,
            record_version=number == len(groups) - 1,
        )
        base = documents.next_base(base, edit, text=text)
        time.sleep(0.02)
    print(len(groups))


def _agent(name: str, behaviour: str) -> None:
    from agents.models import ModelProfile, Provider
    from agents.services.agents import create_agent
    from collab.tasks.models import Task
    from collab.workspaces.models import Membership

    task = Task.objects.order_by("id").first()
    assert task is not None
    owner = Membership.objects.get(workspace=task.workspace, user__username="alice")
    profile = ModelProfile.objects.create(name=name, provider=Provider.FAKE, model=behaviour)
    agent = create_agent(membership=owner, name=name, model_profile=profile)
    agent.tasks.add(task)


def _remove(username: str) -> None:
    from collab.workspaces.models import Membership
    from collab.workspaces.services import remove_member

    membership = Membership.objects.select_related("workspace", "user").get(user__username=username)
    owner = Membership.objects.select_related("workspace", "user").get(
        workspace=membership.workspace, user__username="alice"
    )
    remove_member(actor=owner, membership=membership)


def _revoke(username: str) -> None:
    from django.contrib.auth.models import User

    from collab.accounts.models import ApiToken
    from collab.accounts.services import revoke_api_token

    user = User.objects.get(username=username)
    for token_id in ApiToken.objects.filter(user=user).values_list("id", flat=True):
        revoke_api_token(user=user, token_id=token_id)


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


def _tasks(count: int) -> list[int]:
    """``count`` more tasks in the seeded workspace (for bench/realtime.py)."""
    from collab.workspaces.models import Workspace
    from tests import factories

    workspace = Workspace.objects.order_by("id").first()
    assert workspace is not None
    return [factories.make_task(workspace, title=f"Bench {i}").pk for i in range(count)]


def _cold_load(*, chars: int, updates: int) -> dict[str, object]:
    """Build a document of about ``chars`` characters from ``updates`` persisted updates the way
    rooms write them (batches of 10, compaction as configured), then time cold loads."""
    import time

    from collab.lib import ytext
    from collab.tasks import documents
    from collab.tasks.models import Document, DocumentUpdate, Task

    task = Task.objects.order_by("id").first()
    assert task is not None
    document_id = task.document.pk
    doc, text = ytext.new_doc()
    chunk = max(1, chars // updates)
    pending: list[bytes] = []
    written = 0
    after_id = 0
    for i in range(updates):
        before = doc.get_state()
        position = (i * 7919) % (len(str(text)) + 1)
        current = str(text)
        text.insert(ytext.utf8_offset(current, position), "ab😀cdefgh日本"[:chunk] * 1)
        pending.append(doc.get_update(before))
        if len(pending) == 10 or i == updates - 1:
            request = documents.AppendRequest(
                document_id=document_id,
                updates=[documents.PendingUpdate(u, None, "bench") for u in pending],
                text=str(text),
                previous_text=None,
                after_id=after_id,
            )
            result = documents.append_document_updates_many([request])[document_id]
            after_id = result.last_update_id
            if result.should_compact:
                documents.compact_document(document_id=document_id)
            written += len(pending)
            pending = []
    timings = []
    for _ in range(20):
        started = time.perf_counter()
        loaded = documents.load_document(document_id=document_id)
        timings.append((time.perf_counter() - started) * 1000)
    assert loaded.text == str(text)
    document = Document.objects.get(pk=document_id)
    timings_sorted = sorted(timings)
    return {
        "chars": len(loaded.text),
        "updates": written,
        "log_rows_after_snapshot": DocumentUpdate.objects.filter(
            document_id=document_id, id__gt=document.snapshot_update_id
        ).count(),
        "snapshot_bytes": len(bytes(document.ystate)),
        "first_ms": timings[0],
        "p50_ms": timings_sorted[len(timings) // 2],
        "max_ms": timings_sorted[-1],
    }


if __name__ == "__main__":
    main(sys.argv[1:])
