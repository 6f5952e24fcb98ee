// Small behaviours every page may use, declared with data attributes instead of inline
// handlers (the Content-Security-Policy allows scripts from this site only: no onclick=, no
// htmx hx-on, no eval). Loaded by templates/base.html.
//
//   <form data-reset-on-success>          reset the form after a successful htmx request
//   <a data-marks-current>                after its htmx request, the one current link of its list
//   <input data-select-on-focus>          select the whole value on focus
//   <button data-copy="#id">              copy that input's value to the clipboard, say "Copied"
//   <form data-confirm="Really?">         ask before submitting
//   <select data-follows="#badge">        keep the value of the badge's data-value (live updates)
(function () {
  "use strict";

  document.addEventListener("htmx:afterRequest", function (event) {
    var elt = event.detail.elt;
    if (!elt || !elt.closest) return;
    var form = elt.closest("form[data-reset-on-success]");
    if (form && event.detail.successful) form.reset();
    if (elt.matches("a[data-marks-current]") && event.detail.successful) {
      var list = elt.closest("ol, ul");
      if (list) {
        list.querySelectorAll("a[aria-current]").forEach(function (a) {
          a.removeAttribute("aria-current");
        });
      }
      elt.setAttribute("aria-current", "true");
    }
  });

  // An htmx action the server refused (400 "that suggestion no longer applies", 403, 429,
  // 5xx) says why next to its form, instead of nothing happening. The chat form has its own
  // (static/collab/chat.js).
  document.addEventListener("htmx:responseError", function (event) {
    var elt = event.detail.elt;
    if (!elt || !elt.closest || elt.closest("#chat-form")) return;
    var form = elt.closest("form") || elt;
    var xhr = event.detail.xhr;
    var type = (xhr && xhr.getResponseHeader("Content-Type")) || "";
    var text = type.indexOf("text/plain") === 0 && xhr.responseText
      ? xhr.responseText.slice(0, 300)
      : "That did not work (" + (xhr ? xhr.status : "no answer") + "). Reload the page and try again.";
    var note = form.nextElementSibling;
    if (!note || !note.matches("[data-role=action-error]")) {
      note = document.createElement("p");
      note.className = "error small";
      note.dataset.role = "action-error";
      note.setAttribute("role", "alert");
      form.after(note);
    }
    note.textContent = text;
  });
  document.addEventListener("htmx:afterRequest", function (event) {
    var elt = event.detail.elt;
    if (!event.detail.successful || !elt || !elt.closest) return;
    var form = elt.closest("form") || elt;
    var note = form.nextElementSibling;
    if (note && note.matches("[data-role=action-error]")) note.remove();
  });

  document.addEventListener("focusin", function (event) {
    var el = event.target;
    if (el && el.matches && el.matches("[data-select-on-focus]")) el.select();
  });

  function say(button, text) {
    var original = button.dataset.label || button.textContent;
    button.dataset.label = original;
    button.textContent = text;
    setTimeout(function () {
      button.textContent = original;
    }, 2000);
  }

  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("button[data-copy]");
    if (!button) return;
    event.preventDefault();
    var source = document.querySelector(button.dataset.copy);
    if (!source) return;
    var text = source.value || source.textContent;
    var copied = function () {
      say(button, "Copied");
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(copied, function () {
        source.select();
        say(button, "Press Ctrl+C to copy");
      });
    } else {
      // Plain HTTP (no Clipboard API): select it and use the legacy copy command.
      source.focus();
      source.select();
      try {
        if (document.execCommand("copy")) {
          copied();
          return;
        }
      } catch (e) {}
      say(button, "Press Ctrl+C to copy");
    }
  });

  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (form && form.dataset && form.dataset.confirm && !window.confirm(form.dataset.confirm)) {
      event.preventDefault();
      event.stopImmediatePropagation();
    }
  }, true);

  function follow() {
    document.querySelectorAll("select[data-follows]").forEach(function (select) {
      var badge = document.querySelector(select.dataset.follows);
      if (badge && badge.dataset.value && select.value !== badge.dataset.value) {
        select.value = badge.dataset.value;
      }
    });
  }

  document.addEventListener("htmx:oobAfterSwap", follow);
  document.addEventListener("htmx:wsAfterMessage", follow);
})();
