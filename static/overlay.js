/* The stream overlay: the roads (and panels) asked for in `roads`, live like the board, laid out for the box the
   streaming tool gives it. With `ask`, ASK P, then ASK B, then neither blink for that many seconds each. */
"use strict";

(() => {
  const body = document.body, ov = document.getElementById("ov");
  const S = Page.strings;
  const ROAD_OF = { big: "big_road", bead: "bead", big_eye: "big_eye", small: "small", cockroach: "cockroach" };
  const roads = body.dataset.roads.split(",").filter((p) => ROAD_OF[p]).map((p) => ROAD_OF[p]);
  const cols = Number(body.dataset.cols) || 0, askSeconds = Number(body.dataset.ask) || 0;
  const SUIT = { S: "♠", H: "♥", D: "♦", C: "♣" };
  let state = null, model = null, connected = false, asking = null;

  /* The box: the source's size unless ?width= / ?height= set it; a strip when much wider than high. */
  function layout() {
    const w = Number(body.dataset.width) || window.innerWidth, h = Number(body.dataset.height) || window.innerHeight;
    ov.style.width = `${w}px`; ov.style.height = `${h}px`;
    const strip = w / h >= 2.4;
    ov.classList.toggle("ov-strip", strip);
    ov.classList.toggle("ov-box", !strip);
    const u = (strip ? h : Math.min(h, w * 0.5625)) / 100;
    document.documentElement.style.setProperty("--u", `${u}px`);
    // The latest results fill their panel's height, however short the box (a 1280x160 ticker).
    const last = document.getElementById("last");
    if (last) last.style.setProperty("--disc", `${Math.max(8 * u, Math.min(last.clientHeight - 2 * u, last.clientWidth / 4) * 0.8)}px`);
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
  }

  function render(roadsChanged) {
    body.dataset.version = state.version;
    renderCards(); renderNotice();
    if (roadsChanged) { renderRoads(); renderStats(); renderAsk(); renderLast(); }
  }

  function renderRoads() {
    for (const name of roads) {
      const svg = document.querySelector(`[data-road="${name}"] svg`);
      RoadView.draw(svg, name, model, RoadView.askCell(model, name, asking), cols ? { cols } : {});
    }
  }

  function renderStats() {
    for (const k of ["B", "P", "T", "banker_six"]) Page.text(`stat-${k}`, model.stats[k] || 0);
  }

  function renderAsk() {
    for (const side of ["P", "B"]) {
      const box = document.getElementById(`ask-${side}`);
      if (!box) return;
      RoadView.buttonMarks(box.querySelector("svg"), model.predict[side]);
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
    while (strip.firstChild && strip.scrollWidth > strip.clientWidth) strip.removeChild(strip.firstChild);
  }

  function cardNode(card) {
    const span = document.createElement("span");
    span.className = card ? `card ${"HD".includes(card[1]) ? "red" : "black"}` : "card down";
    span.textContent = card ? `${card[0] === "T" ? "10" : card[0]}${SUIT[card[1]]}` : "?";
    return span;
  }

  function renderCards() {
    if (!document.getElementById("cards")) return;
    const dealing = state.deal.player.length || state.deal.banker.length, last = state.last_result;
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

  /* As on the board: a void or correction shows for the server's notice time. */
  function renderNotice() { Page.notice(document.getElementById("notice"), state.notice); }

  if (askSeconds) {
    const cycle = ["P", "B", null];
    let i = cycle.length - 1;
    setInterval(() => { i = (i + 1) % cycle.length; asking = cycle[i]; if (model) { renderRoads(); renderAsk(); } }, askSeconds * 1000);
  }
  window.addEventListener("resize", () => { layout(); if (model) { renderRoads(); renderLast(); } });
  layout();
})();
