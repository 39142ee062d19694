// mcpc ui: the one thing a form cannot do, ask before a destructive
// submit (a button with data-confirm). Served as a file: the page's
// Content-Security-Policy allows no inline script.
"use strict";
document.addEventListener("click", function (ev) {
  var b = ev.target.closest("button[data-confirm]");
  if (b && !window.confirm(b.getAttribute("data-confirm"))) {
    ev.preventDefault();
  }
});
