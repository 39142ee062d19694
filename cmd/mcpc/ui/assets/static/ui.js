// mcpc ui's script: ask before a destructive submit (a button with
// data-confirm), filter the lists as one types, and keep the cells marked
// data-live current by polling GET /state. Served as a file: the page's
// Content-Security-Policy allows no inline script. Every page works
// without it (the filter is a form, the state is current at each load).
"use strict";
document.addEventListener("click", function (ev) {
  var b = ev.target.closest("button[data-confirm]");
  if (b && !window.confirm(b.getAttribute("data-confirm"))) {
    ev.preventDefault();
  }
});

// filterRows shows the rows of the servers table that the search and the
// show filter keep, as the server does for the form.
function filterRows() {
  var q = document.getElementById("q");
  var show = document.getElementById("show");
  if (!q || !show) return;
  var text = q.value.trim().toLowerCase();
  var shown = 0;
  document.querySelectorAll("#servers tbody tr[data-server]").forEach(function (tr) {
    var keep = text === "" || tr.getAttribute("data-search").indexOf(text) >= 0;
    if (show.value === "enabled") keep = keep && tr.getAttribute("data-enabled") === "true";
    if (show.value === "needs-config") keep = keep && tr.getAttribute("data-needs") === "true";
    if (show.value === "problems") keep = keep && tr.getAttribute("data-problems") === "true";
    tr.hidden = !keep;
    if (keep) shown++;
  });
  var n = document.getElementById("shown");
  if (n) n.textContent = String(shown);
}

function filterTools() {
  var f = document.getElementById("tool-filter");
  if (!f) return;
  var text = f.value.trim().toLowerCase();
  var shown = 0;
  document.querySelectorAll("#tools li.tool").forEach(function (li) {
    var keep = text === "" || li.getAttribute("data-search").toLowerCase().indexOf(text) >= 0;
    li.hidden = !keep;
    if (keep) shown++;
  });
  var n = document.getElementById("tool-count");
  if (n) n.textContent = shown + (shown === 1 ? " tool" : " tools");
}

document.addEventListener("input", function (ev) {
  if (ev.target.id === "q" || ev.target.id === "show") filterRows();
  if (ev.target.id === "tool-filter") filterTools();
});
document.addEventListener("change", function (ev) {
  if (ev.target.id === "show") filterRows();
});

// poll reads GET /state and writes each value into the element whose
// data-live is its key (text only, never markup).
function poll(url) {
  var live = document.getElementById("live");
  fetch(url, { credentials: "same-origin", cache: "no-store" })
    .then(function (r) { return r.json().then(function (j) { return { ok: r.ok, body: j }; }); })
    .then(function (a) {
      if (!a.ok) throw new Error(a.body.error || "error");
      document.querySelectorAll("[data-live]").forEach(function (el) {
        var key = el.getAttribute("data-live");
        if (el === document.body || !(key in a.body)) return;
        if (el.textContent !== a.body[key]) el.textContent = a.body[key];
        var tone = a.body[key + ":tone"];
        if (tone !== undefined) el.className = "tone-" + tone;
      });
      var chats = document.getElementById("chats");
      var note = document.getElementById("new-chats");
      if (chats && note && "chats" in a.body) {
        note.hidden = chats.getAttribute("data-chats") === a.body.chats;
      }
      if (live) { live.textContent = "live · " + new Date().toLocaleTimeString(); live.classList.remove("stale"); }
    })
    .catch(function (e) {
      if (live) { live.textContent = "not live: " + e.message; live.classList.add("stale"); }
    })
    .finally(function () { setTimeout(function () { poll(url); }, 2000); });
}

document.addEventListener("DOMContentLoaded", function () {
  filterRows();
  filterTools();
  var url = document.body.getAttribute("data-live");
  if (url) poll(url);
});
