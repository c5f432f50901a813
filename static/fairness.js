// The fairness page (templates/fairness.html): each ended shoe's seed, and a Verify button that rebuilds the shoe's
// order from its public export and checks it against the commitment published before its first card, with the
// browser's own SHA-256 (WebCrypto). The same check as `scoreboard verify` (scoreboard/commitment.py).
"use strict";

(function () {
  const body = document.body;
  const api = body.dataset.api;
  const strings = JSON.parse(document.getElementById("strings").textContent);
  const SHOWN = 20; // the newest ended shoes listed

  function fmt(text, values) {
    return text.replace(/%\((\w+)\)s/g, (_, name) => String(values[name]));
  }

  function problem(text) {
    const e = new Error(text);
    e.verdict = "unreadable";
    return e;
  }

  function cards(items, index) {
    if (!Array.isArray(items) || items.length === 0) throw problem(`event ${index} names no cards where it should`);
    return items.map((c) => {
      if (typeof c !== "string" || !/^[A2-9TJQK][SHDC]$/.test(c)) throw problem(`event ${index}: ${c} is not a card`);
      return c;
    });
  }

  // The shoe's order as its events tell it: burned cards, each card as dealt (a whole round P1 B1 P2 B2, then the
  // third cards), then the cards the shoe_end says were left.
  function rebuild(exported) {
    const events = exported.events || [];
    const opening = events.findIndex((e) => e && e.type === "shoe");
    if (opening < 0) throw problem("there is no shoe event");
    const shoe = events[opening];
    const committed = String(shoe.commitment || (exported.shoe || {}).commitment || "").toLowerCase();
    if (!committed) throw problem("the shoe made no commitment");
    const order = [];
    let end = null;
    events.slice(opening + 1).forEach((event, i) => {
      const at = opening + 1 + i;
      const kind = event && event.type;
      if (end !== null) throw problem(`event ${at} comes after the shoe_end event`);
      if (kind === "shoe") throw problem(`event ${at} starts another shoe`);
      if (kind === "burn") {
        if (!event.cards) throw problem(`event ${at} burns cards without naming them`);
        order.push(...cards(event.cards, at));
      } else if (kind === "card") {
        order.push(...cards([event.card], at));
      } else if (kind === "round") {
        const p = cards(event.player, at);
        const b = cards(event.banker, at);
        order.push(p[0], b[0], p[1], b[1], ...p.slice(2), ...b.slice(2));
      } else if (kind === "result") {
        throw problem(`event ${at} enters a result without its cards`);
      } else if (kind === "shoe_end") {
        end = event;
      }
    });
    if (end === null || typeof end.seed !== "string" || !end.seed) throw problem("the shoe has not been revealed");
    if (end.undealt) order.push(...cards(end.undealt, events.length - 1));
    const decks = shoe.decks || (exported.shoe || {}).decks;
    return { seed: end.seed, order, committed, decks };
  }

  async function sha256hex(text) {
    const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
    return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
  }

  function whole(order, decks) {
    if (!decks) return order.length > 0 && order.length % 52 === 0;
    const counts = new Map();
    for (const c of order) counts.set(c, (counts.get(c) || 0) + 1);
    return counts.size === 52 && Array.from(counts.values()).every((n) => n === decks);
  }

  // The verdict on one export: "verified", "mismatch", "not_whole" or "unreadable" (with the reason).
  async function verify(exported) {
    let shoe;
    try {
      shoe = rebuild(exported);
    } catch (e) {
      return { verdict: "unreadable", reason: e.message };
    }
    const computed = await sha256hex(`${shoe.seed}:${shoe.order.join(" ")}`);
    if (computed !== shoe.committed) return { verdict: "mismatch" };
    if (!whole(shoe.order, shoe.decks)) return { verdict: "not_whole" };
    return { verdict: "verified", cards: shoe.order.length };
  }

  async function exportOf(number) {
    const r = await fetch(`${api}/shoes/${number}/export`, { cache: "no-store" });
    return r.ok ? r.json() : null;
  }

  function item(number, exported) {
    const li = document.createElement("li");
    li.dataset.shoe = String(number);
    const title = document.createElement("strong");
    title.textContent = fmt(strings.shoe, { number });
    li.append(title);
    const seed = exported.shoe && exported.shoe.seed;
    if (!seed) {
      li.append(" ", strings.not_revealed);
      return li;
    }
    const line = document.createElement("span");
    line.className = "seed";
    const code = document.createElement("code");
    code.textContent = seed;
    line.append(`${strings.seed}: `, code);
    const button = document.createElement("button");
    button.type = "button";
    button.className = "verify";
    button.textContent = strings.verify;
    const verdict = document.createElement("span");
    verdict.className = "verdict";
    verdict.setAttribute("role", "status");
    button.addEventListener("click", async () => {
      verdict.className = "verdict";
      verdict.textContent = strings.checking;
      const fresh = (await exportOf(number)) || exported;
      const result = await verify(fresh);
      verdict.dataset.verdict = result.verdict;
      verdict.classList.add(result.verdict === "verified" ? "ok" : "bad");
      verdict.textContent = fmt(strings[result.verdict], result);
    });
    li.append(line, button, verdict);
    return li;
  }

  async function load() {
    const list = document.getElementById("ended");
    const r = await fetch(`${api}/shoes`, { cache: "no-store" });
    const shoes = r.ok ? (await r.json()).shoes : [];
    const open = Number(body.dataset.openShoe || 0); // the shoe being dealt: not ended, its export an operator's
    const numbers = shoes
      .map((s) => s.shoe)
      .filter((n) => n !== open)
      .sort((a, b) => b - a)
      .slice(0, SHOWN);
    let shown = 0;
    for (const number of numbers) {
      const exported = await exportOf(number); // null for a shoe ended unrevealed (an operator's): not listed
      if (!exported || !exported.shoe || !exported.shoe.ended) continue;
      list.append(item(number, exported));
      shown += 1;
    }
    if (!shown) {
      const none = document.createElement("li");
      none.className = "none";
      none.textContent = strings.no_ended;
      list.append(none);
    }
    body.dataset.loaded = "true";
  }

  load();
})();
