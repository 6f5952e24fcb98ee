"""Document persistence and the server-side edit service (collab.tasks.documents)."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied

from collab.lib import ytext
from collab.tasks import documents
from collab.tasks.models import Document, DocumentUpdate, DocumentVersion
from collab.tasks.selectors import (
    document_version_diff,
    list_document_contributions,
    list_document_versions,
)
from tests import factories


def _update_inserting(state: bytes, index: int, value: str) -> bytes:
    doc, text = ytext.doc_from_updates(state)
    before = doc.get_state()
    text.insert(ytext.utf8_offset(str(text), index), value)
    return doc.get_update(before)


def _append(document: Document, update: bytes, label: str = "alice", text: str | None = None):
    loaded = documents.load_document(document_id=document.pk)
    request = documents.AppendRequest(
        document_id=document.pk,
        updates=[documents.PendingUpdate(data=update, author_id=None, author_label=label)],
        text=text if text is not None else ytext.text_of(loaded.state, update),
        previous_text=loaded.text,
        after_id=loaded.last_update_id,
    )
    return documents.append_document_updates_many([request])[document.pk]


def test_text_only_documents_are_seeded_identically_every_time(task):
    Document.objects.filter(task=task).update(text="Plain old notes")
    first = documents.load_document(document_id=task.document.pk)
    Document.objects.filter(task=task).update(ystate=b"")  # as if a second process seeded
    second = documents.load_document(document_id=task.document.pk)

    assert first.state == second.state
    assert ytext.text_of(first.state, second.state) == "Plain old notes"


def test_a_reload_after_edits_never_duplicates_seeded_text(task):
    Document.objects.filter(task=task).update(text="Seed")
    loaded = documents.load_document(document_id=task.document.pk)
    _append(task.document, _update_inserting(loaded.state, 4, "ed"))

    again = documents.load_document(document_id=task.document.pk)

    assert again.text == "Seeded"
    assert Document.objects.get(task=task).text == "Seeded"


def test_compaction_folds_the_log_into_the_snapshot_and_keeps_who_wrote_it(task):
    document = task.document
    for word in ["one ", "two ", "three "]:
        state = documents.load_document(document_id=document.pk).state
        _append(document, _update_inserting(state, 0, word), label=word.strip())

    folded = documents.compact_document(document_id=document.pk)

    assert folded == 3
    document.refresh_from_db()
    assert document.snapshot_update_id == DocumentUpdate.objects.latest("id").pk
    assert documents.load_document(document_id=document.pk).text == "three two one "
    assert [c.author_label for c in list_document_contributions(task)] == ["three", "two", "one"]
    assert not any(DocumentUpdate.objects.values_list("data", flat=True).exclude(data=b""))


def test_appends_report_rows_written_by_others(task):
    document = task.document
    start = documents.load_document(document_id=document.pk)
    other = _update_inserting(start.state, 0, "theirs ")
    _append(document, other, label="bob")

    mine = _update_inserting(start.state, 0, "mine ")
    request = documents.AppendRequest(
        document_id=document.pk,
        updates=[documents.PendingUpdate(data=mine, author_id=None, author_label="alice")],
        text="mine ",
        previous_text="",
        after_id=start.last_update_id,
    )
    result = documents.append_document_updates_many([request])[document.pk]

    assert [data for _, data in result.missed] == [other]
    assert result.last_update_id == max(result.update_ids)


def test_a_large_deletion_first_records_the_text_it_removes(task):
    document = task.document
    long_text = "precious paragraph. " * 30
    documents.apply_text_edit(task=task, new_text=long_text, author_label="alice")
    state = documents.load_document(document_id=document.pk).state
    doc, text = ytext.doc_from_updates(state)
    before = doc.get_state()
    del text[0 : len(long_text.encode())]

    _append(document, doc.get_update(before), label="mallory's script", text="")

    saved = DocumentVersion.objects.filter(kind=DocumentVersion.Kind.BEFORE_DELETION).get()
    assert saved.text == long_text


def test_server_side_edits_are_minimal_diffs(task):
    base = "The quick brown fox jumps over the lazy dog.\n" * 50
    documents.apply_text_edit(task=task, new_text=base, author_label="alice")

    edit = documents.apply_text_edit(
        task=task, new_text=base.replace("lazy", "sleepy", 1), author_label="agent:Scribe"
    )

    assert 1 <= edit.operations <= 3
    assert len(edit.update) < 100  # a delete-all/insert-all update would carry the whole text
    assert Document.objects.get(task=task).text == base.replace("lazy", "sleepy", 1)


def test_a_stale_server_side_edit_keeps_what_others_wrote_since(task):
    documents.apply_text_edit(task=task, new_text="alpha\nbeta\n", author_label="alice")
    read = documents.read_document(task=task)
    # bob edits the end while the agent is thinking about the start
    _append(task.document, _update_inserting(read.state, len(read.text), "gamma\n"), label="bob")

    documents.apply_text_edit(
        task=task, new_text="ALPHA\nbeta\n", author_label="agent:Scribe", base=read
    )

    assert Document.objects.get(task=task).text == "ALPHA\nbeta\ngamma\n"


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("héllo wörld", "héllo, wörld!"),
        ("emoji 👩‍👩‍👧 here", "emoji 👩‍👩‍👧 and 🎉 here"),
        ("日本語のテキスト", "日本語の新しいテキスト"),
        ("e\u0301 combining", "e\u0301\u0301 combining accents"),
        ("😀😀😀", "😀x😀😀"),
    ],
)
def test_non_ascii_edits_land_where_intended(task, before, after):
    documents.apply_text_edit(task=task, new_text=before, author_label="alice")
    documents.apply_text_edit(task=task, new_text=after, author_label="agent:Scribe")

    assert documents.load_document(document_id=task.document.pk).text == after
    assert Document.objects.get(task=task).text == after


def test_edits_are_published_to_live_rooms_on_commit(task, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as callbacks:
        documents.apply_text_edit(task=task, new_text="hi", author_label="alice")
    assert len(callbacks) == 1


def test_restore_brings_back_an_old_version_as_a_new_edit(task, workspace, bob):
    documents.apply_text_edit(task=task, new_text="good text", author_label="alice")
    good = DocumentVersion.objects.latest("id")
    documents.apply_text_edit(task=task, new_text="", author_label="vandal")

    documents.restore_document_version(
        membership=factories.membership_of(workspace, bob), task=task, version_id=good.pk
    )

    assert Document.objects.get(task=task).text == "good text"
    newest = list_document_versions(task)[0]
    assert newest.kind == DocumentVersion.Kind.RESTORE
    assert newest.authors == ["bob"]
    assert "+good text" in document_version_diff(newest)


def test_viewers_cannot_restore_versions(task, workspace, carol):
    documents.apply_text_edit(task=task, new_text="text", author_label="alice")
    version = DocumentVersion.objects.latest("id")
    with pytest.raises(PermissionDenied):
        documents.restore_document_version(
            membership=factories.membership_of(workspace, carol), task=task, version_id=version.pk
        )


def test_a_minimal_diff_of_large_texts_only_touches_the_changed_lines():
    old = "".join(f"line {i} of a long document\n" for i in range(3000))
    new = old.replace("line 1500 of", "line 1500 (edited) of")
    ops = list(ytext.diff_ops(old, new))
    assert len(ops) == 1
    start, end, inserted = ops[0]
    assert start == end
    assert old[:start] + inserted + old[end:] == new


def test_replace_in_document_works_on_the_latest_persisted_text(task):
    documents.apply_text_edit(task=task, new_text="Budget: 100 €\n", author_label="alice")
    # the column lags (as when another process's room has not rewritten it yet)
    Document.objects.filter(task=task).update(text="stale")

    edit = documents.replace_in_document(
        task=task, find="100 €", replace="120 € 💶", author_label="agent:Scribe"
    )

    assert edit is not None
    assert Document.objects.get(task=task).text == "Budget: 120 € 💶\n"
    assert (
        documents.replace_in_document(task=task, find="100 €", replace="x", author_label="a")
        is None
    )


def test_one_flush_persists_the_batches_of_several_documents(workspace):
    first, second = factories.make_task(workspace), factories.make_task(workspace, title="Other")
    requests = []
    for task, word in ((first, "one"), (second, "two")):
        loaded = documents.load_document(document_id=task.document.pk)
        requests.append(
            documents.AppendRequest(
                document_id=task.document.pk,
                updates=[
                    documents.PendingUpdate(_update_inserting(loaded.state, 0, word), None, "bob")
                ],
                text=word,
                previous_text="",
                after_id=loaded.last_update_id,
            )
        )
    gone = documents.AppendRequest(999_999, [], "x", "", 0)

    results = documents.append_document_updates_many([*requests, gone])

    assert set(results) == {first.document.pk, second.document.pk}
    assert Document.objects.get(task=first).text == "one"
    assert Document.objects.get(task=second).text == "two"


def _request(document: Document, update: bytes, *, author_id: int | None = None):
    loaded = documents.load_document(document_id=document.pk)
    return documents.AppendRequest(
        document_id=document.pk,
        updates=[documents.PendingUpdate(data=update, author_id=author_id, author_label="bob")],
        text=ytext.text_of(loaded.state, update),
        previous_text=loaded.text,
        after_id=loaded.last_update_id,
    )


def test_a_nul_inserted_through_yjs_never_stops_the_document_saving(task):
    # given an editor's Yjs update that inserts a NUL (legal in Yjs, not in PostgreSQL text)
    document = task.document
    state = documents.load_document(document_id=document.pk).state
    poisoned = _update_inserting(state, 0, "nul\x00here")

    # when it is flushed, then it is stored, and the derived text column holds a replacement
    result = documents.append_document_updates_many([_request(document, poisoned)])
    assert isinstance(result[document.pk], documents.AppendResult)
    assert Document.objects.get(pk=document.pk).text == "nul\ufffdhere"
    assert "\x00" in documents.load_document(document_id=document.pk).text  # the log keeps it

    # and later edits (and versions) of the same document keep saving
    later = _update_inserting(documents.load_document(document_id=document.pk).state, 0, "ok ")
    documents.append_document_updates_many([_request(document, later)])
    assert Document.objects.get(pk=document.pk).text == "ok nul\ufffdhere"
    documents.record_document_version(task=task)
    assert "\x00" not in DocumentVersion.objects.filter(document=document).latest("id").text


@pytest.mark.django_db(transaction=True)
def test_one_documents_failed_flush_never_rolls_back_another(workspace):
    # given two rooms flushing together, one of them with a batch the database refuses
    good, bad = factories.make_task(workspace), factories.make_task(workspace)
    state = documents.load_document(document_id=good.document.pk).state
    fine = _request(good.document, _update_inserting(state, 0, "saved"))
    refused = _request(bad.document, _update_inserting(state, 0, "lost"), author_id=10**9)

    # when they are flushed in one call
    outcome = documents.append_document_updates_many([refused, fine])

    # then the good document is saved, and only the bad one is reported back to its room
    assert isinstance(outcome[good.document.pk], documents.AppendResult)
    assert isinstance(outcome[bad.document.pk], documents.AppendFailure)
    assert Document.objects.get(pk=good.document.pk).text == "saved"
    assert Document.objects.get(pk=bad.document.pk).text == ""
    assert not DocumentUpdate.objects.filter(document=bad.document).exists()
