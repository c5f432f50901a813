/* This page as a screen of the service (floor.md "Screens"): its id (`?screen=`, else one this browser keeps for
   this page's address), the secret this browser keeps for that id, what it shows (the server put it in
   #screen-data), its viewport and the service version it was served by, said over Socket.IO on every connection
   (live.js hands it the page's socket). The server answers with its version, the id and secret this screen is (the
   secret is issued at its first registration; another id when another screen holds the one said: kept from then on
   in its place) and the screen's stored assignment: a server of another version means a reload, an assignment
   other than what the page shows means going there. Then the screen does what it is told: show a page, show its id
   large for a while, reload. */
"use strict";

const ScreenLink = (() => {
  const body = document.body;
  const data = JSON.parse(document.getElementById("screen-data").textContent);
  const VALID = /^[A-Za-z0-9._-]{1,40}$/, SECRET = /^[A-Za-z0-9_-]{16,64}$/;
  const KEY = `scoreboard.screen:${window.location.pathname}`; // the id of a page opened without ?screen=
  const SECRET_OF = (screenId) => `scoreboard.screen.secret:${screenId}`; // the secret of an id
  const INSTEAD_OF = (asked) => `scoreboard.screen.instead:${asked}`; // the id given in place of ?screen=asked
  const RELOADED = "scoreboard.screen.reloaded-for";
  const ANSWER_MS = 10000, AGAIN_MS = 5000;
  const changed = [];

  function made() {
    const bytes = new Uint8Array(6);
    window.crypto.getRandomValues(bytes);
    return `s-${[...bytes].map((b) => b.toString(36).padStart(2, "0").slice(-2)).join("")}`;
  }

  function stored(key) {
    try { return window.localStorage.getItem(key) || ""; } catch (e) { return ""; /* no storage: nothing kept */ }
  }

  function store(key, value) {
    try { window.localStorage.setItem(key, value); } catch (e) { /* kept for this page only */ }
  }

  function kept() {
    let id = stored(KEY);
    if (!VALID.test(id)) {
      id = made();
      store(KEY, id);
    }
    return id;
  }

  const instead = data.id ? stored(INSTEAD_OF(data.id)) : "";
  let id = VALID.test(instead) ? instead : data.id || kept();
  body.dataset.screen = id;

  /* The id and secret the server answered: kept, and the page told when the id is another. */
  function keep(answer) {
    if (VALID.test(answer.id || "") && answer.id !== id) {
      if (data.id) store(INSTEAD_OF(data.id), answer.id);
      else store(KEY, answer.id);
      id = answer.id;
      body.dataset.screen = id;
      for (const fn of changed) fn(id);
    }
    if (SECRET.test(answer.secret || "")) store(SECRET_OF(id), answer.secret);
  }
  const shows = { page: data.page, table: data.table || null, lang: data.lang || null, theme: data.theme || null, options: data.options || {} };

  /* Whether an assignment is what this page shows already. */
  function same(a) {
    const opts = (o) => JSON.stringify(Object.entries(o || {}).map(([k, v]) => [k, String(v)]).sort());
    return a.page === shows.page && (a.table || null) === shows.table && (a.lang || null) === shows.lang
      && (a.theme || null) === shows.theme && opts(a.options) === opts(shows.options);
  }

  /* The address of an assigned page, under the path this service is served at. */
  function address(a) {
    const root = (body.dataset.socketPath || "/socket.io").replace(/\/socket\.io$/, "");
    const path = { board: `/tables/${encodeURIComponent(a.table)}`, overlay: `/overlay/${encodeURIComponent(a.table)}`, pit: "/pit", screen: "/screen" }[a.page];
    const query = new URLSearchParams({ screen: id });
    if (a.lang) query.set("lang", a.lang);
    if (a.theme) query.set("theme", a.theme);
    for (const [k, v] of Object.entries(a.options || {})) query.set(k, v);
    return `${root}${path}?${query}`;
  }

  function show(a) {
    if (!a || !a.page || same(a)) return;
    body.dataset.moving = "1";
    window.location.replace(address(a));
  }

  /* A server of another version: reload once for it (a page it serves carries its version). */
  function upgrade(version) {
    let done = "";
    try { done = window.sessionStorage.getItem(RELOADED) || ""; } catch (e) { /* reload all the same */ }
    if (done === version) return;
    try { window.sessionStorage.setItem(RELOADED, version); } catch (e) { /* nothing kept */ }
    window.location.reload();
  }

  let identifyTimer = null;
  function identify(seconds) {
    let box = document.getElementById("screen-identify");
    if (!box) {
      box = document.createElement("div");
      box.id = "screen-identify"; box.className = "screen-identify"; box.setAttribute("role", "status");
      const label = document.createElement("div"), big = document.createElement("div");
      label.className = "si-label"; label.textContent = Page.strings.screens.screen;
      big.className = "si-id";
      box.append(label, big);
      body.append(box);
    }
    box.querySelector(".si-id").textContent = id;
    box.hidden = false;
    body.dataset.identifying = "1";
    clearTimeout(identifyTimer);
    identifyTimer = setTimeout(() => { box.hidden = true; delete body.dataset.identifying; }, (seconds || 10) * 1000);
  }

  function attach(socket) {
    function hello() {
      const said = { id, shows, viewport: [window.innerWidth, window.innerHeight], version: data.version };
      const secret = stored(SECRET_OF(id));
      if (SECRET.test(secret)) said.secret = secret;
      socket.timeout(ANSWER_MS).emit("screen", said, (err, answer) => {
        if (err) { if (socket.connected) setTimeout(hello, 2000); return; }
        if (!answer) return;
        // Refused as a screen (the address's bound, or the log not answering): the page shows on as it is.
        if (answer.error) { if (answer.error === "log_unavailable" && socket.connected) setTimeout(hello, AGAIN_MS); return; }
        keep(answer);
        if (answer.version && answer.version !== data.version) { upgrade(answer.version); return; }
        show(answer.assigned);
      });
    }
    socket.on("connect", hello);
    socket.on("screen", (m) => {
      if (!m) return;
      if (m.do === "show") show(m.assigned);
      else if (m.do === "identify") identify(m.seconds);
      else if (m.do === "reload") window.location.reload();
    });
  }

  return {
    get id() { return id; },
    shows, attach, identify,
    /* `fn(id)` whenever the server gives this screen another id than the one it said. */
    onChange(fn) { changed.push(fn); },
  };
})();
