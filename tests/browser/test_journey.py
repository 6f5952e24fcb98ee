"""The new-user journey in Chromium, as two people, a viewer and an admin meet it (#19).

alice owns "Acme" and invites bob (editor) and carol (viewer) by link; they co-edit the task
document with non-ASCII text and chat; alice asks three agents answering with fake models: one
suggests (she accepts it after editing it; its card reads as text, no diff syntax, and folds to
one line once decided), one edits the document directly (with every page open; she undoes it),
one asks (she answers). alice then demotes bob with his page open (it turns read-only at once,
keeping the message he was writing), removes him (his page locks, says why and keeps his
draft), and an admin reviews the turns.

Every page of the journey has a listener that fails the test on any console error, page error
or failed request (the few answers that are the point of a step, such as bob's refused post,
are declared where they happen), and the task page, the review pages and the agent pages are
checked at 1,400 and 390 px: no element wider than its container, no sideways scrolling, no word
broken inside a table cell (#32).
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from playwright.sync_api import BrowserContext, Locator, Page, expect

from tests.browser.flows import (
    PASSWORD,
    Watch,
    admin_shell,
    chat_messages,
    create_agent,
    create_invitation_link,
    create_task,
    create_workspace,
    expect_chat_live,
    fake_model_profile,
    join,
    no_overflow,
    send_chat,
    sign_up,
    task_id_of,
)

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]


def document_text(page: Page) -> str:
    script = "document.querySelector('[data-collab-editor]').collabEditor.ytext.toString()"
    return str(page.evaluate(script))


DIFF_MARKERS = re.compile(r"^(@@|\+|\\ No newline)", re.MULTILINE)


def assert_reads_as_text(diff: Locator, *, added: str) -> None:
    """A change shown as a person reads it: no hunk headers or +/- markers, and the added
    line whole and highlighted."""
    text = diff.inner_text()
    assert not DIFF_MARKERS.search(text), text
    lines = [ins.inner_text() for ins in diff.locator("ins").all()]
    assert added in lines, lines


def person(new_context: Callable[[], BrowserContext], watch: Watch) -> Page:
    context = new_context()
    context.set_default_timeout(20_000)
    return watch.attach(context.new_page())


# In three CI runs (embedded mode, a loaded 2-core machine) one of the three open pages stopped
# keeping up in the middle of this test: an action hung at "scrolling into view" twice, and once
# the viewer's page took in neither the agent's edit nor its turn's chat events for 15 s. The
# failure report (conftest.PAGE_PROBE) then showed why: every page was taking in about 200
# document messages a second, an agent's departure echoed round the room (fixed in
# collab/realtime/awareness.py; this test went from 135-180 s to 40 s). It still runs once more
# after any failure, until CI has shown it steady: a defect that fails it every time still does.
@pytest.mark.flaky(reruns=1)
def test_two_people_and_a_viewer_work_with_agents_and_an_admin_reviews(
    new_context: Callable[[], BrowserContext], worker: None
) -> None:
    watches = {name: Watch(name) for name in ("alice", "bob", "carol", "root")}
    alice = person(new_context, watches["alice"])
    bob = person(new_context, watches["bob"])
    carol = person(new_context, watches["carol"])
    overflow: list[str] = []

    # --- alice sets up; bob and carol join by their invitation links ---------------------
    sign_up(alice, "alice")
    create_workspace(alice, "Acme")
    editor_link = create_invitation_link(alice)
    alice.get_by_label("Role", exact=True).select_option(value="viewer")
    alice.get_by_role("button", name="Create invitation link").click()
    viewer_link = alice.get_by_test_id("invite-url").input_value()
    # carol opens hers logged out: it says what it is, and brings her back after sign-up
    carol.goto(viewer_link)
    expect(carol.get_by_test_id("invitation")).to_contain_text("alice invited you to join Acme")
    carol.get_by_role("link", name="Create an account to join").click()
    expect(carol.get_by_test_id("invitation-notice")).to_contain_text("join Acme as viewer")
    carol.get_by_label("Username").fill("carol")
    carol.get_by_label("Password", exact=True).fill(PASSWORD)
    carol.get_by_label("Password confirmation").fill(PASSWORD)
    carol.get_by_role("button", name="Sign up").click()
    carol.get_by_role("button", name="Join workspace").click()
    expect(carol.get_by_role("heading", name="Acme")).to_be_visible()
    sign_up(bob, "bob")
    join(bob, editor_link, "Acme")

    # --- three agents with fake models: one suggests, one edits directly, one asks ----------
    for behaviour in ("suggest", "edit", "ask"):
        fake_model_profile(f"Model {behaviour}", behaviour)
    task_url = create_task(alice, "Plan the offsite")
    alice.get_by_role("link", name="Manage agents").click()
    agents_page = alice.url
    for name, behaviour in (("Sage", "suggest"), ("Eddie", "edit"), ("Quinn", "ask")):
        alice.goto(agents_page)
        if name == "Eddie":
            alice.get_by_label("Document changes").select_option(value="may_edit")
        create_agent(alice, name, f"Model {behaviour}")
    alice.goto(agents_page)
    overflow += no_overflow(alice, "the agents page")
    alice.goto(task_url)
    expect_chat_live(alice)  # the new cards arrive over the chat socket
    for name in ("Sage", "Eddie", "Quinn"):
        alice.get_by_label("Agent to add").select_option(label=name)
        alice.get_by_role("button", name="Add to task").click()
        expect(alice.locator(f"#agent-cards [data-agent={name}]")).to_be_visible()

    # --- all three on the task page: co-editing, chat, the viewer reads along -------------
    bob.goto(task_url)
    carol.goto(task_url)
    for page in (alice, bob, carol):
        expect_chat_live(page)
        expect(page.locator("[data-collab-editor][data-status=synced]")).to_be_visible()
    bob.locator(".cm-content").click()
    bob.keyboard.type("## Overview\nTwo days in Lisbon, café ☕ 日本\n")
    expect(alice.locator(".cm-content")).to_contain_text("café ☕ 日本")
    expect(carol.locator(".cm-content")).to_contain_text("café ☕ 日本")
    expect(carol.locator(".cm-content")).to_have_attribute("contenteditable", "false")
    send_chat(bob, "Hello all, let us plan 🎉")
    expect(chat_messages(alice).last).to_contain_text("let us plan")
    expect(chat_messages(carol).last).to_contain_text("let us plan")
    expect(carol.locator("#chat-form")).to_contain_text("viewers cannot post")

    # --- Sage suggests; alice edits the proposal, then accepts it -------------------------
    alice.get_by_test_id("ask-Sage").click()
    card = alice.get_by_test_id("suggestion").first
    expect(card).to_contain_text("Agreed next step")
    # read as a person reads it: whole lines, the added ones highlighted, no diff syntax
    assert_reads_as_text(card.get_by_test_id("suggestion-diff"), added="- [ ] Agreed next step")
    card.get_by_text("Edit, then accept").click()
    box = card.get_by_label("Edited text")
    assert box.input_value() == "\n- [ ] Agreed next step"  # its leading newline kept
    box.fill(box.input_value() + " (Ana)")
    card.get_by_role("button", name="Accept edited").click()
    for page in (alice, bob, carol):
        expect(page.locator(".cm-content")).to_contain_text("Agreed next step (Ana)")
        # on a line of its own
        assert "日本\n\n- [ ] Agreed next step (Ana)" in document_text(page)
    decided = bob.get_by_test_id("suggestion").first
    expect(decided).to_contain_text("Edited, then accepted by alice")
    # decided: one line with its outcome, the rest behind "Show decided"
    expect(decided.get_by_test_id("suggestion-diff")).to_be_hidden()
    bob.get_by_role("button", name="Show decided (1)").click()
    applied = bob.get_by_test_id("applied-text").first
    expect(applied).to_be_visible()
    assert applied.inner_text() == "- [ ] Agreed next step (Ana)"  # no empty first line
    bob.get_by_role("button", name="Hide decided (1)").click()
    expect(applied).to_be_hidden()

    # --- Eddie edits the document directly while every page is open -----------------------
    alice.get_by_test_id("ask-Eddie").click()
    for page in (alice, bob, carol):
        expect(page.locator(".cm-content")).to_contain_text("Book the venue")
        expect(page.get_by_test_id("edit-notice").first).to_contain_text(
            "Eddie edited the document"
        )
    # presence does not echo round the room: each page's document socket took in 2,000 to
    # 21,000 messages by this point while an agent's departure went round (23 to 58 now)
    from tests.browser.conftest import PROBE_READ

    for page in (alice, bob, carol):
        sockets = page.evaluate(PROBE_READ)["sockets"]
        document_socket = next(s for s in sockets if s["url"].endswith("/doc"))
        assert document_socket["messages"] < 500, document_socket
    # people's cursors survive the agent's edit (the remote-selection plugin did not crash)
    bob.locator(".cm-content").click()
    bob.keyboard.press("Control+End")
    bob.keyboard.type(" ")
    expect(alice.locator(".cm-ySelectionInfo", has_text="bob")).to_have_count(1)
    # alice undoes Eddie's edit; what bob typed since stays
    alice.get_by_test_id("undo-edit").first.click()
    for page in (alice, bob, carol):
        expect(page.locator(".cm-content")).not_to_contain_text("Book the venue")
        expect(page.get_by_test_id("edit-undone").first).to_contain_text("Undone by alice")
    expect(carol.get_by_test_id("undo-edit")).to_have_count(0)

    # --- Quinn asks; alice answers in the card --------------------------------------------
    alice.get_by_test_id("ask-Quinn").click()
    question = alice.get_by_test_id("question").first
    expect(question).to_contain_text("Which part should I start with?")
    question.get_by_label("Answer to Quinn").fill("The venue first")
    question.get_by_role("button", name="Answer").click()
    expect(bob.get_by_test_id("question").first).to_contain_text("Answer from alice")

    # feedback in words, with a visible confirmation for a comment
    feedback = alice.get_by_test_id("feedback").first
    feedback.get_by_role("button", name="Helpful", exact=True).click()
    feedback = alice.get_by_test_id("feedback").first
    feedback.get_by_test_id("feedback-comment").fill("Good start")
    feedback.get_by_role("button", name="Save").click()
    expect(alice.get_by_test_id("feedback-saved").first).to_have_text("Comment saved")

    overflow += no_overflow(alice, "the task page (alice)")
    overflow += no_overflow(carol, "the task page (carol, viewer)")

    # --- alice demotes bob with his page open, while he writes: his page turns read-only ---
    bob.get_by_placeholder(re.compile("Write a message")).fill("Can I still write?")
    members = alice.context.new_page()
    watches["alice"].attach(members)
    # From the workspace page, not through the task page's breadcrumb: a click on a page whose
    # editor is still starting has hung at "scrolling into view" in a loaded CI run.
    members.goto(alice.get_by_role("link", name="Acme").get_attribute("href") or "")
    members.get_by_role("link", name="Members").click()
    members.get_by_label("Role of bob").select_option(value="viewer")
    members.locator("tr[data-member=bob]").get_by_role("button", name="Change").click()
    expect(members.locator("tr[data-member=bob] select")).to_have_value("viewer")
    expect(bob.locator("#chat-form")).to_contain_text("viewers cannot post")
    expect(bob.get_by_test_id("role-notice")).to_contain_text("You are now a viewer")
    expect(bob.get_by_test_id("unsent-draft")).to_have_value("Can I still write?")  # kept
    expect(bob.locator(".cm-content")).to_have_attribute("contenteditable", "false")

    # --- the status dropdown follows a change made elsewhere -------------------------------
    alice.get_by_label("Task status").select_option(value="in_progress")
    expect(carol.locator("#task-status")).to_have_text("In progress")

    # --- alice removes bob with his page open: it locks, says why, keeps his draft ---------
    with watches["bob"].allowing("404"):  # his page asks whether it is still his: it is not
        members.once("dialog", lambda dialog: dialog.accept())
        members.locator("tr[data-member=bob]").get_by_role("button", name="Remove").click()
        expect(members.locator("tr[data-member=bob]")).to_have_count(0)
        ended = bob.get_by_test_id("access-ended")
        expect(ended).to_contain_text("You no longer have access to this task")
        expect(ended).to_contain_text("no longer a member of its workspace")
    expect(bob.get_by_test_id("unsent-draft")).to_have_value("Can I still write?")
    expect(bob.locator(".cm-content")).to_have_attribute("contenteditable", "false")
    expect(bob.locator(".cm-content")).to_contain_text("café ☕ 日本")  # still there to copy
    expect(ended.get_by_role("link", name="Back to your workspaces")).to_be_visible()

    # --- an admin reviews ----------------------------------------------------------------
    admin_shell(
        "from django.contrib.auth.models import User\n"
        f"User.objects.create_superuser('root', 'root@example.org', {PASSWORD!r})\n"
    )
    root = person(new_context, watches["root"])
    root.goto("/accounts/login/")
    root.get_by_label("Username").fill("root")
    root.get_by_label("Password").fill(PASSWORD)
    root.get_by_role("button", name="Log in").click()
    with watches["root"].allowing("404"):
        root.goto(task_url)  # not a member: a page that points to Review
        expect(root.get_by_test_id("not-found")).to_contain_text("Review")
    root.goto("/review/")
    overflow += no_overflow(root, "the review home")
    root.locator("#review-workspaces").get_by_role("link", name="Review").first.click()
    expect(root.locator("#task-metrics")).to_contain_text("Plan the offsite")
    overflow += no_overflow(root, "the workspace's review")
    root.goto("/evaluation/")
    overflow += no_overflow(root, "the evaluation page")
    root.goto("/audit/")
    expect(root.locator("#audit-events tbody tr").first).to_be_visible()
    overflow += no_overflow(root, "the audit log")
    root.goto("/models/")
    overflow += no_overflow(root, "the models page")
    root.goto("/review/traces/")
    expect(root.locator("#traces")).to_contain_text("Quinn")
    overflow += no_overflow(root, "the traces page")
    root.goto("/review/traces/?view=turns")
    overflow += no_overflow(root, "the turns page")
    root.goto("/review/usage/")
    overflow += no_overflow(root, "the usage page")
    root.goto(f"/review/tasks/{task_id_of(task_url)}/")
    overflow += no_overflow(root, "the task replay")
    root.goto("/review/traces/")
    root.locator("a[href*='/review/turns/']").first.click()
    overflow += no_overflow(root, "a turn's page")

    problems = [f"{w.who}: {p}" for w in watches.values() for p in w.problems]
    assert problems == [], "\n".join(problems)
    assert overflow == [], "\n".join(overflow)
