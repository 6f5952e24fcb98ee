// The chat pane of a task page (templates/tasks/task_detail.html).
//
// The htmx ws extension owns the socket and swaps the fragments the server sends. This file
// adds what it lacks: the connection state in #chat-connection; a reconnect after the normal
// closes that htmx does not retry (Daphne ends sockets after its websocket timeout, servers
// going down for a restart send 1001); a resync of the messages missed while disconnected;
// scrolling; local times; Enter to send. See docs/protocol.md for the close codes.
//
// A final close (4403: no longer a member, ...) ends the socket for good: nothing reconnects
// it, and when it means the access ended the page locks itself (task_page.js). Any other close may hide one: the server refuses the handshake of someone who lost
// access (the browser sees 1006, like a dropped network), and a close frame can be lost. So
// after every other close the page asks for itself: a task page that answers 404 or 403 means
// the access ended, and the pane says "no longer a member" instead of reconnecting for ever.
(function () {
  "use strict";

  var LABELS = {
    connecting: "connecting…",
    live: "live",
    reconnecting: "reconnecting…",
    closed: "disconnected",
    offline: "offline",
  };
  // htmx reconnects by itself after these (abnormal closure, server error, restart, try later).
  var HTMX_RETRIES = [1006, 1011, 1012, 1013];
  // Ours: refused or no longer a member (4403, 4404), a bad frame (4400, 4413). Final.
  var FINAL = { 4400: "disconnected", 4403: "no longer a member", 4404: "no access", 4413: "disconnected" };
  // Of those, the ones that mean this person's access to the task ended: the page locks
  // itself (static/collab/task_page.js listens for "collab:accessEnded").
  var ACCESS_ENDED = [4403, 4404];

  var opened = false;
  var retries = 0;
  var ended = false; // a final close: no reconnecting, whoever asks (htmx, "online", us)

  function pane() {
    return document.getElementById("chat");
  }

  function show(state, label) {
    var el = document.getElementById("chat-connection");
    if (!el) return;
    el.dataset.state = state;
    el.textContent = label || LABELS[state];
  }

  function scroller() {
    return document.getElementById("messages-scroll");
  }

  function nearBottom() {
    var box = scroller();
    return !box || box.scrollHeight - box.scrollTop - box.clientHeight < 80;
  }

  function scrollToBottom() {
    var box = scroller();
    if (box) box.scrollTop = box.scrollHeight;
  }

  function messageId(li) {
    return parseInt((li.id || "").replace("message-", ""), 10) || 0;
  }

  function lastMessageId() {
    var items = document.querySelectorAll("#messages > li.message[id^='message-']");
    var last = 0;
    items.forEach(function (li) {
      last = Math.max(last, messageId(li));
    });
    return last;
  }

  // A message can arrive twice (resync racing the socket) or out of order: keep one of each,
  // sorted by id.
  function tidy() {
    var list = document.getElementById("messages");
    if (!list) return;
    var seen = {};
    var items = Array.prototype.slice.call(list.querySelectorAll(":scope > li.message[id^='message-']"));
    var sorted = true;
    var previous = 0;
    items.forEach(function (li) {
      if (seen[li.id]) {
        li.remove();
        return;
      }
      seen[li.id] = true;
      if (messageId(li) < previous) sorted = false;
      previous = messageId(li);
    });
    if (!sorted) {
      items
        .filter(function (li) { return li.isConnected; })
        .sort(function (a, b) { return messageId(a) - messageId(b); })
        .forEach(function (li) { list.appendChild(li); });
    }
    localTimes(list);
  }

  // In the time zone the person chose in Settings (<body data-time-zone>), else the browser's.
  function zoned(options) {
    var zone = document.body && document.body.dataset.timeZone;
    if (zone) options.timeZone = zone;
    return options;
  }

  function localTimes(root) {
    root.querySelectorAll("li.message time[datetime]:not([data-local])").forEach(function (el) {
      var when = new Date(el.getAttribute("datetime"));
      if (isNaN(when)) return;
      el.dataset.local = "1";
      try {
        el.title = when.toLocaleString([], zoned({ timeZoneName: "short" }));
        el.textContent = when.toLocaleTimeString([], zoned({ hour: "2-digit", minute: "2-digit" }));
      } catch (e) { // a zone this browser does not know
        el.title = when.toLocaleString();
        el.textContent = when.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
      }
    });
  }

  function resync() {
    var el = pane();
    var after = lastMessageId();
    if (!el || !window.htmx) return;
    var url = el.dataset.newerUrl + "?after=" + after;
    htmx.ajax("GET", url, { target: "#messages", swap: "beforeend" }).then(function () {
      tidy();
      scrollToBottom();
    });
  }

  // The ws extension's own socket wrapper (in htmx's data of the pane): its retry timers call
  // its init, which is made a no-op once the socket has ended for good.
  function wrapper() {
    var el = pane();
    return el && el["htmx-internal-data"] && el["htmx-internal-data"].webSocket;
  }

  function end(label, accessEnded) {
    ended = true;
    show("closed", label);
    var socket = wrapper();
    if (socket) {
      socket.init = function () {};
      if (socket.socket && socket.socket.readyState <= 1) socket.socket.close();
    }
    if (accessEnded) document.dispatchEvent(new CustomEvent("collab:accessEnded"));
  }

  // After a close that is not final: is this page still ours? (404 or 403: the access ended.)
  // A network error or any other answer leaves the reconnecting to htmx and to us.
  function checkAccess() {
    if (!window.fetch) return;
    fetch(window.location.pathname, { credentials: "same-origin", headers: { Accept: "text/html" } })
      .then(function (response) {
        if (!ended && (response.status === 404 || response.status === 403)) {
          end(FINAL[4403], true);
        }
      })
      .catch(function () {});
  }

  var stick = true;

  document.addEventListener("htmx:wsConnecting", function () {
    if (ended) return;
    show(opened ? "reconnecting" : "connecting");
  });

  document.addEventListener("htmx:wsOpen", function () {
    if (ended) return;
    retries = 0;
    if (opened) {
      resync();
      // What else changed while the socket was away (agent cards, questions, the status):
      // task_page.js reads the page again.
      document.dispatchEvent(new CustomEvent("collab:reconnected"));
    }
    opened = true;
    show("live");
  });

  document.addEventListener("htmx:wsClose", function (event) {
    var code = event.detail.event.code;
    var socket = event.detail.socketWrapper;
    var elt = event.detail.elt || event.target;
    if (ended) return;
    // A socket this page already replaced (a reconnect closes the one it replaces, with 1005):
    // its close says nothing about the connection, and reconnecting for it would close the
    // new socket in turn, and so on, a socket a second for as long as the page is open.
    var current = wrapper();
    var closed = event.detail.event.target;
    if (current && current.socket && closed && closed !== current.socket) return;
    if (FINAL[code]) {
      end(FINAL[code], ACCESS_ENDED.indexOf(code) >= 0);
      return;
    }
    if (!document.body.contains(elt)) return;
    show("reconnecting");
    if (opened) checkAccess();
    if (HTMX_RETRIES.indexOf(code) >= 0) return;
    // A normal close from the server (1000, 1001, 1005), or 4503 (its Redis is away: try again
    // later): come back, with a growing pause.
    var delay = Math.min(30000, 1000 * Math.pow(2, retries)) * (0.5 + Math.random() / 2);
    retries += 1;
    setTimeout(function () {
      if (!ended && document.body.contains(elt) && socket && socket.reconnect) socket.reconnect();
    }, delay);
  });

  document.addEventListener("htmx:wsBeforeMessage", function () {
    stick = nearBottom();
  });

  document.addEventListener("htmx:wsAfterMessage", function () {
    tidy();
    if (stick) scrollToBottom();
  });

  document.addEventListener("htmx:afterSwap", function (event) {
    var target = event.detail.target;
    if (target && target.id === "chat-form") {
      var box = document.querySelector("#chat-form textarea");
      if (box) box.focus();
    }
    var list = document.getElementById("messages");
    if (list) localTimes(list);
  });

  // A refused post (403: no longer an editor; 429; 5xx) leaves the text in the box and says
  // why under it. htmx swaps only 2xx answers by itself.
  document.addEventListener("htmx:responseError", function (event) {
    var elt = event.detail.elt;
    if (!elt || !elt.closest || !elt.closest("#chat-form")) return;
    var xhr = event.detail.xhr;
    var errors = document.getElementById("chat-errors");
    if (!errors) return;
    var html = xhr && xhr.responseText && /id="chat-errors"/.test(xhr.responseText) ? xhr.responseText : null;
    if (html) {
      var holder = document.createElement("div");
      holder.innerHTML = html; // rendered and escaped by the server (tasks/_chat_error.html)
      var fresh = holder.querySelector("#chat-errors");
      errors.replaceChildren.apply(errors, Array.prototype.slice.call(fresh.childNodes));
    } else {
      var p = document.createElement("p");
      p.className = "error";
      p.textContent = "Your message was not sent (" + (xhr ? xhr.status : "no answer") + "). Try again.";
      errors.replaceChildren(p);
    }
    if (xhr && xhr.status === 403) {
      var button = document.querySelector("#chat-form button[type=submit]");
      if (button) button.disabled = true;
    }
  });

  document.addEventListener("htmx:sendError", function (event) {
    var elt = event.detail.elt;
    if (!elt || !elt.closest || !elt.closest("#chat-form")) return;
    var errors = document.getElementById("chat-errors");
    if (!errors) return;
    var p = document.createElement("p");
    p.className = "error";
    p.textContent = "You are offline: your message was not sent. It is still in the box.";
    errors.replaceChildren(p);
  });

  // A successful post clears an earlier error.
  document.addEventListener("htmx:afterRequest", function (event) {
    var elt = event.detail.elt;
    if (!event.detail.successful || !elt || !elt.closest || !elt.closest("#chat-form")) return;
    var errors = document.getElementById("chat-errors");
    if (errors) errors.replaceChildren();
  });

  // The browser knows the network is gone before the socket does (it only notices after a
  // timeout): say "offline" at once, and reconnect as soon as the network is back.
  window.addEventListener("offline", function () {
    if (ended) return;
    show("offline", "offline");
  });
  window.addEventListener("online", function () {
    if (ended) return;
    show("reconnecting");
    // A socket that looked open through the outage may be dead: open a fresh one (the ws
    // extension's wrapper, in htmx's data of the pane); wsOpen then fetches what was missed.
    var current = wrapper();
    if (current && current.init) current.init();
  });

  document.addEventListener("keydown", function (event) {
    var box = event.target;
    if (event.key !== "Enter" || event.shiftKey || event.isComposing) return;
    if (!box.matches || !box.matches("#chat-form textarea")) return;
    event.preventDefault();
    if (box.value.trim()) box.form.requestSubmit();
  });

  function start() {
    var list = document.getElementById("messages");
    if (list) localTimes(list);
    scrollToBottom();
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
