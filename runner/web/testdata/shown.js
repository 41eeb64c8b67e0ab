// Runs assets/static/app.js (argv[2]) in node with a stand-in for the
// Seat page: two told articles still in an inbox, a /act that is out of
// reach for the first post, then answers. It prints, as JSON, the bodies
// of the posts of kind shown, after the page loaded, after a first and
// after a second refresh (app.js files what it showed after each).
"use strict";
const fs = require("fs");
// A browser lets a failed fetch nobody waits on go; so does this page.
process.on("unhandledRejection", function () {});
const vm = require("vm");

const listeners = {};
const posts = [];
let reachable = false;
const articles = [{ dataset: { id: "m1" } }, { dataset: { id: "m2" } }];
const said = { hidden: true, addEventListener: function () {} };
const document = {
  body: { dataset: { csrf: "c", live: "false", next: "0" } },
  visibilityState: "visible",
  hidden: false,
  documentElement: { scrollHeight: 0 },
  getElementById: function (id) { return id === "said" ? said : null; },
  querySelector: function () { return null; },
  querySelectorAll: function (sel) { return sel === "article.told[data-received]" ? articles : []; },
  addEventListener: function (kind, f) { (listeners[kind] = listeners[kind] || []).push(f); },
};
function fetch(url, opts) {
  if (url !== "/act") return Promise.resolve({ ok: true, status: 200, headers: { get: function () { return null; } }, text: function () { return Promise.resolve(""); } });
  const body = new URLSearchParams(opts.body);
  if (body.get("kind") === "shown") posts.push(body.get("ids"));
  if (!reachable) return Promise.reject(new TypeError("Failed to fetch"));
  return Promise.resolve({ ok: true, status: 200, text: function () { return Promise.resolve(""); } });
}
function EventSource() {}
EventSource.prototype.addEventListener = function () {};
const window = { innerHeight: 0, scrollY: 0, scrollTo: function () {}, scrollBy: function () {} };
const context = {
  document, window, fetch, EventSource, URL, URLSearchParams, FormData, crypto,
  location: { href: "http://127.0.0.1:8080/seat" },
  setTimeout, clearTimeout, setInterval: function () {}, requestAnimationFrame: function () {},
};
vm.runInNewContext(fs.readFileSync(process.argv[2], "utf8"), context);

function refresh() { (listeners.visibilitychange || []).forEach(function (f) { f(); }); }
const seen = [];
setTimeout(function () {
  seen.push(posts.slice());
  reachable = true;
  refresh(); // the next refresh, the server back
  setTimeout(function () {
    seen.push(posts.slice());
    refresh(); // and the one after: nothing left to send
    setTimeout(function () {
      seen.push(posts.slice());
      process.stdout.write(JSON.stringify(seen));
    }, 20);
  }, 20);
}, 20);
