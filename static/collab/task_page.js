// The task page follows the reader's role live (templates/tasks/task_detail.html).
//
// When a workspace owner promotes a viewer to editor (or demotes an editor) while the page is
// open, the chat socket sends a new #task-role (collab/realtime/consumers.py). This re-reads
// the page for the new role and swaps in what depends on it: the status control, the chat
// form and the agents pane (Ask, Stop, Accept, Answer, Undo); it switches the document editor
// to editable or read-only and says what changed, in the chat's status line.
//
// When the access ends with the page open (removed from the workspace, signed out, the account
// deactivated), the chat socket closes with 4403 and chat.js says "collab:accessEnded": the
// page locks itself (nothing typed here would reach anyone), says why, keeps what the person
// typed for them to copy, and offers the way back to their workspaces.
//
// It also shows decided suggestions as one line each until "Show decided" is pressed.
(function () {
  "use strict";

  var SWAPPED = [".status-box", "#chat-form", "#agents-panel"];
  var current = null;
  var locked = false; // the access ended: nothing is swapped in any more

  function roleEl() {
    return document.getElementById("task-role");
  }

  function say(text) {
    var notice = document.getElementById("chat-notice");
    if (!notice) return;
    var p = document.createElement("p");
    p.className = "small notice";
    p.dataset.testid = "role-notice";
    p.textContent = text;
    notice.replaceChildren(p);
  }

  function setEditor(canEdit, fresh) {
    var root = document.querySelector("[data-collab-editor]");
    if (!root) return;
    if (root.collabEditor && root.collabEditor.setReadOnly) root.collabEditor.setReadOnly(!canEdit);
    // The viewer's note above the document comes and goes with the role.
    var note = root.querySelector("[data-testid=readonly-note]");
    var freshNote = fresh && fresh.querySelector("[data-collab-editor] [data-testid=readonly-note]");
    if (note && !freshNote) note.remove();
    if (!note && freshNote) {
      var body = root.querySelector(".doc-body");
      if (body) body.before(freshNote);
    }
  }

  // This page as the server renders it now, parsed.
  function readPage() {
    return fetch(window.location.pathname, {
      credentials: "same-origin", headers: { Accept: "text/html" },
    })
      .then(function (response) {
        if (!response.ok) throw new Error(String(response.status));
        return response.text();
      })
      .then(function (html) { return new DOMParser().parseFromString(html, "text/html"); });
  }

  // Put the fresh copy of each part in place of the shown one (unless keep(shown) says not).
  function swapIn(fresh, selectors, keep) {
    selectors.forEach(function (selector) {
      var old = document.querySelector(selector);
      var replacement = fresh.querySelector(selector);
      if (!old || !replacement || (keep && keep(old))) return;
      old.replaceWith(replacement);
      if (window.htmx) window.htmx.process(replacement);
    });
  }

  function refresh(canEdit) {
    readPage()
      .then(function (fresh) {
        if (locked) return;
        var box = document.querySelector("#chat-form textarea");
        var draft = box ? box.value : "";
        swapIn(fresh, SWAPPED);
        // A message being written when the role was taken away is kept, to copy elsewhere.
        var form = document.getElementById("chat-form");
        var newBox = form && form.querySelector("textarea");
        if (draft.trim() && newBox && !newBox.value) newBox.value = draft;
        if (draft.trim() && form && !newBox) {
          var kept = document.createElement("textarea");
          kept.readOnly = true;
          kept.rows = 2;
          kept.value = draft;
          kept.dataset.testid = "unsent-draft";
          kept.setAttribute("aria-label", "Your message, not sent");
          form.append(" Your message was not sent; here it is to copy:", kept);
        }
        var errors = document.getElementById("chat-errors");
        if (errors && canEdit) errors.replaceChildren();
        setEditor(canEdit, fresh);
        syncDecidedToggle();
        say(canEdit
          ? "You can now edit this task: the document, the chat and the agents are yours to use."
          : "You are now a viewer of this task: you can read along but not edit or post.");
        document.dispatchEvent(new CustomEvent("collab:roleChanged", { detail: { canEdit: canEdit } }));
      })
      .catch(function () {
        say("Your role on this task changed: reload the page to see what you can do now.");
      });
  }

  // After the chat socket was away (network lost, server restarted), the agent events and
  // status changes published meanwhile never reached this page: read the page again and put in
  // the parts they update. A part holding what the person is typing is left as it is.
  var CAUGHT_UP = [".status-box", "#agent-cards", "#agent-questions", "#agent-suggestions",
    "#agent-edits", "#agent-notes"];

  function typingIn(el) {
    var active = document.activeElement;
    return !!(active && el.contains(active) && active.value);
  }

  // Live messages since the page was last read: a read that a message overtook is read again
  // (its copy may be older than what the message put in).
  var received = 0;
  document.addEventListener("htmx:wsAfterMessage", function () { received += 1; });

  function catchUp(attempt) {
    attempt = typeof attempt === "number" ? attempt : 0;
    var seen = received;
    readPage()
      .then(function (fresh) {
        if (locked) return;
        if (received !== seen && attempt < 3) return catchUp(attempt + 1);
        swapIn(fresh, CAUGHT_UP, typingIn);
        document.dispatchEvent(new CustomEvent("collab:caughtUp"));
      })
      .catch(function () {}); // the chat's own status line says the connection is back or not
  }

  document.addEventListener("collab:reconnected", function () { catchUp(0); });

  function check() {
    var el = roleEl();
    if (!el) return;
    var role = el.dataset.role;
    if (current === null) {
      current = role;
      return;
    }
    if (role === current) return;
    current = role;
    refresh(el.dataset.canEdit === "true");
  }

  // The chat socket's URL carries the role this page shows (?role=, docs/protocol.md), so
  // that a change made while the socket was away is sent at once on reconnect. The htmx ws
  // extension keeps the URL it first read: rewrite it with the role shown now at every
  // (re)connect, for a page that already followed a change live.
  if (window.htmx && htmx.createWebSocket) {
    var createWebSocket = htmx.createWebSocket;
    htmx.createWebSocket = function (url) {
      var el = roleEl();
      if (el && el.dataset.role && /[?&]role=/.test(url)) {
        url = url.replace(/([?&]role=)[^&]*/, "$1" + encodeURIComponent(el.dataset.role));
      }
      return createWebSocket(url);
    };
  }

  // --- The access ended with the page open ----------------------------------------------

  var BUTTONS_KEPT = "[data-toggle-decided], [data-mode]"; // reading, not acting

  // Buttons and choices stop working; boxes with text become read-only (still there to copy).
  function freeze(root) {
    if (!root) return;
    root.querySelectorAll("button, input, select, textarea").forEach(function (el) {
      if (el.matches(BUTTONS_KEPT)) return;
      if (el.tagName === "TEXTAREA" || (el.tagName === "INPUT" && el.type === "text")) {
        el.readOnly = true;
      } else {
        el.disabled = true;
      }
    });
  }

  // The chat form gives way to a line that says so, with the unsent message in a box to copy.
  function closeChatForm() {
    var form = document.getElementById("chat-form");
    if (!form || form.querySelector("[data-testid=unsent-draft]")) {
      freeze(form);
      return;
    }
    var box = form.querySelector("textarea");
    var draft = box ? box.value : "";
    var closed = document.createElement("div");
    closed.id = "chat-form";
    closed.className = "chat-form chat-closed";
    var line = document.createElement("p");
    line.className = "muted";
    line.textContent = "You can no longer post in this chat.";
    closed.append(line);
    if (draft.trim()) {
      line.textContent = "You can no longer post in this chat. Your message was not sent; here it is to copy:";
      var kept = document.createElement("textarea");
      kept.readOnly = true;
      kept.rows = 3;
      kept.value = draft;
      kept.dataset.testid = "unsent-draft";
      kept.setAttribute("aria-label", "Your message, not sent");
      closed.append(kept);
    }
    form.replaceWith(closed);
  }

  function lockEditor() {
    var root = document.querySelector("[data-collab-editor]");
    var editor = root && root.collabEditor;
    if (!editor) return;
    if (editor.provider) editor.provider.disconnect(); // no reconnecting to a refused socket
    if (editor.setReadOnly) editor.setReadOnly(true);
    if (editor.setStatus) editor.setStatus("closed", "your access ended");
    root.dataset.locked = "true";
  }

  function link(href, text) {
    var a = document.createElement("a");
    a.href = href;
    a.textContent = text;
    return a;
  }

  // The banner above the panes. ``why`` is what the server says now (see explain()).
  function banner(why) {
    var chat = document.getElementById("chat");
    var data = chat ? chat.dataset : {};
    var box = document.querySelector("[data-testid=access-ended]");
    if (!box) {
      box = document.createElement("div");
      box.className = "notice access-ended";
      box.setAttribute("role", "alert");
      box.dataset.testid = "access-ended";
      var grid = document.querySelector(".task-grid");
      if (grid) grid.before(box);
      else document.body.prepend(box);
    }
    var head = document.createElement("p");
    var strong = document.createElement("strong");
    strong.textContent = "You no longer have access to this task.";
    head.append(strong, " ");
    if (why === "signed-out") {
      head.append("You were signed out (this session ended, or the account was switched off).");
    } else if (why === "removed") {
      head.append("You are no longer a member of its workspace.");
    }
    var kept = document.createElement("p");
    kept.textContent = "Nothing you type here is saved or sent any more. What you typed is still on " +
      "this page for you to copy: the document as your page has it, and your unsent message.";
    var ways = document.createElement("p");
    if (why === "signed-out") {
      ways.append(link(data.loginUrl || "/", "Log in again"), " · ");
    }
    ways.append(link(data.workspacesUrl || "/", "Back to your workspaces"));
    box.replaceChildren(head, kept, ways);
  }

  // Why: the task page answers 404 (removed, or left) or sends to the login page (signed out,
  // the account deactivated).
  function explain() {
    var chat = document.getElementById("chat");
    var login = (chat && chat.dataset.loginUrl || "/accounts/login/").split("?")[0];
    fetch(window.location.pathname, { credentials: "same-origin", headers: { Accept: "text/html" } })
      .then(function (response) {
        var url = new URL(response.url, window.location.href);
        if (response.redirected && url.pathname === login) {
          banner("signed-out");
          var badge = document.getElementById("chat-connection");
          if (badge) badge.textContent = "signed out";
        } else if (response.status === 404 || response.status === 403) {
          banner("removed");
        }
      })
      .catch(function () {}); // offline: the banner says what is known
  }

  function lock() {
    if (locked) return;
    locked = true;
    lockEditor();
    closeChatForm();
    freeze(document.querySelector(".status-box"));
    freeze(document.getElementById("agents-panel"));
    say("Your access to this task ended: this page is no longer live.");
    banner(null);
    explain();
    document.body.dataset.accessEnded = "true";
  }

  document.addEventListener("collab:accessEnded", lock);

  // --- Decided suggestions: one line each, all of them shown with "Show decided" ----------

  function syncDecidedToggle() {
    var pane = document.getElementById("agents");
    if (!pane) return;
    var shown = pane.classList.contains("show-decided");
    var count = pane.querySelectorAll("#agent-suggestions .suggestion-card.is-decided").length;
    pane.querySelectorAll("[data-toggle-decided]").forEach(function (button) {
      button.setAttribute("aria-pressed", String(shown));
      button.textContent = (shown ? "Hide decided" : "Show decided") + " (" + count + ")";
    });
  }

  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("[data-toggle-decided]");
    if (!button) return;
    var pane = document.getElementById("agents");
    if (pane) pane.classList.toggle("show-decided");
    syncDecidedToggle();
  });
  // (a card decided elsewhere arrives over the chat socket, swapped in out of band)
  document.addEventListener("htmx:oobAfterSwap", syncDecidedToggle);
  document.addEventListener("htmx:wsAfterMessage", syncDecidedToggle);
  document.addEventListener("collab:caughtUp", syncDecidedToggle);

  // (an out-of-band swap replaces #task-role itself: read it again after any)
  document.addEventListener("htmx:oobAfterSwap", check);
  document.addEventListener("htmx:wsAfterMessage", check);

  function start() {
    check();
    syncDecidedToggle();
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
