/* The table-side board: a snapshot on join, then one delta per change (live.js); never says "place your bets"
   while the live connection is down. */
"use strict";

(() => {
  const body = document.body;
  const S = Page.strings;
  const tableId = body.dataset.table;
  const SUIT = { S: "♠", H: "♥", D: "♦", C: "♣" };
  let state = null, model = null, connected = false, asking = null, askTimer = null;
  let lastUpdate = Page.now();

  function orient() {
    const o = body.dataset.orientation || (window.innerWidth >= window.innerHeight ? "landscape" : "portrait");
    body.classList.toggle("landscape", o === "landscape");
    body.classList.toggle("portrait", o === "portrait");
  }

  const socket = Live.connect((on) => { connected = on && connected; if (!on) showConnection(); });
  Live.table(socket, tableId, {
    snapshot(snap) {
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
      Page.text("phase", S.lost);
      document.getElementById("phase").className = "phase lost";
    } else if (state) renderPhase();
  }

  /* A card changes the header and the cards; only a round, a rebuild or a snapshot redraws the roads. */
  function render(roadsChanged) {
    body.dataset.version = state.version;
    renderHeader(); renderCards(); renderNotice(); showIdle(false);
    if (roadsChanged) { renderStats(); renderRoads(); renderAsk(); renderRecent(); }
  }

  function renderPhase() {
    if (!connected) return;
    let phase = S.phase[state.phase] || state.phase;
    if (state.shoe && state.shoe.cut && state.phase !== "shoe_finished") phase = `${phase} · ${S.last_rounds}`;
    Page.text("phase", phase);
    document.getElementById("phase").className = `phase ${state.phase}`;
  }

  function renderHeader() {
    Page.text("name", state.name);
    Page.text("variant", S.titles[state.variant_title] || state.variant_title);
    Page.text("shoe", state.shoe ? state.shoe.number : "—");
    Page.text("round", state.round);
    Page.text("cards-left", state.shoe ? state.shoe.cards_left : "—");
    const l = state.limits;
    Page.text("limits", l.min ? `${Page.number(l.min)} – ${Page.number(l.max)}` : "—");
    renderPhase();
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
    const ins = document.getElementById("insurance");
    const offers = dealing ? state.insurance || [] : [];
    ins.hidden = !offers.length;
    ins.textContent = offers.length ? Page.fmt(S.insurance, {
      offers: offers.map((o) => Page.fmt(S.offer, { hand: S.hand[o.hand], odds: S.odds[o.odds] || o.odds })).join(", "),
    }) : "";
  }

  /* A void or a correction stays up for the server's notice time, counted from when it happened. */
  function renderNotice() {
    const n = state.notice;
    Page.notice(document.getElementById("notice"), n, n ? `notice ${n.kind}` : "notice");
  }

  function renderStats() {
    for (const k of ["B", "P", "T", "banker_pair", "player_pair", "natural", "banker_six"]) Page.text(`stat-${k}`, model.stats[k] || 0);
    document.getElementById("patterns").replaceChildren(...model.patterns.map((p) => chip(p, model)));
  }

  function chip(p, m) {
    const span = document.createElement("span"), name = document.createElement("span"), run = document.createElement("b");
    const code = p.pattern === "one_hall_two_rooms" ? `${p.pattern}:${RoadView.lastSide(m) === "P" ? "B" : "P"}` : p.pattern;
    span.className = `chip ${p.pattern}`;
    name.textContent = S.patterns[code] || p.label;
    run.className = "run"; run.textContent = p.length;
    span.append(name, run);
    return span;
  }

  function renderRoads() {
    for (const name of RoadView.ROADS) {
      const svg = document.querySelector(`[data-road="${name}"] svg`);
      // A whole shoe (up to 90 rounds, 15 columns) always fits the bead road.
      RoadView.draw(svg, name, model, RoadView.askCell(model, name, asking), name === "bead" ? { minCols: 15 } : {});
    }
  }

  function renderAsk() {
    for (const side of ["P", "B"]) {
      const btn = document.getElementById(`ask-${side}`);
      RoadView.buttonMarks(btn.querySelector("svg"), model.predict[side]);
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
    while (strip.firstChild && strip.scrollWidth > strip.clientWidth) strip.removeChild(strip.firstChild);
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
  window.addEventListener("resize", () => { orient(); if (model) { renderRoads(); renderRecent(); } });
  orient();
  Page.clock(document.getElementById("clock"), body.dataset.clock);
  Page.pixelShift(Page.setting("shiftEvery"), Page.setting("shiftPixels"));
  setInterval(checkIdle, 1000);
})();
