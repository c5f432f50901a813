/* Drawing the roads of roads.md into SVG. A view only: every position comes from the server's roads JSON. */
"use strict";

const RoadView = (() => {
  const SVG = "http://www.w3.org/2000/svg";
  const COLOUR = { B: "#d0021b", P: "#1553c7", T: "#16a34a", red: "#d0021b", blue: "#1553c7" };
  const ROWS = 6;

  function el(name, attrs, parent) {
    const node = document.createElementNS(SVG, name);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
    if (parent) parent.appendChild(node);
    return node;
  }

  /* The model a display keeps: flat cell lists per road, fed by snapshots and deltas. */
  function fromJSON(j) {
    const flat = (road) => road.columns.flat();
    return {
      bead: j.bead.cells.slice(), big: flat(j.big_road), leadingTies: j.big_road.leading_ties,
      big_eye: flat(j.big_eye), small: flat(j.small), cockroach: flat(j.cockroach),
      predict: j.predict, stats: j.stats, patterns: j.patterns || [],
    };
  }

  /* A `round` delta: the cells it added, the tie it counted, and the new predictions and stats. */
  function applyRound(m, d) {
    const c = d.cells;
    m.bead.push(c.bead);
    if (c.big_road) m.big.push(c.big_road);
    if (c.tie) {
      if ("leading_ties" in c.tie) m.leadingTies = c.tie.leading_ties;
      else if (m.big.length) m.big[m.big.length - 1].ties = c.tie.ties;
    }
    for (const name of ["big_eye", "small", "cockroach"]) if (c[name]) m[name].push(c[name]);
    m.predict = d.predict; m.stats = d.stats; m.patterns = d.patterns || [];
  }

  /* Size the SVG to its box: six rows, as many whole columns as fit; returns the first column shown. */
  function frame(svg, cells, extra) {
    const w = svg.clientWidth || svg.parentNode.clientWidth, h = svg.clientHeight || svg.parentNode.clientHeight;
    const cell = Math.max(8, Math.floor(h / ROWS));
    const fit = Math.max(1, Math.floor(w / cell));
    let last = 0;
    for (const c of cells) if (c.col > last) last = c.col;
    if (extra && extra.col > last) last = extra.col;
    const first = Math.max(0, last - fit + 1);
    svg.setAttribute("viewBox", `0 0 ${fit * cell} ${ROWS * cell}`);
    svg.setAttribute("width", fit * cell); svg.setAttribute("height", ROWS * cell);
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    const grid = el("g", { class: "grid" }, svg);
    for (let i = 0; i <= fit; i++) el("line", { x1: i * cell, y1: 0, x2: i * cell, y2: ROWS * cell }, grid);
    for (let r = 0; r <= ROWS; r++) el("line", { x1: 0, y1: r * cell, x2: fit * cell, y2: r * cell }, grid);
    return { cell, first, fit };
  }

  function centre(f, c) {
    return [(c.col - f.first + 0.5) * f.cell, (c.row + 0.5) * f.cell];
  }

  function pairDots(g, f, c, x, y, r) {
    const d = r * 0.72, dot = Math.max(2, f.cell * 0.1);
    if (c.banker_pair) el("circle", { cx: x - d, cy: y - d, r: dot, fill: COLOUR.B, stroke: "#fff", "stroke-width": dot * 0.35, class: "pair banker-pair" }, g);
    if (c.player_pair) el("circle", { cx: x + d, cy: y + d, r: dot, fill: COLOUR.P, stroke: "#fff", "stroke-width": dot * 0.35, class: "pair player-pair" }, g);
  }

  function bead(g, f, c, cls) {
    const [x, y] = centre(f, c), r = f.cell * 0.43;
    const six = c.banker_six;
    const b = el("g", { class: `bead ${cls || ""}`, "data-round": c.round || "" }, g);
    el("circle", { cx: x, cy: y, r, fill: COLOUR[c.winner] }, b);
    const t = el("text", { x, y, "font-size": f.cell * (six ? 0.6 : 0.5), "text-anchor": "middle",
      "dominant-baseline": "central", fill: "#fff", class: six ? "six" : "" }, b);
    t.textContent = six ? "6" : c.winner;
    pairDots(b, f, c, x, y, r);
  }

  function circle(g, f, c, cls) {
    const [x, y] = centre(f, c), r = f.cell * 0.36;
    const b = el("g", { class: `circle ${cls || ""}`, "data-round": c.round || "" }, g);
    el("circle", { cx: x, cy: y, r, fill: "none", stroke: COLOUR[c.winner], "stroke-width": f.cell * 0.11 }, b);
    if (c.banker_six) {
      const t = el("text", { x, y, "font-size": f.cell * 0.42, "text-anchor": "middle", "dominant-baseline": "central", fill: COLOUR.B, class: "six" }, b);
      t.textContent = "6";
    }
    if (c.ties) tie(b, f, x, y, c.ties);
    pairDots(b, f, c, x, y, r);
  }

  function tie(g, f, x, y, count) {
    const d = f.cell * 0.34;
    el("line", { x1: x - d, y1: y + d, x2: x + d, y2: y - d, stroke: COLOUR.T, "stroke-width": f.cell * 0.1, class: "tie" }, g);
    if (count > 1) {
      const t = el("text", { x, y, "font-size": f.cell * 0.42, "text-anchor": "middle", "dominant-baseline": "central",
        fill: "#0b5d2a", "font-weight": "700", class: "tie-count" }, g);
      t.textContent = count;
    }
  }

  function derived(g, f, c, style, cls) {
    const [x, y] = centre(f, c), colour = COLOUR[c.colour];
    const b = el("g", { class: `mark ${c.colour} ${cls || ""}` }, g);
    if (style === "hollow") el("circle", { cx: x, cy: y, r: f.cell * 0.34, fill: "none", stroke: colour, "stroke-width": f.cell * 0.13 }, b);
    else if (style === "dot") el("circle", { cx: x, cy: y, r: f.cell * 0.36, fill: colour }, b);
    else { const d = f.cell * 0.34; el("line", { x1: x - d, y1: y + d, x2: x + d, y2: y - d, stroke: colour, "stroke-width": f.cell * 0.16, "stroke-linecap": "round" }, b); }
  }

  const STYLE = { big_eye: "hollow", small: "dot", cockroach: "slash" };

  /* Draw one road; `ask` is the hypothetical next entry (ASK P / ASK B), drawn blinking. */
  function draw(svg, name, m, ask) {
    const cells = name === "bead" ? m.bead : name === "big_road" ? m.big : m[name];
    const f = frame(svg, cells, ask);
    const g = el("g", { class: "cells" }, svg);
    const shown = (c) => c.col >= f.first;
    if (name === "bead") cells.filter(shown).forEach((c) => bead(g, f, c));
    else if (name === "big_road") {
      cells.filter(shown).forEach((c) => circle(g, f, c));
      if (m.leadingTies && f.first === 0) {
        const [x, y] = centre(f, { col: 0, row: 0 });
        tie(el("g", { class: "leading-ties" }, g), f, x, y, m.leadingTies);
      }
    } else cells.filter(shown).forEach((c) => derived(g, f, c, STYLE[name]));
    if (ask) {
      if (name === "bead") bead(g, f, ask, "ask-blink");
      else if (name === "big_road") circle(g, f, ask, "ask-blink");
      else derived(g, f, ask, STYLE[name], "ask-blink");
    }
    return f;
  }

  /* The three derived marks a button shows: Big Eye hollow, Small solid, Cockroach slash. */
  function buttonMarks(svg, p) {
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    svg.setAttribute("viewBox", "0 0 90 30");
    const f = { cell: 30, first: 0 };
    ["big_eye", "small", "cockroach"].forEach((name, i) => {
      if (p[name]) derived(svg, f, { col: i, row: 0, colour: p[name] }, STYLE[name]);
      else el("text", { x: i * 30 + 15, y: 16, "text-anchor": "middle", "dominant-baseline": "central", fill: "#999", "font-size": 16 }, svg).textContent = "–";
    });
  }

  return { fromJSON, applyRound, draw, buttonMarks };
})();
