/* The table-side board: a snapshot on join, then one delta per change (live.js); says "place your bets" with the
   seconds left only while the table's betting window is open (state.bets, page.js), and never while the live
   connection is down. The layout is board.css's; this draws the roads into it (a whole shoe on the
   Big Road, half-size cells on the derived roads) and fits the table's name. */
"use strict";

(() => {
  const body = document.body;
  const S = Page.strings;
  const tableId = body.dataset.table;
  const SUIT = { S: "♠", H: "♥", D: "♦", C: "♣" };
  const look = Page.look();
  const cols = Number(body.dataset.cols) || 0; // ?cols=: the Big Road's columns
  let state = null, model = null, connected = false, asking = null, askTimer = null;
  let lastUpdate = Page.now(), betsTimer = null;

  function orient() {
    const o = body.dataset.orientation || (window.innerWidth >= window.innerHeight ? "landscape" : "portrait");
    body.classList.toggle("landscape", o === "landscape");
    body.classList.toggle("portrait", o === "portrait");
    if (cols) body.style.setProperty("--cols", cols);
    fitName();
  }

  /* The table's name as large as fits on one line, down to the size of the other labels; a name longer still
     wraps onto more lines at that size (the header grows, the roads keep their size). */
  let nameWidth = 0; // the width the name was last fitted in
  function fitName() {
    const name = document.getElementById("name");
    name.style.fontSize = "";
    nameWidth = name.clientWidth;
    const largest = parseFloat(getComputedStyle(name).fontSize);
    const smallest = parseFloat(getComputedStyle(document.getElementById("variant")).fontSize);
    const fits = (size) => {
      name.style.fontSize = `${size}px`;
      return name.scrollHeight <= size * 1.15 * 1.5 && name.scrollWidth <= name.clientWidth;
    };
    if (fits(largest)) return;
    if (!fits(smallest)) { name.style.fontSize = `${smallest}px`; return; }
    let lo = smallest, hi = largest;
    while (hi - lo > 0.5) { const mid = (lo + hi) / 2; if (fits(mid)) lo = mid; else hi = mid; }
    name.style.fontSize = `${lo}px`;
  }

  const socket = Live.connect((on) => { connected = on && connected; if (!on) showConnection(); });
  Live.table(socket, tableId, {
    snapshot(snap) {
      // For bench/page.py: when the first snapshot arrived (the first road's time is the wait for it plus drawing).
      if (!performance.getEntriesByName("scoreboard:snapshot").length) performance.mark("scoreboard:snapshot");
      state = snap.state; model = RoadView.fromJSON(snap.roads); connected = true;
      showConnection();
      render(true);
      // For bench/page.py: when the first roads reach the screen (the frame after they are drawn).
      if (!performance.getEntriesByName("scoreboard:first-road").length) {
        requestAnimationFrame(() => performance.mark("scoreboard:first-road"));
      }
    },
    update(d) {
      state = d.state; lastUpdate = Page.now();
      if (d.roads) model = RoadView.fromJSON(d.roads);
      else if (d.cells) RoadView.applyRound(model, d);
      render(Boolean(d.roads || d.cells));
    },
    refused(message) { Page.text("veil-message", message); connected = false; showConnection(); },
  });

  /* Live, or an unmistakable "connection lost — no bets" over the whole board: the roads may be out of date. */
  function showConnection() {
    body.classList.toggle("offline", !connected);
    body.classList.toggle("connecting", false);
    document.getElementById("veil").hidden = connected;
    const live = document.getElementById("live");
    live.classList.toggle("off", !connected);
    live.textContent = connected ? S.live : S.offline;
    if (!connected) {
      clearTimeout(betsTimer);
      body.dataset.bets = "";
      Page.text("phase", S.lost);
      document.getElementById("phase").className = "phase lost";
    } else if (state) renderPhase();
  }

  /* A card changes the header and the cards; only a round, a rebuild or a snapshot redraws the roads. */
  function render(roadsChanged) {
    body.dataset.version = state.version;
    renderHeader(); renderCards(); renderNotice(); fitRound(); showIdle(false);
    if (roadsChanged) { renderStats(); renderRoads(); renderAsk(); renderRecent(); }
  }

  function renderPhase() {
    if (!connected) return;
    const status = state.status || "open";
    const el = document.getElementById("phase");
    clearTimeout(betsTimer);
    if (status !== "open") {
      // A table that is not open says so, and never invites bets (page.js bets says nothing there either).
      body.dataset.bets = "";
      Page.text(el, S.status[status] || status);
      el.className = `phase status-${status}`;
      return;
    }
    const bets = Page.bets(state, connected);
    Page.text(el, bets ? bets.text : S.phase[state.phase] || state.phase);
    el.className = `phase ${bets ? bets.cls : state.phase}`;
    body.dataset.bets = bets ? bets.cls : "";
    // The seconds count down between updates; a window whose time is up says "no more bets" at once.
    if (bets && bets.left) betsTimer = setTimeout(renderPhase, 1000 - ((Page.now() * 1000) % 1000) + 20);
  }

  function renderHeader() {
    if (document.getElementById("name").textContent !== state.name) { Page.text("name", state.name); fitName(); }
    // The cut card is out: a warning of its own beside the phase, never cut short.
    document.getElementById("cut").hidden = !(state.shoe && state.shoe.cut && state.phase !== "shoe_finished");
    Page.text("variant", S.titles[state.variant_title] || state.variant_title);
    Page.text("shoe", state.shoe ? state.shoe.number : "—");
    Page.text("round", state.round);
    Page.text("cards-left", state.shoe ? state.shoe.cards_left : "—");
    const l = state.limits;
    Page.text("currency", l.currency || "");
    Page.text("limits", l.min ? `${Page.number(l.min)} – ${Page.number(l.max)}` : "—");
    renderSettings();
    renderPhase();
  }

  /* The table's live settings (floor.md), as the state says them: the dealer, the other bet groups' limits, the
     announcement. A table that is not open shows its status over the whole board, and its phase never says
     "place your bets". */
  function renderSettings() {
    document.getElementById("dealer-line").hidden = !state.dealer;
    Page.text("dealer", state.dealer || "");
    const groups = Page.signs(state, ["tie", "pair", "side"], document.getElementById("limit-groups"), "group",
      (g) => S.groups[g], document.getElementById("announcement"));
    document.getElementById("signage").hidden = !groups.length && !state.announcement;
    const status = state.status || "open", open = status === "open";
    body.dataset.status = status;
    body.classList.toggle("not-open", !open);
    document.getElementById("table-status").hidden = open;
    if (open) return;
    Page.text("status-word", S.status[status] || status);
    Page.text("status-name", state.name);
    const shown = document.getElementById("status-announcement");
    shown.hidden = !state.announcement;
    Page.text(shown, state.announcement || "");
  }

  function cardNode(card) {
    const div = document.createElement("div");
    if (!card) { div.className = "card down"; return div; } // face down while squeezed
    const rank = document.createElement("span"), suit = document.createElement("span");
    div.className = `card ${"HD".includes(card[1]) ? "red" : "black"}`;
    rank.className = "rank"; rank.textContent = card[0] === "T" ? "10" : card[0];
    suit.className = "suit"; suit.textContent = SUIT[card[1]];
    div.append(rank, suit);
    return div;
  }

  function renderCards() {
    const dealing = state.deal.player.length || state.deal.banker.length;
    const last = state.last_result;
    const shown = dealing ? state.deal : (last && last.player.length ? last : { player: [], banker: [] });
    for (const hand of ["player", "banker"]) {
      document.getElementById(`${hand}-cards`).replaceChildren(...shown[hand].map(cardNode));
      const points = dealing ? state.deal[`${hand}_points`] : last ? last[`${hand}_points`] : null;
      Page.text(`${hand}-points`, points === null || points === undefined ? "" : points);
    }
    const out = document.getElementById("outcome");
    if (!dealing && last) {
      const six = last.banker_six && state.capabilities.banker_six ? ` · ${S.super_six}` : "";
      out.textContent = `${Page.fmt(S.round, { round: last.round })} · ${S.wins[last.winner]}${six}`;
      out.className = `outcome w${last.winner}`;
    } else {
      out.textContent = dealing ? Page.fmt(S.round, { round: state.round }) : "";
      out.className = "outcome";
    }
    Page.pays(document.getElementById("pays"), state, dealing);
    const ins = document.getElementById("insurance");
    const offers = dealing ? state.insurance || [] : [];
    ins.hidden = !offers.length;
    ins.textContent = offers.length ? Page.fmt(S.insurance, {
      offers: offers.map((o) => Page.fmt(S.offer, { hand: S.hand[o.hand], odds: S.odds[o.odds] || o.odds })).join(", "),
    }) : "";
  }

  /* A void or a correction stays up for the server's notice time, counted from when it happened; its band takes
     room from the bottom row, so the round's panel is fitted again when it comes and goes. */
  function renderNotice() {
    const n = state.notice;
    Page.notice(document.getElementById("notice"), n, n ? `notice ${n.kind}` : "notice", fitRound);
  }

  /* The round's panel keeps everything whole: smaller cards first (down to 0.7 of their size), then none (the
     hands' points, the result and its pays stay). */
  function fitRound() {
    const panel = document.getElementById("cards");
    const full = body.classList.contains("portrait") ? 1.25 : 1;
    const over = () => panel.scrollHeight > panel.clientHeight + 1;
    panel.classList.remove("no-cards");
    panel.style.setProperty("--k", full);
    for (let k = full; over() && k > 0.7; ) { k = Math.max(0.7, k - 0.05); panel.style.setProperty("--k", k); }
    if (over()) panel.classList.add("no-cards");
  }

  function renderStats() {
    for (const k of ["B", "P", "T", "banker_pair", "player_pair", "natural", "banker_six"]) Page.text(`stat-${k}`, model.stats[k] || 0);
    document.getElementById("patterns").replaceChildren(...model.patterns.map(chip));
  }

  function chip(p) {
    const span = document.createElement("span"), name = document.createElement("span"), run = document.createElement("b");
    const code = p.hall ? `${p.pattern}:${p.hall}` : p.pattern; // a one-hall-two-rooms is named by its hall (the server's)
    span.className = `chip ${p.pattern}`;
    name.textContent = S.patterns[code] || p.label;
    run.className = "run"; run.textContent = p.length;
    span.append(name, run);
    return span;
  }

  /* The roads: the Big Road first, whose cell sets the derived roads' (half of it); the Bead Road holds a whole
     shoe (90 rounds, 15 columns). A road that cannot show all its columns says how many are out of view. */
  function renderRoads() {
    // Every size read before anything is drawn: one layout, not one per road.
    const minMark = document.getElementById("probe").getBoundingClientRect().width;
    const sections = Object.fromEntries(RoadView.roads(look).map((name) => [name, document.querySelector(`[data-road="${name}"]`)]));
    const boxes = Object.fromEntries(RoadView.roads(look).map((name) => {
      const svg = sections[name].querySelector("svg");
      return [name, { svg, width: svg.clientWidth, height: svg.clientHeight }];
    }));
    const draw = (name, opts) => {
      const { svg, width, height } = boxes[name];
      const f = RoadView.draw(svg, name, model, RoadView.askCell(model, name, asking), { look, minMark, width, height, ...opts });
      hiddenCount(sections[name], f ? f.hidden : 0);
      return f;
    };
    const big = draw("big_road", cols ? { cols } : { minCols: body.classList.contains("portrait") ? 36 : 48 });
    const half = big ? Math.max(1, Math.floor(big.cell / 2)) : 0;
    for (const name of RoadView.roads(look, true)) draw(name, half ? { cell: half } : {});
    draw("bead", { minCols: 15 });
  }

  function hiddenCount(section, n) {
    const box = section.querySelector(".hidden-count");
    box.hidden = !n;
    Page.text(box, n === 1 ? S.hidden.one : Page.fmt(S.hidden.many, { count: n }));
    section.dataset.hidden = n;
  }

  function renderAsk() {
    for (const side of ["P", "B"]) {
      const btn = document.getElementById(`ask-${side}`);
      RoadView.buttonMarks(btn.querySelector("svg"), model.predict[side], look);
      btn.classList.toggle("active", asking === side);
    }
  }

  /* The newest results, as many as the strip holds, newest on the right. */
  function renderRecent() {
    const strip = document.getElementById("recent-strip");
    const beads = model.bead.slice(-40).map((c) => {
      const b = document.createElement("span");
      b.className = `res ${c.winner}${c.banker_six ? " six" : ""}`;
      b.textContent = c.banker_six ? "6" : S.winner[c.winner];
      b.dataset.round = c.round;
      return b;
    });
    strip.replaceChildren(...beads);
    // As many of the newest as the strip holds, from one measurement (the discs are all one size).
    if (!beads.length) return;
    const gap = parseFloat(getComputedStyle(strip).columnGap) || 0;
    const room = Math.floor((strip.clientWidth + gap) / (beads[0].offsetWidth + gap));
    if (room < beads.length) strip.replaceChildren(...beads.slice(beads.length - Math.max(0, room)));
  }

  function ask(side) {
    if (!model) return;
    asking = side;
    clearTimeout(askTimer);
    askTimer = setTimeout(() => { asking = null; renderRoads(); renderAsk(); }, Page.setting("askSeconds") * 1000);
    renderRoads(); renderAsk();
  }

  /* The idle view after the server's idle time without an event at this table; the next event ends it. */
  function showIdle(on) {
    document.getElementById("idle").hidden = !on;
    body.classList.toggle("idle", on);
  }

  function checkIdle() {
    const after = Page.setting("idleAfter");
    if (!after || !state || !connected) return;
    // The table's last event by the server's clock; if it has none (or the service does not say), the last
    // change this page saw.
    const last = state.last_event_at ?? lastUpdate;
    if (Page.now() - last >= after) showIdle(true);
  }

  document.querySelectorAll(".ask-btn").forEach((b) => b.addEventListener("click", () => ask(b.dataset.side)));
  window.addEventListener("keydown", (e) => {
    if (e.key === "p" || e.key === "P") ask("P");
    if (e.key === "b" || e.key === "B") ask("B");
  });
  window.addEventListener("resize", () => { orient(); if (model) { fitRound(); renderRoads(); renderRecent(); } });
  // The bottom row is as tall as the screen leaves it (a notice comes or goes, the name wraps): the Bead Road is
  // drawn again and the round's panel fitted again when it changes.
  // The name's room changes with what stands beside it (the limits, the phase): fitted again when its width does.
  new ResizeObserver(() => {
    if (document.getElementById("name").clientWidth !== nameWidth) fitName();
  }).observe(document.getElementById("name"));
  const bottom = new ResizeObserver(() => { if (model) { fitRound(); renderRoads(); } });
  bottom.observe(document.querySelector("#bead-road svg"));
  bottom.observe(document.getElementById("cards"));
  // A CJK font's chunks arrive after the first layout: the name and the round are fitted again in the glyphs
  // they are drawn with.
  document.fonts.addEventListener("loadingdone", () => { fitName(); if (model) { fitRound(); renderRecent(); } });
  orient();
  Page.clock(document.getElementById("clock"), body.dataset.clock);
  Page.pixelShift(Page.setting("shiftEvery"), Page.setting("shiftPixels"));
  setInterval(checkIdle, 1000);
})();
