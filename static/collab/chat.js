// The chat pane of a task page (templates/tasks/task_detail.html).
//
// The htmx ws extension owns the socket and swaps the fragments the server sends. This file
// adds what it lacks: the connection state in #chat-connection; a reconnect after the normal
// closes that htmx does not retry (Daphne ends sockets after its websocket timeout, servers
// going down for a restart send 1001); a resync of the messages missed while disconnected;
// scrolling; local times; Enter to send. See docs/protocol.md for the close codes.
(function () {
  "use strict";

  var LABELS = {
    connecting: "connecting…",
    live: "live",
    reconnecting: "reconnecting…",
    closed: "disconnected",
  };
  // htmx reconnects by itself after these (abnormal closure, server error, restart, try later).
  var HTMX_RETRIES = [1006, 1011, 1012, 1013];
  // Ours: refused or no longer a member (4403, 4404), a bad frame (4400, 4413). Final.
  var FINAL = { 4400: "disconnected", 4403: "no longer a member", 4404: "no access", 4413: "disconnected" };

  var opened = false;
  var retries = 0;

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

  function localTimes(root) {
    root.querySelectorAll("li.message time[datetime]:not([data-local])").forEach(function (el) {
      var when = new Date(el.getAttribute("datetime"));
      if (isNaN(when)) return;
      el.dataset.local = "1";
      el.title = when.toLocaleString();
      el.textContent = when.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
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

  var stick = true;

  document.addEventListener("htmx:wsConnecting", function () {
    show(opened ? "reconnecting" : "connecting");
  });

  document.addEventListener("htmx:wsOpen", function () {
    retries = 0;
    if (opened) resync();
    opened = true;
    show("live");
  });

  document.addEventListener("htmx:wsClose", function (event) {
    var code = event.detail.event.code;
    var socket = event.detail.socketWrapper;
    var elt = event.detail.elt || event.target;
    if (FINAL[code]) {
      show("closed", FINAL[code]);
      return;
    }
    if (!document.body.contains(elt)) return;
    show("reconnecting");
    if (HTMX_RETRIES.indexOf(code) >= 0) return;
    // A normal close from the server (1000, 1001, 1005): come back, with a growing pause.
    var delay = Math.min(30000, 1000 * Math.pow(2, retries)) * (0.5 + Math.random() / 2);
    retries += 1;
    setTimeout(function () {
      if (document.body.contains(elt) && socket && socket.reconnect) socket.reconnect();
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
