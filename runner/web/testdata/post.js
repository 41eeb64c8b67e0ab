// Runs assets/static/app.js (argv[2]) in node with a stand-in for the
// Seat page's say form, and a /act out of reach for the first post. It
// submits the form three times: offline, then again once /act answers,
// then the same words once more. It prints, as JSON, the key each post
// carried, what the page said and what the box held after each.
"use strict";
const fs = require("fs");
const vm = require("vm");

const listeners = {};
const keys = [];
let reachable = false;
const said = { hidden: true, textContent: "", addEventListener: function () {} };
const box = { name: "text", value: "Corwin shouts at the archers" };
const form = {
  closest: function (sel) { return sel === "form.act" ? form : null; },
  querySelectorAll: function () { return [box]; },
};
const document = {
  body: { dataset: { csrf: "c", live: "false", next: "0" } },
  visibilityState: "visible",
  hidden: false,
  documentElement: { scrollHeight: 0 },
  getElementById: function (id) { return id === "said" ? said : null; },
  querySelector: function () { return null; },
  querySelectorAll: function () { return []; },
  addEventListener: function (kind, f) { (listeners[kind] = listeners[kind] || []).push(f); },
};
// The form's fields, as the browser's FormData(form) reads them.
class PageFormData extends FormData {
  constructor(f) {
    super();
    if (f === form) {
      this.append("kind", "say");
      this.append("as", "ACTION");
      this.append("text", box.value);
    }
  }
}
function fetch(url, opts) {
  if (url !== "/act") return Promise.resolve({ ok: true, status: 200, headers: { get: function () { return null; } }, text: function () { return Promise.resolve(""); } });
  keys.push(new URLSearchParams(opts.body).get("key"));
  if (!reachable) return Promise.reject(new TypeError("Failed to fetch"));
  return Promise.resolve({ ok: true, status: 200, text: function () { return Promise.resolve("(corwin-voss, action: sent to the game master)\n"); } });
}
function EventSource() {}
EventSource.prototype.addEventListener = function () {};
const window = { innerHeight: 0, scrollY: 0, scrollTo: function () {}, scrollBy: function () {} };
const context = {
  document, window, fetch, EventSource, URL, URLSearchParams, FormData: PageFormData, crypto,
  location: { href: "http://192.168.1.20:7878/seat" },
  setTimeout, clearTimeout, setInterval: function () {}, requestAnimationFrame: function () {},
};
// Without a .catch in the page, the failed post is a rejection nobody
// handles: node would stop on it, a browser logs it and says nothing.
process.on("unhandledRejection", function () {});
vm.runInNewContext(fs.readFileSync(process.argv[2], "utf8"), context);

function submit() {
  (listeners.submit || []).forEach(function (f) { f({ target: form, submitter: null, preventDefault: function () {} }); });
}
const seen = [];
function after(next) {
  setTimeout(function () {
    seen.push({ said: said.textContent, box: box.value });
    next();
  }, 20);
}
submit(); // offline
after(function () {
  reachable = true;
  submit(); // again, the same words: answered
  after(function () {
    box.value = "Corwin shouts at the archers";
    submit(); // the same words, a new action
    after(function () {
      // (The 8-second timer of what the page said would hold node.)
      process.stdout.write(JSON.stringify({ keys: keys, seen: seen }), function () { process.exit(0); });
    });
  });
});
