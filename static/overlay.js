/* The stream overlay: the roads (and panels) asked for in `roads`, live like the board, laid out for the box the
   streaming tool gives it. With `ask`, ASK P, then ASK B, then neither blink for that many seconds each.

   The layout is worked out here, in whole road cells, so the roads' panels hold their grids exactly (no band of
   empty grid over the video): a box is rows (the Big Road; the Bead Road beside the derived roads; the other
   panels), a strip (2.4:1 or wider) is the Big Road over the derived roads, the Bead Road, then the panels side by
   side. The Big Road shows at least 36 columns in a box and 24 in a strip, the Bead Road 15 and 12 (a whole shoe
   and most of one), the derived roads half-size cells; `cols` sets every road's columns instead. */
"use strict";

(() => {
  const body = document.body, ov = document.getElementById("ov");
  const S = Page.strings;
  const look = Page.look();
  // The roads by the names of page options (the server's list, with each road's name in the roads JSON).
  const ROAD_OF = Object.fromEntries(look.roads.map((r) => [r.option, r.road]));
  const asked = body.dataset.roads.split(",");
  const roads = asked.filter((p) => ROAD_OF[p]).map((p) => ROAD_OF[p]);
  const has = (p) => asked.includes(p);
  const derivedRoads = RoadView.roads(look, true);
  const derived = look.roads.filter((r) => derivedRoads.includes(r.road)).map((r) => r.option).filter(has);
  const panels = asked.filter((p) => ["ask", "stats", "cards", "last", "limits"].includes(p));
  const cols = Number(body.dataset.cols) || 0, askSeconds = Number(body.dataset.ask) || 0;
  const SUIT = { S: "♠", H: "♥", D: "♦", C: "♣" };
  let state = null, model = null, connected = false, asking = null, cell = 0;
  const placed = []; // the elements a strip placed in its grid

  function setVar(name, value) { document.documentElement.style.setProperty(name, value); }

  /* The largest cell (up to `most`) for which `height(c)` stays within `room`. */
  function largest(height, room, most) {
    let lo = 1, hi = Math.max(1, most);
    if (height(hi) <= room) return hi;
    for (let i = 0; i < 30; i++) { const mid = (lo + hi) / 2; if (height(mid) <= room) lo = mid; else hi = mid; }
    return lo;
  }

  /* The box: the source's size unless ?width= / ?height= set it; a strip when much wider than high. */
  function layout() {
    const w = Number(body.dataset.width) || window.innerWidth, h = Number(body.dataset.height) || window.innerHeight;
    ov.style.width = `${w}px`; ov.style.height = `${h}px`;
    const strip = w / h >= 2.4;
    ov.classList.toggle("ov-strip", strip);
    ov.classList.toggle("ov-box", !strip);
    const u = (strip ? h : Math.min(h, w * 0.5625)) / 100;
    setVar("--u", `${u}px`);
    setVar("--alpha", String(Math.min(100, Math.max(0, Number(body.dataset.panel ?? 100))) / 100));
    const extras = ["notice", "bets"].filter((id) => !document.getElementById(id).hidden);
    const noticeShown = extras.length > 0;
    ov.classList.toggle("no-panels", !panels.length && !noticeShown);
    const head = document.querySelector(".road header")?.getBoundingClientRect().height || 0;
    const gap = 1.2 * u;
    if (strip) layoutStrip(w, h, head, gap, extras);
    else layoutBox(w, h, u, head, gap, noticeShown);
    // The latest results fill their panel's height, however short the box (a 1280x160 ticker).
    const last = document.getElementById("last");
    if (last) {
      const room = last.clientHeight - 2 * u - (document.querySelector("#last .pays:not([hidden])")?.offsetHeight || 0);
      last.style.setProperty("--disc", `${Math.max(8 * u, Math.min(room, last.clientWidth / 4) * 0.8)}px`);
    }
  }

  function layoutBox(w, h, u, head, gap, noticeShown) {
    const rowsD = derived.length === 3 ? 2 : derived.length ? 1 : 0;
    const rowB = has("bead") || rowsD;
    const rowC = panels.length || noticeShown;
    const rows = [has("big"), rowB, rowC].filter(Boolean).length;
    const height = (c) => (has("big") ? head + 6 * c : 0)
      + (rowB ? Math.max(has("bead") ? head + 6 * c : 0, rowsD ? rowsD * (head + 3 * c) + (rowsD - 1) * gap : 0) : 0)
      + (rowC ? (panels.length ? Math.max(24 * u, 104) : 12 * u) : 0) + (rows - 1) * gap;
    let c = largest(height, h, h);
    // The panels get at least 24% of the box's height (and room for six lines of 12 px text); with panels to show,
    // the roads hold a whole shoe (36 Big Road columns) and give the panels the rest.
    if (cols) c = Math.min(c, w / cols);
    else if (rowC && has("big")) c = Math.min(c, w / 36);
    if (has("bead")) c = Math.min(c, (rowsD ? 0.5 * w : w) / (cols || 15));
    if (!has("big") && !has("bead") && cols) c = Math.min(c, 2 * (w / (rowsD === 2 ? 1 : derived.length)) / cols);
    // Not rounded: the panels take exactly the box; roads.js draws whole-pixel cells inside them.
    cell = Math.max(3, c);
    setVar("--cell", `${cell}px`);
    setVar("--bead-w", rowsD ? `${Math.ceil((cols || 15) * cell) + 1}px` : "100%");
    ov.style.gridTemplateColumns = "";
    for (const el of placed.splice(0)) { el.style.gridColumn = ""; el.style.gridRow = ""; }
  }

  function layoutStrip(w, h, head, gap, extras) {
    const noticeShown = extras.length > 0;
    const block = has("big") || derived.length;
    const blockCols = cols || 24, beadCols = cols || 12;
    const units = (has("big") ? 6 : 0) + (derived.length ? 3 : 0);
    let c = units ? (h - (has("big") ? head : 0) - (derived.length ? head : 0) - (has("big") && derived.length ? gap : 0)) / units : h;
    if (has("bead")) c = Math.min(c, (h - head) / 6);
    // Beside panels the roads take at most 62% of the width, in whole shoes' worth of columns; alone they fill the
    // strip's height (and `cols` still holds).
    const alone = !panels.length && !noticeShown;
    const across = (block ? blockCols : 0) + (has("bead") ? beadCols : 0);
    if (!alone) c = Math.min(c, (0.62 * w - gap) / across);
    else if (cols) c = Math.min(c, (w - (block && has("bead") ? gap : 0)) / across);
    cell = Math.max(3, c);
    setVar("--cell", `${cell}px`);
    const columns = [];
    let n = 0;
    if (block) columns.push(alone ? "minmax(0, 2fr)" : `${Math.ceil(blockCols * cell) + 1}px`);
    if (has("bead")) columns.push(alone ? "minmax(0, 1fr)" : `${Math.ceil(beadCols * cell) + 1}px`);
    const weight = { ask: 1.3, stats: 1.5, cards: 2.4, last: 2, limits: 1.8 };
    for (const p of panels) columns.push(`minmax(0, ${weight[p]}fr)`);
    for (const _ of extras) columns.push("minmax(0, 2fr)");
    ov.style.gridTemplateColumns = columns.join(" ");
    const place = (el, col, row) => { if (el) { el.style.gridColumn = String(col); el.style.gridRow = row; placed.push(el); } };
    if (block) {
      n++;
      place(document.getElementById("road-big"), n, derived.length ? "1" : "1 / -1");
      place(ov.querySelector(".derived"), n, has("big") ? "2" : "1 / -1");
    }
    if (has("bead")) place(document.getElementById("road-bead"), ++n, "1 / -1");
    for (const p of panels) place(document.getElementById(p), ++n, "1 / -1");
    for (const id of extras) place(document.getElementById(id), ++n, "1 / -1");
  }

  const socket = Live.connect((on) => { connected = on && connected; if (!on) showConnection(); });
  Live.table(socket, body.dataset.table, {
    snapshot(snap) { state = snap.state; model = RoadView.fromJSON(snap.roads); connected = true; showConnection(); render(true); },
    update(d) {
      state = d.state;
      if (d.roads) model = RoadView.fromJSON(d.roads);
      else if (d.cells) RoadView.applyRound(model, d);
      render(Boolean(d.roads || d.cells));
    },
    refused(message) { Page.text("veil-message", message); connected = false; showConnection(); },
  });

  function showConnection() {
    body.classList.remove("connecting");
    document.getElementById("veil").hidden = connected;
    renderBets();
  }

  function render(roadsChanged) {
    body.dataset.version = state.version;
    renderCards(); renderNotice(); renderLimits(); renderBets();
    if (roadsChanged) { renderRoads(); renderStats(); renderAsk(); renderLast(); }
    fitPanels();
  }

  function renderRoads() {
    const half = Math.max(1, Math.floor(cell / 2));
    for (const name of roads) {
      const svg = document.querySelector(`[data-road="${name}"] svg`);
      let opts;
      if (cols) opts = { cols };
      else if (name === "big_road") opts = {};
      else if (name === "bead") opts = { minCols: ov.classList.contains("ov-strip") ? 12 : 15 };
      else opts = { cell: half };
      RoadView.draw(svg, name, model, RoadView.askCell(model, name, asking), { look, ...opts });
    }
  }

  function renderStats() {
    for (const k of ["B", "P", "T", "banker_six", "player_pair", "banker_pair"]) Page.text(`stat-${k}`, model.stats[k] || 0);
  }

  function renderAsk() {
    for (const side of ["P", "B"]) {
      const box = document.getElementById(`ask-${side}`);
      if (!box) return;
      RoadView.buttonMarks(box.querySelector("svg"), model.predict[side], look);
      box.classList.toggle("active", asking === side);
    }
  }

  function renderLast() {
    const strip = document.getElementById("recent-strip");
    if (!strip) return;
    strip.replaceChildren(...model.bead.slice(-30).map((c) => {
      const b = document.createElement("span");
      b.className = `res ${c.winner}`;
      b.textContent = c.banker_six ? "6" : S.winner[c.winner];
      return b;
    }));
    // As many of the newest as the strip holds, from one measurement (the discs are all one size).
    const discs = [...strip.children];
    if (!discs.length) return;
    const gap = parseFloat(getComputedStyle(strip).columnGap) || 0;
    const room = Math.floor((strip.clientWidth + gap) / (discs[0].offsetWidth + gap));
    if (room < discs.length) strip.replaceChildren(...discs.slice(discs.length - Math.max(0, room)));
  }

  function cardNode(card) {
    const span = document.createElement("span");
    span.className = card ? `card ${"HD".includes(card[1]) ? "red" : "black"}` : "card down";
    span.textContent = card ? `${card[0] === "T" ? "10" : card[0]}${SUIT[card[1]]}` : "?";
    return span;
  }

  function renderCards() {
    const dealing = Boolean(state.deal.player.length || state.deal.banker.length), last = state.last_result;
    const pays = document.getElementById("pays");
    if (pays) Page.pays(pays, state, dealing);
    if (!document.getElementById("cards")) return;
    const shown = dealing ? state.deal : last || { player: [], banker: [] };
    for (const hand of ["player", "banker"]) {
      document.getElementById(`${hand}-cards`).replaceChildren(...shown[hand].map(cardNode));
      const points = dealing ? state.deal[`${hand}_points`] : last ? last[`${hand}_points`] : null;
      Page.text(`${hand}-points`, points ?? "");
    }
    const out = document.getElementById("outcome");
    const six = last && last.banker_six && state.capabilities.banker_six;
    out.textContent = dealing ? Page.fmt(S.round, { round: state.round })
      : last ? `${S.wins[last.winner]}${six ? " · 6" : ""}` : "";
    out.className = !dealing && last ? `outcome w${last.winner}` : "outcome";
  }

  /* The `limits` panel, from the state's live settings (floor.md): the status when the table is not open (and
     then nothing that invites a bet), the dealer, each bet group's limits with the currency, the announcement. */
  function renderLimits() {
    document.body.dataset.status = state.status || "open";
    const panel = document.getElementById("limits");
    if (!panel) return;
    const status = document.getElementById("ov-status"), open = !state.status || state.status === "open";
    status.hidden = open;
    Page.text(status, open ? "" : S.status[state.status] || state.status);
    document.getElementById("ov-dealer").hidden = !state.dealer;
    Page.text("ov-dealer-name", state.dealer || "");
    const l = state.limits;
    Page.signs(state, ["main", "tie", "pair", "side"], document.getElementById("ov-limits"), "ov-group",
      (g) => (g === "main" ? `${S.limits}${l.currency ? ` ${l.currency}` : ""}` : S.groups[g]),
      document.getElementById("ov-announcement"));
  }

  /* As on the board: a void or correction shows for the server's notice time, in a panel of its own (the layout
     makes room for it, and takes it back when it ends). */
  function renderNotice() {
    const box = document.getElementById("notice");
    const was = box.hidden;
    Page.notice(box, state.notice, "panel notice o9", () => relayout());
    if (box.hidden !== was) relayout();
  }

  /* The betting window, as on the board (page.js bets): "place your bets" counting down, then "no more bets";
     never while the overlay is not live. Its panel comes and goes like the notice's. */
  let betsTimer = null;
  function renderBets() {
    const box = document.getElementById("bets");
    const bets = Page.bets(state, connected);
    const was = box.hidden;
    box.hidden = !bets;
    body.dataset.bets = bets ? bets.cls : "";
    if (bets) {
      // "Place your bets" over its seconds, each whole (the count never wraps away from its words).
      const words = bets.left ? S.window.place_your_bets : bets.text;
      if (box.dataset.words !== words) {
        box.dataset.words = words;
        const label = document.createElement("span"), count = document.createElement("b");
        label.className = "bets-words"; count.className = "bets-count";
        label.textContent = words;
        box.replaceChildren(label, count);
      }
      Page.text(box.querySelector(".bets-count"), bets.left ? String(bets.left) : "");
      box.className = `panel bets o9 ${bets.cls}`;
    }
    if (box.hidden !== was) relayout();
    else if (bets) fitPanels();
    clearTimeout(betsTimer);
    if (bets && bets.left) betsTimer = setTimeout(renderBets, 1000 - ((Page.now() * 1000) % 1000) + 20);
  }

  /* Each panel's text as large as the panel holds it whole (--k from 1 down, the fonts never under 12 px). */
  function fitPanels() {
    for (const panel of ov.querySelectorAll(".panel")) {
      if (panel.hidden || panel.id === "last") continue;
      const over = () => panel.scrollHeight > panel.clientHeight + 1 || panel.scrollWidth > panel.clientWidth + 1;
      panel.style.setProperty("--k", 1);
      for (let k = 1; over() && k > 0.3; ) { k -= 0.05; panel.style.setProperty("--k", k); }
    }
  }

  function relayout() {
    layout();
    fitPanels();
    if (model) { renderRoads(); renderLast(); }
  }

  if (askSeconds) {
    const cycle = ["P", "B", null];
    let i = cycle.length - 1;
    setInterval(() => { i = (i + 1) % cycle.length; asking = cycle[i]; if (model) { renderRoads(); renderAsk(); } }, askSeconds * 1000);
  }
  window.addEventListener("resize", relayout);
  // A CJK font's chunks arrive after the first layout: the panels are fitted again in the glyphs they show.
  document.fonts.addEventListener("loadingdone", fitPanels);
  layout();
})();
