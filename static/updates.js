/* An `update` as it comes over the wire carries what changed, never what the display already has (the rules are in
   docs/scale-out.md, and scoreboard/updates.py makes them). `SlimUpdate.expand(d, state, model)` makes the
   full update of it, given the state and the roads model (stats, patterns) the display holds: the whole new `state`,
   and for a round its road `cells`, `predict`, `stats` and `patterns` as the roads JSON has them (for a rebuild, its
   `roads` with `predict` as the roads JSON has it). */
"use strict";

const SlimUpdate = (() => {
  const FLAGS = ["natural", "player_pair", "banker_pair", "banker_six", "void"];
  const ROAD_FLAGS = ["player_pair", "banker_pair", "natural"];
  // A derived road's entry travels as [col, row, colour] (or null), a Bead or Big Road cell as [col, row]: the shape
  // says which, so no list of roads is kept here (the wire rules: docs/scale-out.md).
  const isMark = (c) => c === null || (Array.isArray(c) && c.length === 3);
  const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
  const clone = (v) => JSON.parse(JSON.stringify(v));

  /* A merge patch: an object merges key by key into an object, anything else replaces. */
  function merge(target, patch) {
    for (const [k, v] of Object.entries(patch)) {
      if (isObject(v) && isObject(target[k])) merge(target[k], v);
      else target[k] = clone(v);
    }
    return target;
  }

  /* A Bead Plate or Big Road cell sent as [col, row]: the rest is the round's. */
  function roadCell(c, r, marksSix, bigRoad) {
    const six = Boolean(r.banker_six) && marksSix;
    const cell = { col: c[0], row: c[1], round: r.round, winner: r.winner };
    if (bigRoad) cell.ties = 0;
    for (const f of ROAD_FLAGS) cell[f] = Boolean(r[f]);
    cell.banker_six = six;
    if (six && r.banker_cards) cell.banker_cards = r.banker_cards;
    return cell;
  }

  function predicted(p) {
    if (isObject(p.bead)) return p;   // sent whole
    const out = {}, cells = {};
    for (const [name, c] of Object.entries(p)) {
      if (isMark(c)) {
        out[name] = c ? c[2] : null;
        cells[name] = c ? { col: c[0], row: c[1], colour: c[2] } : null;
      } else out[name] = { col: c[0], row: c[1] };
    }
    out.cells = cells;
    return out;
  }

  function expand(d, state, model) {
    const full = Object.assign({}, d);
    delete full.changes; delete full.replace;
    const s = clone(state);
    if (d.cells) {
      const r = Object.assign({}, d.round);
      for (const f of FLAGS) if (!(f in r)) r[f] = false;
      full.round = r;
      s.last_result = r;
      s.deal = { player: [], player_points: null, banker: [], banker_points: null, next: "player" };
    }
    for (const k of d.replace || []) delete s[k];
    merge(s, d.changes || {});
    s.version = d.version;
    full.state = s;
    if (d.cells) {
      const marksSix = Boolean(s.capabilities && s.capabilities.banker_six);
      // Every road, and the tie, is in a round's cells, null where the round added nothing: the roads are those
      // the prediction names (it names each of them).
      const roads = Object.keys(Object.values(d.predict)[0] || {}).filter((name) => name !== "cells");
      const cells = Object.fromEntries([...roads, "tie"].map((name) => [name, null]));
      for (const [name, c] of Object.entries(d.cells)) {
        if (!Array.isArray(c)) cells[name] = c;
        else if (isMark(c)) cells[name] = { col: c[0], row: c[1], colour: c[2] };
        else cells[name] = roadCell(c, full.round, marksSix, name === "big_road");
      }
      full.cells = cells;
      full.predict = {};
      for (const [side, p] of Object.entries(d.predict)) full.predict[side] = predicted(p);
      full.stats = merge(clone(model.stats || {}), d.stats || {});
      full.patterns = "patterns" in d ? d.patterns : model.patterns;
    } else if (d.roads) {
      // Rebuilt roads come whole but for `predict`, which has a round's compact form.
      full.roads = Object.assign({}, d.roads, { predict: {} });
      for (const [side, p] of Object.entries(d.roads.predict)) full.roads.predict[side] = predicted(p);
    }
    return full;
  }

  return { expand, merge };
})();
