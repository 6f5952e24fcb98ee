// The task page follows the reader's role live (templates/tasks/task_detail.html).
//
// When a workspace owner promotes a viewer to editor (or demotes an editor) while the page is
// open, the chat socket sends a new #task-role (collab/realtime/consumers.py). This re-reads
// the page for the new role and swaps in what depends on it: the status control, the chat
// form and the agents pane (Ask, Stop, Accept, Answer, Undo); it switches the document editor
// to editable or read-only and says what changed, in the chat's status line.
(function () {
  "use strict";

  var SWAPPED = [".status-box", "#chat-form", "#agents-panel"];
  var current = null;

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

  // (an out-of-band swap replaces #task-role itself: read it again after any)
  document.addEventListener("htmx:oobAfterSwap", check);
  document.addEventListener("htmx:wsAfterMessage", check);

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", check);
  } else {
    check();
  }
})();
