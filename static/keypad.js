/* The dealer's keypad (/operator/keypad): polls the operator's view of the chosen table, and posts each tap as one
   action of the operator page's (a new shoe and an undo after a second tap). The session cookie and the CSRF token
   authenticate; each action carries the seq the server issued and signed. The service judges everything: the page
   shows what it answers, in its words, and the betting window as the table's state has it (page.js bets). */
"use strict";

(() => {
  const data = JSON.parse(document.getElementById("keypad-data").textContent);
  const S = data.strings;
  const body = document.body;
  const POLL_MS = 1000, CONFIRM_MS = 4000;
  let current = null;   // the table on show
  let detail = null;    // its last operator view: {table, rounds, next: {seq, sig}, undo, now}
  let live = false;     // the last poll was answered
  let offset = 0;       // the server's clock minus this one, in seconds (from the poll's `now`)
  let seconds = data.seconds;
  let lane = "player";
  const composed = { player: [], banker: [] };
  let rank = null;
  let armed = null;     // the button waiting for its second tap, and its timer
  let retry = null;     // the last post that was not confirmed: sent again with the same seq
  let pollTimer = null, tickTimer = null;

  const $ = (id) => document.getElementById(id);
  // The page's own words have {name} placeholders (operator.html's form); the boards' strings (Page) have %(name)s.
  const fmt = (template, values) => template.replace(/\{(\w+)\}/g, (m, k) => (k in values && values[k] !== null ? String(values[k]) : m));

  /* -- the table ---------------------------------------------------------------------------------------------- */

  function tabs() { return Array.from(document.querySelectorAll(".op-tab")); }

  function choose(tableId) {
    current = tableId; detail = null; retry = null;
    body.dataset.table = tableId;
    for (const tab of tabs()) tab.setAttribute("aria-pressed", String(tab.dataset.table === tableId));
    $("desk").hidden = false;
    const may = data.may[tableId] || [];
    const deals = may.includes("deal");
    for (const b of document.querySelectorAll(".kp [data-action], .kp-win, .kp-rank, .kp-suit, #k-clear")) b.disabled = !deals;
    $("k-read-only").hidden = deals;
    $("k-read-only").textContent = deals ? "" : S.read_only;
    say("");
    clearComposed();
    poll();
  }

  async function poll() {
    window.clearTimeout(pollTimer);
    const tableId = current;
    try {
      const r = await fetch(data.urls.table + encodeURIComponent(tableId), {
        headers: { Accept: "application/json" }, cache: "no-store", credentials: "same-origin",
      });
      if (r.status === 401) { signedOut(); return; }
      if (!r.ok) throw new Error(String(r.status));
      const reply = await r.json();
      if (tableId !== current) return;
      offset = reply.now - Date.now() / 1000;
      detail = reply;
      connection(true);
      render();
    } catch (e) {
      connection(false);
    }
    pollTimer = window.setTimeout(poll, POLL_MS);
  }

  function signedOut() {
    say(S.codes.signed_out, "refused");
    window.setTimeout(() => window.location.reload(), 1500);
  }

  function connection(on) {
    live = on;
    $("stale").hidden = on;
    $("stale").textContent = on ? "" : S.lost;
    body.classList.toggle("offline", !on);
    renderAnnounce();
  }

  function now() { return Date.now() / 1000 + offset; }

  /* "Place your bets · 12" / "No more bets" while the state announces it (on the server's clock), else the phase;
     "connection lost" when the page cannot tell. */
  function renderAnnounce() {
    const box = $("k-announce");
    window.clearTimeout(tickTimer);
    if (!detail) { box.textContent = ""; return; }
    const t = detail.table;
    if (!live) {
      box.textContent = S.lost; box.className = "phase kp-announce lost"; body.dataset.bets = "";
      return;
    }
    const bets = announce(t);
    box.textContent = bets ? bets.text : S.phase[t.phase] || t.phase;
    box.className = `phase kp-announce ${bets ? bets.cls : t.phase}`;
    body.dataset.bets = bets ? bets.cls : "";
    if (bets && bets.left) tickTimer = window.setTimeout(renderAnnounce, 1000 - ((now() * 1000) % 1000) + 20);
  }

  function announce(t) {
    // page.js bets, on this page's offset to the server's clock (the poll's `now`), not the page's render time.
    const b = t.bets;
    if (!b || !b.announce || (t.status && t.status !== "open")) return null;
    if (b.announce === "place_your_bets") {
      if (b.closes_at === null) return { text: Page.strings.window.place_your_bets, cls: "bets-open", left: null };
      // Never more than the window's own seconds: this clock may run a little behind the server's.
      const left = Math.min(b.seconds || Infinity, Math.ceil(b.closes_at - now()));
      if (left > 0) return { text: Page.fmt(Page.strings.window.count, { seconds: left }), cls: "bets-open", left };
    }
    return { text: Page.strings.window.no_more_bets, cls: "no-more-bets", left: 0 };
  }

  function render() {
    const t = detail.table;
    $("k-name").textContent = t.name || t.table;
    body.dataset.version = t.version;
    renderAnnounce();
    Page.text("k-round", fmt(S.round, { round: t.round }));
    Page.text("k-shoe", t.shoe ? fmt(S.shoe, { number: t.shoe.number, left: t.shoe.cards_left }) : S.no_shoe);
    const last = t.last_result;
    Page.text("k-last", last ? fmt(S.last, { round: last.round, winner: S.winner[last.winner] || last.winner }) : "");
    for (const [hand, key] of [["p", "player"], ["b", "banker"]]) {
      Page.text(`k-${hand}-cards`, t.deal[key].map((c) => (c ? Page.card(c) : "?")).join(" "));
      const points = t.deal[`${key}_points`];
      Page.text(`k-${hand}-points`, points === null || points === undefined ? "" : String(points));
    }
    $("k-squeeze").hidden = !(t.capabilities && t.capabilities.squeeze);
    const undo = $("k-undo");
    if (armed?.button !== undo) {
      undo.textContent = detail.undo ? fmt(S.undo, { round: detail.undo }) : S.nothing_to_undo;
      undo.disabled = !detail.undo || !(data.may[current] || []).includes("deal");
    }
  }

  /* -- saying what happened ------------------------------------------------------------------------------------ */

  function say(text, kind = "") {
    const m = $("k-message");
    m.textContent = text;
    m.className = `kp-message ${kind}`;
  }

  /* -- sending ------------------------------------------------------------------------------------------------- */

  async function send(action, fields, describe) {
    if (!detail || !current) return;
    const attempt = { action, table: current, body: { ...fields, ...detail.next }, describe };
    await post(attempt);
  }

  async function post(attempt) {
    $("k-again").hidden = true;
    say(S.sending);
    const url = `${data.urls.table}${encodeURIComponent(attempt.table)}/${attempt.action}`;
    const { status, reply } = await sendAction("POST", url, attempt.body, data.csrf);
    if (status === 200 && reply) {
      retry = null;
      if (attempt.table === current && detail) {
        detail = { ...detail, table: reply.table, next: reply.next || detail.next };
      }
      const first = reply.results[0];
      say(first.duplicate ? S.already : attempt.describe(reply.table), "done");
      if (attempt.action === "round") clearComposed();
      if (attempt.action === "result") clearResult();
      if (attempt.table === current) { render(); poll(); }
      return;
    }
    if (status === 0 || status >= 500) {
      // Maybe done, maybe not: the same body (the same seq) again is safe, the service never does it twice.
      retry = attempt;
      say(S.unsure, "unsure");
      $("k-again").hidden = false;
      return;
    }
    retry = null;
    if (status === 401) { signedOut(); return; }
    const code = reply && reply.error;
    say((code && S.codes[code]) || fmt(S.refused, { message: reply ? reply.message : String(status) }), "refused");
    poll();
  }

  /* A button that asks for a second tap (a new shoe, an undo): the first arms it for a few seconds. */
  function confirmFirst(button, text, go) {
    if (armed && armed.button === button) {
      window.clearTimeout(armed.timer);
      button.textContent = armed.before;
      armed = null;
      button.classList.remove("armed");
      go();
      return;
    }
    disarm();
    const before = button.textContent;
    button.textContent = text;
    button.classList.add("armed");
    armed = { button, timer: window.setTimeout(disarm, CONFIRM_MS), before };
  }

  function disarm() {
    if (!armed) return;
    window.clearTimeout(armed.timer);
    armed.button.textContent = armed.before;
    armed.button.classList.remove("armed");
    armed = null;
    if (detail) render();
  }

  const winnerName = (t) => (t.last_result ? S.winner[t.last_result.winner] || t.last_result.winner : "");

  /* -- the betting window -------------------------------------------------------------------------------------- */

  function showSeconds() { $("k-seconds").textContent = fmt(S.seconds, { seconds }); }
  for (const b of document.querySelectorAll("[data-step]")) {
    b.addEventListener("click", () => {
      seconds = Math.min(120, Math.max(5, seconds + Number(b.dataset.step)));
      showSeconds();
    });
  }
  $("k-open").addEventListener("click", () => send("bets-open", { seconds }, () => fmt(S.done["bets-open"], { seconds })));
  $("k-close").addEventListener("click", () => send("bets-closed", {}, () => S.done["bets-closed"]));

  /* -- a result ------------------------------------------------------------------------------------------------ */

  function clearResult() {
    for (const id of ["k-pp", "k-bp"]) $(id).setAttribute("aria-pressed", "false");
    $("k-ppts").value = ""; $("k-bpts").value = "";
  }
  for (const id of ["k-pp", "k-bp"]) {
    $(id).addEventListener("click", () => $(id).setAttribute("aria-pressed", String($(id).getAttribute("aria-pressed") !== "true")));
  }
  for (const b of document.querySelectorAll("[data-winner]")) {
    b.addEventListener("click", () => {
      const fields = { winner: b.dataset.winner, player_points: $("k-ppts").value, banker_points: $("k-bpts").value };
      if ($("k-pp").getAttribute("aria-pressed") === "true") fields.player_pair = true;
      if ($("k-bp").getAttribute("aria-pressed") === "true") fields.banker_pair = true;
      send("result", fields, (t) => fmt(S.done.result, { round: t.rounds, winner: winnerName(t) }));
    });
  }

  /* -- a round by its cards ------------------------------------------------------------------------------------ */

  function setLane(name) {
    lane = name;
    for (const b of document.querySelectorAll("[data-lane]")) b.setAttribute("aria-pressed", String(b.dataset.lane === name));
  }

  function showComposed() {
    for (const hand of ["player", "banker"]) Page.text(`k-lane-${hand}`, composed[hand].map(Page.card).join(" "));
    for (const b of document.querySelectorAll("[data-rank]")) b.setAttribute("aria-pressed", String(b.dataset.rank === rank));
  }

  function clearComposed() {
    composed.player = []; composed.banker = []; rank = null;
    setLane("player");
    showComposed();
  }

  for (const b of document.querySelectorAll("[data-lane]")) b.addEventListener("click", () => setLane(b.dataset.lane));
  for (const b of document.querySelectorAll("[data-rank]")) b.addEventListener("click", () => { rank = b.dataset.rank; showComposed(); });
  for (const b of document.querySelectorAll("[data-suit]")) {
    b.addEventListener("click", () => {
      if (!rank) return;
      composed[lane].push(rank + b.dataset.suit);
      rank = null;
      showComposed();
    });
  }
  $("k-clear").addEventListener("click", clearComposed);
  $("k-send").addEventListener("click", () => send("round", { player: composed.player.join(" "), banker: composed.banker.join(" ") },
    (t) => fmt(S.done.round, { round: t.rounds, winner: winnerName(t) })));

  /* -- the shoe, the cut card, squeeze, undo ------------------------------------------------------------------- */

  $("k-new-shoe").addEventListener("click", (e) => confirmFirst(e.currentTarget, S.confirm.shoe, () => send("shoe", {}, () => S.done.shoe)));
  $("k-burn").addEventListener("click", () => {
    const count = $("k-burn-count").value;
    send("burn", { count }, () => fmt(S.done.burn, { count }));
  });
  $("k-cut").addEventListener("click", () => send("cut", {}, () => S.done.cut));
  for (const b of document.querySelectorAll("[data-action=reveal]")) {
    b.addEventListener("click", () => send("reveal", { hand: b.dataset.hand }, () => S.done.reveal));
  }
  $("k-undo").addEventListener("click", (e) => {
    const round = detail && detail.undo;
    if (!round) return;
    confirmFirst(e.currentTarget, fmt(S.confirm.undo, { round }), () => send("undo", { round }, () => fmt(S.done.undo, { round })));
  });
  $("k-again").addEventListener("click", () => { if (retry) post(retry); });

  for (const tab of tabs()) tab.addEventListener("click", () => choose(tab.dataset.table));
  showSeconds();
  const wanted = new URLSearchParams(window.location.search).get("table");
  const first = data.tables.find((t) => t.table === wanted) || data.tables[0];
  if (first) choose(first.table);
})();
