// parley serve: live updates (Server-Sent Events), older rows on scroll,
// messages opened in place, forms sent without leaving the page. Every
// piece of HTML inserted here was rendered and escaped by the server.
"use strict";
(function () {
  const body = document.body;
  const csrf = body.dataset.csrf;
  const conn = document.getElementById("conn");
  const said = document.getElementById("said");
  const timeline = document.getElementById("timeline");

  // say shows what the server answered, or why nothing was sent: for 8
  // seconds, or, when it is bad news, until the next or a tap on it (a
  // phone's reader may have looked away).
  function say(text, bad) {
    said.textContent = text;
    said.className = bad ? "said bad" : "said";
    said.title = bad ? "tap to hide" : "";
    said.hidden = false;
    clearTimeout(say.t);
    if (!bad) say.t = setTimeout(function () { said.hidden = true; }, 8000);
  }
  said.addEventListener("click", function () { said.hidden = true; });

  // newKey makes the key of one action the page sends (32 hex digits):
  // crypto.getRandomValues, which a page served over plain http on the
  // local network has too (randomUUID it has not).
  function newKey() {
    const b = new Uint8Array(16);
    crypto.getRandomValues(b);
    return Array.prototype.map.call(b, function (x) { return (x + 256).toString(16).slice(1); }).join("");
  }

  function fragment(html) {
    const t = document.createElement("template");
    t.innerHTML = html;
    return t.content;
  }

  // A row matches the page's filter as the server's filter does.
  function matches(li) {
    if (!timeline) return false;
    const f = timeline.dataset, d = li.dataset;
    if (f.agent && d.from !== f.agent && d.agent !== f.agent && d.to.split(" ").indexOf(f.agent) < 0) return false;
    return (!f.type || d.type === f.type) && (!f.signal || d.signal === f.signal) && (!f.outcome || d.outcome === f.outcome);
  }

  function nearBottom() {
    return window.innerHeight + window.scrollY >= document.body.scrollHeight - 80;
  }

  // showBroken says on the page that parley.yaml does not load now (the
  // X-Parley-Broken header of a refreshed part), or takes that away.
  function showBroken(said) {
    const p = document.getElementById("broken");
    if (!p) return;
    p.textContent = said ? decodeURIComponent(said) : "";
    p.hidden = !said;
  }

  // typed keeps what the person typed in the forms of the live part,
  // each by its article (data-id), form and field, and where the focus
  // and the cursor are: a refresh swaps the part for a new one, and must
  // neither freeze while a box has the focus (new questions never showed,
  // answered ones stayed) nor take what is being typed away.
  function typed(live) {
    const kept = [];
    live.querySelectorAll("article[data-id]").forEach(function (a) {
      a.querySelectorAll("form").forEach(function (f, n) {
        f.querySelectorAll("input:not([type=hidden]), textarea").forEach(function (i) {
          const focus = i === document.activeElement;
          if (!i.value && !focus) return;
          kept.push({ id: a.dataset.id, form: n, name: i.name, value: i.value, focus: focus, start: i.selectionStart, end: i.selectionEnd });
        });
      });
    });
    return kept;
  }

  // retype puts what typed kept back into the new live part: in the same
  // box of the same article, focus and cursor too. An article gone (the
  // question answered elsewhere, or left by a session that ended) takes
  // its box away: what was typed in it is kept on the page (unsent), not
  // lost without a word.
  function retype(live, kept) {
    kept.forEach(function (k) {
      const a = Array.prototype.find.call(live.querySelectorAll("article[data-id]"), function (x) { return x.dataset.id === k.id; });
      const f = a && a.querySelectorAll("form")[k.form];
      const i = f && Array.prototype.find.call(f.querySelectorAll("input:not([type=hidden]), textarea"), function (x) { return x.name === k.name; });
      if (!i) {
        if (k.value) unsent(live, k.id, k.value);
        return;
      }
      i.value = k.value;
      if (k.focus) {
        i.focus();
        try { i.setSelectionRange(k.start, k.end); } catch (e) { /* not a text box */ }
      }
    });
  }

  // unsent keeps on the page, above the live part and until the person
  // dismisses it, what was typed in the box of question id that went
  // away: to copy, or to put in the say box and send in character. It
  // says why the question went: the session ended (the server tells the
  // question as left unanswered, or, not telling it, tells a session's
  // end sent after it), or it was answered elsewhere, or handled.
  function unsent(live, id, text) {
    const told = Array.prototype.find.call(live.querySelectorAll("article.told[data-id]"), function (x) { return x.dataset.id === id; });
    const ended = told ? told.dataset.unanswered === "true" :
      Array.prototype.some.call(live.querySelectorAll("article.told[data-ended=true]"), function (x) { return x.dataset.id > id; });
    const why = ended ? "The session ended before you answered " + id + "." : "No longer waiting (answered elsewhere, or handled): " + id + ".";
    let box = document.getElementById("unsent");
    if (!box) {
      box = document.createElement("section");
      box.id = "unsent";
      box.className = "unsent";
      live.parentNode.insertBefore(box, live);
    }
    const item = document.createElement("div");
    item.className = "unsent-item";
    item.dataset.id = id;
    const p = document.createElement("p");
    p.className = "why";
    p.textContent = why + " What you typed there was not sent: it stays here until you dismiss it.";
    const kept = document.createElement("textarea");
    kept.rows = 3;
    kept.value = text;
    kept.setAttribute("aria-label", "what you typed, not sent");
    const bar = document.createElement("p");
    const sayBox = document.querySelector("form.act input[name=kind][value=say]");
    if (sayBox) {
      const use = document.createElement("button");
      use.type = "button";
      use.textContent = "put it in the say box";
      use.addEventListener("click", function () {
        const i = sayBox.form.querySelector("input[name=text]");
        i.value = kept.value;
        i.focus();
      });
      bar.append(use, " ");
    }
    const dismiss = document.createElement("button");
    dismiss.type = "button";
    dismiss.className = "dismiss";
    dismiss.textContent = "dismiss";
    dismiss.addEventListener("click", function () {
      item.remove();
      if (!box.firstChild) box.remove();
    });
    bar.append(dismiss);
    item.append(p, kept, bar);
    box.append(item);
    say(why + " What you typed there was not sent: it is kept on the page.", true);
  }

  // restory puts back into the new live part the story the page told
  // before (told, the old part's articles): the server sends the unread
  // and the newest filed only (storyShown), so a refresh dropped what
  // the page had shown past those, before the person read it. What the
  // page told stays until a reload; each goes in its place, newest first
  // (a message id sorts as its time).
  function restory(live, told) {
    const story = live.querySelector(".story");
    if (!story) return;
    const now = story.querySelectorAll("article.told[data-id]");
    const have = {};
    now.forEach(function (a) { have[a.dataset.id] = true; });
    const gone = told.filter(function (a) { return !have[a.dataset.id]; });
    if (gone.length === 0) return;
    if (now.length === 0) story.replaceChildren();
    gone.forEach(function (a) {
      const after = Array.prototype.find.call(story.querySelectorAll("article.told[data-id]"), function (x) { return x.dataset.id < a.dataset.id; });
      story.insertBefore(a, after || null);
    });
  }

  let refreshing = null;
  function refreshLive() {
    const live = document.getElementById("live");
    if (!live || body.dataset.live !== "true" || document.hidden) return;
    clearTimeout(refreshing);
    refreshing = setTimeout(function () {
      const u = new URL(location.href);
      u.searchParams.set("part", "live");
      fetch(u, { credentials: "same-origin" }).then(function (r) { showBroken(r.headers.get("X-Parley-Broken")); return r.text(); }, function () { conn.className = "conn off"; }).then(function (html) {
        if (html === undefined) return; // out of reach: the next refresh tries again
        const open = {};
        live.querySelectorAll("details[open] > summary").forEach(function (s) { open[s.textContent] = true; });
        const lanes = live.querySelector(".lanes");
        const kept = lanes && { top: lanes.scrollTop, left: lanes.scrollLeft, bottom: lanes.scrollTop + lanes.clientHeight >= lanes.scrollHeight - 30 };
        const words = typed(live);
        const told = Array.prototype.slice.call(live.querySelectorAll(".story > article.told[data-id]"));
        live.replaceChildren(fragment(html));
        retype(live, words);
        restory(live, told);
        const now = live.querySelector(".lanes");
        if (now && kept) {
          now.scrollLeft = kept.left;
          now.scrollTop = kept.bottom ? now.scrollHeight : kept.top;
        }
        live.querySelectorAll("details > summary").forEach(function (s) { s.parentElement.open = !!open[s.textContent] || s.parentElement.hasAttribute("open"); });
        shown();
      });
    }, 150);
  }

  // shown files what the Seat page told that was still in an inbox, as
  // parley play files what it shows: the ids go to /act (kind shown)
  // once the page is visible, never on the GET that a prefetch, a poll
  // or a tab in the background makes. A post that fails (the server
  // briefly out of reach, or an error) is sent again with the next
  // refresh: its ids count as filed only once the server took them
  // (filing them twice files nothing twice). One refused (403: the page
  // is older than the server, or has no token) is not: a reload mends it.
  const filed = {}; // id -> "sending", then true once the server took it
  function shown() {
    if (document.visibilityState !== "visible") return;
    const ids = [];
    document.querySelectorAll("article.told[data-received]").forEach(function (a) {
      if (!filed[a.dataset.id]) { filed[a.dataset.id] = "sending"; ids.push(a.dataset.id); }
    });
    if (ids.length === 0) return;
    const d = new FormData();
    d.set("kind", "shown");
    d.set("ids", ids.join(" "));
    d.set("key", newKey());
    d.set("csrf", csrf);
    function took(ok) {
      ids.forEach(function (id) { if (ok) filed[id] = true; else delete filed[id]; });
    }
    fetch("/act", { method: "POST", body: new URLSearchParams(d), credentials: "same-origin" }).then(function (r) {
      took(r.ok || r.status === 403);
    }, function () { took(false); });
  }
  document.addEventListener("visibilitychange", shown);

  function listen() {
    const u = new URL("/events", location.href);
    u.searchParams.set("after", body.dataset.next);
    if (!timeline) u.searchParams.set("rows", "0");
    // The filters sent with the rows are the page's own: narrowed the same.
    if (timeline) new URLSearchParams(timeline.dataset.query).forEach(function (v, k) { u.searchParams.set(k, v); });
    const es = new EventSource(u);
    es.onopen = function () { conn.className = "conn on"; };
    es.onerror = function () { conn.className = "conn off"; };
    // Rows come in bursts (a scene played out, a page that was away):
    // they are added once a frame, together, and the page follows them
    // once. Measuring and scrolling for each row made the browser lay the
    // whole timeline out again per row, and a burst of a hundred rows
    // froze a busy machine's page for seconds.
    let pending = null;
    function addRows() {
      const rows = pending;
      pending = null;
      const stick = nearBottom();
      timeline.appendChild(rows);
      if (stick) timeline.lastElementChild.scrollIntoView({ block: "end" });
    }
    es.addEventListener("row", function (ev) {
      const li = fragment(ev.data).firstElementChild;
      // A retried row takes the retry button of what it put back away.
      if (li && li.dataset.settles) {
        const b = document.querySelector("#r" + li.dataset.settles + " button.retry");
        if (b) b.remove();
      }
      if (!li || document.getElementById(li.id) || (pending && pending.getElementById(li.id)) || !matches(li)) return;
      if (!pending) {
        pending = document.createDocumentFragment();
        requestAnimationFrame(addRows);
      }
      pending.appendChild(li);
    });
    // The server sends the filter form again after the rows (event
    // filters): the count follows the journal and the filters offer its
    // new types and agents. The choice the person made in a filter, sent
    // or not yet, stays.
    es.addEventListener("filters", function (ev) {
      const now = document.querySelector("form.filters");
      const next = fragment(ev.data).querySelector("form.filters");
      if (!now || !next) return;
      next.querySelectorAll("select[name]").forEach(function (sel) {
        const old = now.querySelector("select[name=" + sel.name + "]");
        if (!old) return;
        const chosen = old.value;
        if (!Array.prototype.some.call(sel.options, function (o) { return o.value === chosen; })) {
          const o = document.createElement("option");
          o.textContent = chosen;
          sel.appendChild(o);
        }
        old.replaceChildren.apply(old, Array.prototype.slice.call(sel.options));
        old.value = chosen;
      });
      const count = now.querySelector(".count"), told = next.querySelector(".count");
      if (count && told) count.textContent = told.textContent;
    });
    es.addEventListener("tick", function (ev) {
      body.dataset.next = ev.data;
      refreshLive();
    });
  }

  // Older rows load when the top of the timeline comes into view.
  function older() {
    const sentinel = document.getElementById("older");
    if (!sentinel) return;
    let busy = false;
    new IntersectionObserver(function (seen) {
      if (!seen[0].isIntersecting || busy) return;
      const first = +timeline.dataset.first;
      if (first <= 0) { sentinel.remove(); return; }
      busy = true;
      const u = new URL("/rows", location.href);
      u.search = timeline.dataset.query;
      u.searchParams.set("before", first);
      fetch(u, { credentials: "same-origin" }).then(function (r) {
        timeline.dataset.first = r.headers.get("X-First");
        return r.text();
      }).then(function (html) {
        const h = document.documentElement.scrollHeight;
        sentinel.after(fragment(html));
        window.scrollBy(0, document.documentElement.scrollHeight - h);
        if (+timeline.dataset.first <= 0) sentinel.remove();
        busy = false;
      });
    }).observe(sentinel);
  }

  // keys are the keys of the actions sent and not answered yet, by what
  // each sends: the same action sent again (the person taps again after
  // "not sent", or before the answer came) goes with the same key, and
  // the server, which did it once, answers as it did then; the browser
  // sending a post again itself (a connection dropped) sends the same
  // key too. Once answered, the next tap is a new action.
  const keys = {};

  // post sends an action and resolves to whether the server did it;
  // when no answer comes (no connection), it says so: what was typed
  // stays in its box, to send again.
  function post(data) {
    data.delete("csrf");
    data.delete("key");
    const what = new URLSearchParams(data).toString();
    const key = keys[what] || (keys[what] = newKey());
    data.set("key", key);
    data.set("csrf", csrf);
    return fetch("/act", { method: "POST", body: new URLSearchParams(data), credentials: "same-origin" }).then(function (r) {
      return r.text().then(function (t) { delete keys[what]; say(t.trim() || "done", !r.ok); return r.ok; });
    }).catch(function () {
      say("Not sent: no answer from parley serve (is this device online?). What you typed is kept: try again. (Had it arrived, it is not done twice.)", true);
      return false;
    });
  }

  document.addEventListener("click", function (ev) {
    const b = ev.target.closest("button.open, button.retry");
    if (!b) return;
    const li = b.closest("li.row");
    if (b.classList.contains("retry")) {
      const d = new FormData();
      d.set("kind", "retry");
      d.set("n", b.dataset.n);
      post(d).then(function (ok) { if (ok) b.remove(); });
      return;
    }
    const detail = li.querySelector(".detail");
    if (!detail.hidden) { detail.hidden = true; return; }
    fetch("/message?n=" + encodeURIComponent(b.dataset.n), { credentials: "same-origin" }).then(function (r) { return r.text(); }).then(function (html) {
      detail.replaceChildren(fragment(html));
      detail.hidden = false;
    });
  });

  document.addEventListener("submit", function (ev) {
    const form = ev.target.closest("form.act");
    if (!form) return;
    ev.preventDefault();
    const data = new FormData(form, ev.submitter);
    post(data).then(function (ok) {
      if (ok) form.querySelectorAll("input:not([type=hidden]), textarea").forEach(function (i) { i.value = ""; });
      refreshLive();
    });
  });

  listen();
  older();
  shown();
  // Files change without a journal line too (a sheet edited by hand, an
  // agent starting work): a live page looks again every few seconds.
  if (body.dataset.live === "true") setInterval(refreshLive, 3000);
  if (timeline) window.scrollTo(0, document.body.scrollHeight);
  // The lanes open on the newest messages.
  const lanes = document.querySelector(".lanes");
  if (lanes) lanes.scrollTop = lanes.scrollHeight;
})();
