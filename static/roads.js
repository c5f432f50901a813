/* Drawing the roads of roads.md into SVG. A view only, and a module on its own: it reads no page global. Every
   position, row count and mark comes from the server's roads JSON; every colour and letter from the `look` its
   caller passes ({colours: {B, P, T, red, blue, grid, roadBg, tieCount, muted, markInk, pairRing},
   letters: {B, P, T}, roads: [{road, option, mark, title}, ...]}), which the pages take from the palette and their
   strings (`colours` makes the colours of the palette's variables). Which roads there are, and how each road's
   entries are drawn (its `mark`: bead, circle, hollow, dot or slash), is the server's data too (look.roads, made by
   scoreboard/roads/names.py): nothing here lists the roads. The board, the overlay, the pit and the <scoreboard-roads> component (embed.js) draw
   with it. */
"use strict";

const RoadView = (() => {
  const SVG = "http://www.w3.org/2000/svg";
  const OWN = ["bead", "circle"]; // the marks of the roads that draw rounds; the others draw derived marks
  // Digits and capitals are about 0.72 of the font size in the pages' fonts (DejaVu Sans, Noto Sans SC/TC): a
  // text mark `minMark` pixels tall needs a font this much larger.
  const CAP = 0.72;

  function el(name, attrs, parent) {
    const node = document.createElementNS(SVG, name);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
    if (parent) parent.appendChild(node);
    return node;
  }

  /* The roads of a look, by name ("big_road"), in the boards' order; `derived` only the derived ones. */
  function roads(look, derived) {
    return look.roads.filter((r) => !derived || !OWN.includes(r.mark)).map((r) => r.road);
  }

  /* The model a display keeps: each road's rows and flat cell list, fed by snapshots and deltas. A road is every
     field of the roads JSON that has `rows`. */
  function fromJSON(j) {
    const m = { roads: [], rows: {}, leadingTies: j.big_road.leading_ties, predict: j.predict, stats: j.stats, patterns: j.patterns || [] };
    for (const [name, road] of Object.entries(j)) {
      if (!road || road.rows === undefined) continue;
      m.roads.push(name);
      m.rows[name] = road.rows;
      m[name] = road.cells ? road.cells.slice() : road.columns.flat();
    }
    return m;
  }

  /* A `round` delta: the cells it added, the tie it counted, and the new predictions, stats and patterns. */
  function applyRound(m, d) {
    const c = d.cells;
    for (const name of m.roads) if (c[name]) m[name].push(c[name]);
    if (c.tie) {
      if ("leading_ties" in c.tie) m.leadingTies = c.tie.leading_ties;
      else if (m.big_road.length) m.big_road[m.big_road.length - 1].ties = c.tie.ties;
    }
    m.predict = d.predict; m.stats = d.stats; m.patterns = d.patterns || [];
  }

  /* The cell size and columns of a road in a box w x h: square cells, `rows` high.
     opts.cell: this size (a derived road at half the Big Road's cells), if the rows fit;
     opts.cols: exactly this many columns; opts.minCols: at least this many (a whole shoe). */
  function fitCells(w, h, rows, opts) {
    let cell = h / rows;
    if (opts.cell) cell = Math.min(cell, opts.cell);
    else if (opts.cols) cell = Math.min(cell, w / opts.cols);
    else if (opts.minCols) cell = Math.min(cell, w / opts.minCols);
    cell = Math.max(3, Math.floor(cell)); // whole pixels keep the grid lines sharp
    const fit = Math.max(1, opts.cols ? Math.min(opts.cols, Math.floor(w / cell)) : Math.floor(w / cell));
    return { cell, fit };
  }

  /* Lay the grid into the SVG's box. The newest mark and the ASK entry always stay in view, even when an older
     dragon tail reaches further right; `hidden` is how many grid columns are left of the view. */
  function frame(svg, rows, cells, ask, opts) {
    // opts.width / opts.height: the box, when the caller measured it already (reading it here forces a layout).
    const w = opts.width ?? svg.clientWidth, h = opts.height ?? svg.clientHeight;
    if (!w || !h) return null;
    const { cell, fit } = fitCells(w, h, rows, opts);
    let last = 0;
    for (const c of cells) if (c.col > last) last = c.col;
    if (ask && ask.col > last) last = ask.col;
    let first = Math.max(0, last - fit + 1);
    const newest = cells.length ? cells[cells.length - 1] : null;
    for (const keep of [newest, ask]) if (keep && keep.col < first) first = keep.col;
    if (ask && newest && Math.abs(ask.col - newest.col) >= fit) first = ask.col; // cannot show both: ASK wins
    const ox = 0, oy = Math.floor((h - rows * cell) / 2);
    svg.setAttribute("viewBox", `0 0 ${w} ${h}`);
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    const colours = opts.look.colours;
    const marks = Object.fromEntries(opts.look.roads.map((r) => [r.road, r.mark]));
    const grid = el("g", { class: "grid", stroke: colours.grid, "stroke-width": 1 }, svg);
    for (let i = 0; i <= fit; i++) el("line", { x1: ox + i * cell + 0.5, y1: oy, x2: ox + i * cell + 0.5, y2: oy + rows * cell }, grid);
    for (let r = 0; r <= rows; r++) el("line", { x1: ox, y1: oy + r * cell + 0.5, x2: ox + fit * cell, y2: oy + r * cell + 0.5 }, grid);
    return {
      cell, first, fit, ox, oy, colours, marks, letters: opts.look.letters, hidden: first, minMark: opts.minMark || 0,
      shown: (c) => c.col >= first && c.col < first + fit,
    };
  }

  function centre(f, c) {
    return [f.ox + (c.col - f.first + 0.5) * f.cell, f.oy + (c.row + 0.5) * f.cell];
  }

  /* A size from the cell, never under the smallest a mark may be (minMark), never over what the cell holds. */
  function sized(f, share, least, most) {
    return Math.min(f.cell * most, Math.max(f.cell * share, least));
  }

  function label(g, x, y, size, fill, cls, value) {
    const t = el("text", { x, y, "font-size": size, "text-anchor": "middle", "dominant-baseline": "central", fill, class: cls }, g);
    t.textContent = value;
    return t;
  }

  function pairDots(g, f, c, x, y, r) {
    const dot = sized(f, 0.1, f.minMark / 2, 0.16), d = Math.min(r * 0.72, f.cell / 2 - dot), k = f.colours;
    if (c.banker_pair) el("circle", { cx: x - d, cy: y - d, r: dot, fill: k.B, stroke: k.pairRing, "stroke-width": dot * 0.35, class: "pair banker-pair" }, g);
    if (c.player_pair) el("circle", { cx: x + d, cy: y + d, r: dot, fill: k.P, stroke: k.pairRing, "stroke-width": dot * 0.35, class: "pair player-pair" }, g);
  }

  function bead(g, f, c, cls) {
    const [x, y] = centre(f, c), r = f.cell * 0.44;
    const b = el("g", { class: `bead ${cls}`, "data-round": c.round || "" }, g);
    el("circle", { cx: x, cy: y, r, fill: f.colours[c.winner] }, b);
    if (c.banker_six) label(b, x, y, sized(f, 0.62, f.minMark / CAP, 0.8), f.colours.markInk, "six", "6");
    else label(b, x, y, sized(f, 0.52, f.minMark / CAP, 0.8), f.colours.markInk, "winner", f.letters[c.winner]);
    pairDots(b, f, c, x, y, r);
  }

  function tie(g, f, x, y, count, corner) {
    const d = f.cell * 0.34;
    el("line", { x1: x - d, y1: y + d, x2: x + d, y2: y - d, stroke: f.colours.T, "stroke-width": f.cell * 0.1, class: "tie" }, g);
    if (count > 1) {
      // With a Super 6 "6" in the circle, the count moves to the free top-right corner, haloed over the slash.
      const [tx, ty, size] = corner
        ? [x + f.cell * 0.34, y - f.cell * 0.3, sized(f, 0.28, f.minMark / CAP, 0.4)]
        : [x, y, sized(f, 0.44, f.minMark / CAP, 0.7)];
      const t = label(g, tx, ty, size, f.colours.tieCount, "tie-count", count);
      t.setAttribute("stroke", f.colours.roadBg);
      t.setAttribute("stroke-width", size * 0.22);
      t.setAttribute("paint-order", "stroke");
    }
  }

  function circle(g, f, c, cls) {
    const [x, y] = centre(f, c), r = f.cell * 0.36;
    const b = el("g", { class: `circle ${cls}`, "data-round": c.round || "" }, g);
    el("circle", { cx: x, cy: y, r, fill: "none", stroke: f.colours[c.winner], "stroke-width": f.cell * 0.11 }, b);
    // The 6 sits a little left and low when a tie count shares the cell's top-right corner.
    const shift = c.ties > 1 ? f.cell * 0.08 : 0;
    if (c.banker_six) label(b, x - shift, y + shift, sized(f, 0.44, f.minMark / CAP, 0.5), f.colours.B, "six", "6");
    if (c.ties) tie(b, f, x, y, c.ties, c.banker_six);
    pairDots(b, f, c, x, y, r);
  }

  function derived(g, f, c, style, cls) {
    const [x, y] = centre(f, c), colour = f.colours[c.colour];
    const b = el("g", { class: `mark ${c.colour} ${cls}` }, g);
    // Each mark at least minMark across (its stroke included), as far as the cell holds it.
    if (style === "hollow") {
      const w = sized(f, 0.13, 0, 0.13), r = sized(f, 0.33, (f.minMark - w) / 2, 0.4);
      el("circle", { cx: x, cy: y, r, fill: "none", stroke: colour, "stroke-width": w }, b);
    } else if (style === "dot") el("circle", { cx: x, cy: y, r: sized(f, 0.36, f.minMark / 2, 0.45), fill: colour }, b);
    else {
      const d = sized(f, 0.33, f.minMark / 2 / Math.SQRT2 + 0.5, 0.42);
      el("line", { x1: x - d, y1: y + d, x2: x + d, y2: y - d, stroke: colour, "stroke-width": f.cell * 0.16, "stroke-linecap": "round" }, b);
    }
  }

  function drawCell(g, f, name, c, cls) {
    const mark = f.marks[name];
    if (mark === "bead") bead(g, f, c, cls);
    else if (mark === "circle") circle(g, f, c, cls);
    else derived(g, f, c, mark, cls);
  }

  /* Draw one road; `ask` is the hypothetical next entry (ASK P / ASK B), drawn blinking. `opts.look` gives the
     colours and letters; opts.cell / cols / minCols size the cells (fitCells); opts.minMark is the smallest size a
     mark that carries meaning may have, in pixels; opts.width and opts.height the SVG's box, if already measured. Returns the frame: its `cell`, `fit` (columns shown) and
     `hidden` (grid columns left of the view). */
  function draw(svg, name, m, ask, opts) {
    const cells = m[name];
    const f = frame(svg, m.rows[name], cells, ask, opts);
    if (!f) return null;
    const g = el("g", { class: "cells" }, svg);
    cells.forEach((c, i) => { if (f.shown(c)) drawCell(g, f, name, c, i === cells.length - 1 ? "newest" : ""); });
    if (f.marks[name] === "circle" && m.leadingTies && f.first === 0) {
      const [x, y] = centre(f, { col: 0, row: 0 });
      tie(el("g", { class: "leading-ties" }, g), f, x, y, m.leadingTies, false);
    }
    if (ask && f.shown(ask)) drawCell(g, f, name, ask, "ask-blink");
    return f;
  }

  /* The hypothetical entry ASK `side` adds to road `name`, or null: a derived road's mark is in the prediction's
     `cells`, the Bead and Big Road's place is the road's own field (and the winner is the side asked). */
  function askCell(m, name, side) {
    if (!side || !m.predict) return null;
    const p = m.predict[side];
    if (p.cells && name in p.cells) return p.cells[name] || null;
    return p[name] ? { ...p[name], winner: side } : null;
  }

  /* The three derived marks a button shows: Big Eye hollow, Small solid, Cockroach slash; a dash where none. */
  function buttonMarks(svg, p, look) {
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    svg.setAttribute("viewBox", "0 0 90 30");
    const f = { cell: 30, first: 0, ox: 0, oy: 0, colours: look.colours, minMark: 0 };
    look.roads.filter((r) => !OWN.includes(r.mark)).forEach(({ road: name, mark }, i) => {
      if (p && p[name]) derived(svg, f, { col: i, row: 0, colour: p[name] }, mark, "");
      else label(svg, i * 30 + 15, 15, 16, f.colours.muted, "none", "–");
    });
  }

  /* The colours a `look` gives, from `read(name)` of the palette's variables by their CSS names ("banker",
     "road-bg", ...): a page reads them from /palette.css, an embedded component from /api/look. */
  function colours(read) {
    return {
      B: read("banker"), P: read("player"), T: read("tie"), red: read("banker"), blue: read("player"),
      grid: read("grid"), roadBg: read("road-bg"), tieCount: read("tie-count"), muted: read("road-title"),
      markInk: read("mark-ink"), pairRing: read("pair-ring"),
    };
  }

  return { roads, fromJSON, applyRound, fitCells, draw, askCell, buttonMarks, colours };
})();
