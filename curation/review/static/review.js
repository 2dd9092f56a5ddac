/* benchcurate review page: render math with the vendored KaTeX, keyboard shortcuts.
   Item text arrives escaped; math spans hold TeX source as text and KaTeX renders it
   with trust off (no \href, \url or HTML extensions). */
(function () {
  "use strict";

  function renderMath(root) {
    if (!window.katex) { return; }
    root.querySelectorAll("span.math:not([data-rendered])").forEach(function (el) {
      var tex = el.textContent;
      try {
        window.katex.render(tex, el, {
          displayMode: el.getAttribute("data-display") === "1",
          throwOnError: false,
          trust: false,
          strict: "ignore",
          maxSize: 20,
          maxExpand: 500
        });
        el.setAttribute("data-rendered", "1");
        el.title = tex;
      } catch (e) {
        el.textContent = tex; /* keep the legible monospace source */
      }
    });
  }

  function typing(el) {
    return el && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName));
  }

  function press(id, ev) {
    var el = document.getElementById(id);
    if (el && !el.disabled) { ev.preventDefault(); el.click(); }
  }

  function toggleHelp(show) {
    var h = document.getElementById("key-help");
    if (!h) { return; }
    h.hidden = (show === undefined) ? !h.hidden : !show;
  }

  document.addEventListener("click", function (ev) {
    if (ev.target && ev.target.id === "help-button") { toggleHelp(); }
  });

  document.addEventListener("keydown", function (ev) {
    if (ev.ctrlKey || ev.metaKey || ev.altKey || ev.repeat) { return; }
    if (typing(ev.target)) {
      if (ev.key === "Escape") { ev.target.blur(); }
      return;
    }
    switch (ev.key) {
      case "?": ev.preventDefault(); toggleHelp(); break;
      case "Escape": toggleHelp(false); break;
      case "p": press("prev-link", ev); break;
      case "a": press("btn-accept", ev); break;
      case "r": press("btn-reject", ev); break;
      case "n": press("next-link", ev); break;
      case "c": {
        var c = document.getElementById("comment");
        if (c) { ev.preventDefault(); c.focus(); }
        break;
      }
      case "e": {
        var d = document.getElementById("edit");
        if (d) {
          ev.preventDefault();
          d.open = true;
          var q = document.getElementById("edit-question");
          if (q) { q.focus(); }
        }
        break;
      }
      default: break;
    }
  });

  document.addEventListener("DOMContentLoaded", function () { renderMath(document); });
  document.addEventListener("htmx:afterSettle", function () { renderMath(document); });
})();
