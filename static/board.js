/* The table-side board: a snapshot on join, then one delta per change; a version gap or a reconnect re-joins. */
"use strict";

(() => {
  const body = document.body;
  const tableId = body.dataset.table;
  const ROADS = ["big_road", "bead", "big_eye", "small", "cockroach"];
  const SUIT = { S: "♠", H: "♥", D: "♦", C: "♣" };
  const WINNER = { B: "Banker wins", P: "Player wins", T: "Tie" };
  const ASK_SECONDS = 3;
  let version = 0, state = null, model = null, asking = null, askTimer = null, voided = null;

  function orient() {
    const forced = body.dataset.orientation;
    const o = forced || (window.innerWidth >= window.innerHeight ? "landscape" : "portrait");
    body.classList.toggle("landscape", o === "landscape");
    body.classList.toggle("portrait", o === "portrait");
  }

  const socket = io({ transports: ["websocket", "polling"] });
  socket.on("connect", join);
  socket.on("disconnect", () => setLive(false));
  socket.on("update", (wire) => {
    if (wire.table !== tableId || !model || wire.version <= version) return;
    if (wire.version !== version + 1) { join(); return; }   // missed a change: ask for a snapshot
    const d = SlimUpdate.expand(wire, state, model);   // the wire carries only what changed
    version = d.version; state = d.state;
    voided = d.kind === "void" ? d.round : d.kind === "card" || d.kind === "round" || d.kind === "shoe" ? null : voided;
    if (d.roads) model = RoadView.fromJSON(d.roads);
    else if (d.cells) RoadView.applyRound(model, d);
    render(Boolean(d.roads || d.cells));
  });

  function join() {
    socket.emit("join", { table: tableId }, (snap) => {
      if (!snap || snap.error) { setLive(false, snap ? snap.message : "no answer"); return; }
      if (model && snap.version < version) return;   // an answer to an earlier join: we are already past it
      version = snap.version; state = snap.state; model = RoadView.fromJSON(snap.roads);
      setLive(true);
      render(true);
    });
  }

  function setLive(on, why) {
    const live = document.getElementById("live");
    live.classList.toggle("off", !on);
    live.textContent = on ? "LIVE" : "OFFLINE";
    if (why) live.title = why;
  }

  function text(id, value) { document.getElementById(id).textContent = value; }

  /* A card changes the header and the cards; only a round, a rebuild or a snapshot redraws the roads. */
  function render(roadsChanged) {
    body.dataset.version = version;
    renderHeader(); renderCards();
    if (roadsChanged) { renderStats(); renderRoads(); renderAsk(); }
  }

  function renderHeader() {
    text("name", state.name);
    text("variant", state.variant_title);
    text("shoe", state.shoe ? state.shoe.number : "—");
    text("round", state.round);
    text("cards-left", state.shoe ? state.shoe.cards_left : "—");
    const phase = { no_shoe: "Waiting for a shoe", ready: "Place your bets", dealing: "Dealing",
      shoe_finished: "Shoe finished" }[state.phase] || state.phase;
    text("phase", state.shoe && state.shoe.cut && state.phase !== "shoe_finished" ? `${phase} · last rounds` : phase);
    document.getElementById("phase").className = `phase ${state.phase}`;
  }

  function cardNode(card) {
    const div = document.createElement("div");
    const rank = card[0] === "T" ? "10" : card[0];
    div.className = `card ${"HD".includes(card[1]) ? "red" : "black"}`;
    div.innerHTML = `<span class="rank">${rank}</span><span class="suit">${SUIT[card[1]]}</span>`;
    return div;
  }

  function renderCards() {
    const dealing = state.deal.player.length || state.deal.banker.length;
    const last = state.last_result;
    const shown = dealing ? state.deal : (last && last.player.length ? last : { player: [], banker: [] });
    for (const hand of ["player", "banker"]) {
      const row = document.getElementById(`${hand}-cards`);
      row.replaceChildren(...shown[hand].map(cardNode));
      const points = dealing ? state.deal[`${hand}_points`] : last ? last[`${hand}_points`] : null;
      text(`${hand}-points`, points === null || points === undefined ? "" : points);
    }
    const out = document.getElementById("outcome");
    if (voided) {
      out.textContent = `Round void: ${voided.reason}`;
      out.className = "outcome void";
    } else if (dealing && state.insurance.length) {
      const offers = state.insurance.map((o) => `${o.hand === "player" ? "Player" : "Banker"} ${o.odds}`);
      out.textContent = `Round ${state.round} · Insurance: ${offers.join(", ")}`;
      out.className = "outcome insurance";
    } else if (!dealing && last) {
      const six = last.banker_six && ["super-six", "super-six-plus"].includes(state.variant) ? " · Super 6" : "";
      out.textContent = `Round ${last.round}: ${WINNER[last.winner]}${six}`;
      out.className = `outcome w${last.winner}`;
    } else { out.textContent = dealing ? `Round ${state.round}` : ""; out.className = "outcome"; }
  }

  function renderStats() {
    for (const k of ["B", "P", "T", "banker_pair", "player_pair", "natural", "banker_six"]) text(`stat-${k}`, model.stats[k] || 0);
    const box = document.getElementById("patterns");
    box.replaceChildren(...model.patterns.map((p) => {
      const chip = document.createElement("span");
      chip.className = `chip ${p.pattern}`; chip.textContent = p.label;
      return chip;
    }));
  }

  function askCell(name) {
    if (!asking) return null;
    const p = model.predict[asking];
    if (name === "bead") return { ...p.bead, winner: asking };
    if (name === "big_road") return { ...p.big_road, winner: asking };
    return p.cells ? p.cells[name] : null;
  }

  function renderRoads() {
    for (const name of ROADS) {
      const svg = document.querySelector(`[data-road="${name}"] svg`);
      RoadView.draw(svg, name, model, askCell(name));
    }
  }

  function renderAsk() {
    for (const side of ["P", "B"]) {
      const btn = document.getElementById(`ask-${side}`);
      RoadView.buttonMarks(btn.querySelector("svg"), model.predict[side]);
      btn.classList.toggle("active", asking === side);
    }
  }

  function ask(side) {
    asking = side;
    clearTimeout(askTimer);
    askTimer = setTimeout(() => { asking = null; if (model) { renderRoads(); renderAsk(); } }, ASK_SECONDS * 1000);
    renderRoads(); renderAsk();
  }

  document.querySelectorAll(".ask-btn").forEach((b) => b.addEventListener("click", () => model && ask(b.dataset.side)));
  window.addEventListener("keydown", (e) => {
    if (e.key === "p" || e.key === "P") model && ask("P");
    if (e.key === "b" || e.key === "B") model && ask("B");
  });
  window.addEventListener("resize", () => { orient(); if (model) renderRoads(); });
  orient();
})();
