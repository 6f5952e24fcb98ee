// Replay scrubber: move the range input to show the document as it stood after that event.
(function () {
  "use strict";
  function setUp() {
    var scrubber = document.getElementById("scrubber");
    var data = document.getElementById("replay-versions");
    if (!scrubber || !data) return;
    var versions = JSON.parse(data.textContent);
    var events = document.querySelectorAll("#timeline .event");
    var view = document.getElementById("replay-document");
    var label = document.getElementById("scrubber-label");
    function show(index) {
      var current = events[index];
      if (!current) return;
      var position = parseInt(current.dataset.version, 10);
      view.textContent = position >= 0 ? versions[position] : "";
      label.textContent = current.dataset.at;
      events.forEach(function (event, i) {
        event.classList.toggle("future", i > index);
        event.classList.toggle("current", i === index);
      });
    }
    scrubber.addEventListener("input", function () { show(parseInt(scrubber.value, 10)); });
    events.forEach(function (event) {
      event.addEventListener("click", function () {
        scrubber.value = event.dataset.index;
        show(parseInt(event.dataset.index, 10));
      });
    });
    show(parseInt(scrubber.value, 10));
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", setUp);
  else setUp();
})();
