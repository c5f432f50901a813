/* The pit monitor: every table (or ?tables=) on one Socket.IO connection (`join_pit`), each with its roads in
   miniature, counts, good-road badges and alarms. The thresholds are the server's: a table's stale_after, the
   notice time; this page only compares them with the server's clock. */
"use strict";

(() => {
  const body = document.body, grid = document.getElementById("grid");
  const S = Page.strings;
  const look = Page.look();
  const tables = new Map();
  document.querySelectorAll(".tcard").forEach((el) => tables.set(el.dataset.table, { el, state: null, model: null, displays: null }));
  const asked = body.dataset.tables ? body.dataset.tables.split(",") : null;

  /* As many columns as make the cards largest for this many tables on this screen. */
  function fit() {
    const n = Math.max(1, tables.size), W = grid.clientWidth, H = grid.clientHeight, ASPECT = 1.45;
    let best = { size: 0, cols: 1, rows: n };
    for (let cols = 1; cols <= n; cols++) {
      const rows = Math.ceil(n / cols), w = W / cols, h = H / rows;
      const size = Math.min(w, h * ASPECT);
      if (size > best.size) best = { size, cols, rows };
    }
    grid.style.setProperty("--cols", best.cols);
    grid.style.setProperty("--rows", best.rows);
    grid.style.setProperty("--u", `${Math.min(W / best.cols / ASPECT, H / best.rows) / 100}px`);
    // Small cards (40 tables on a 720p screen) keep what a supervisor acts on: name, phase, alarms, roads, counts.
    grid.classList.toggle("compact", H / best.rows < 180);
  }

  function el(t, selector) { return t.el.querySelector(selector); }
  function set(node, value) { if (node.textContent !== String(value)) node.textContent = value; }

  function render(t, roadsChanged) {
    const s = t.state;
    t.el.dataset.version = s.version;
    set(el(t, ".tname"), s.name);
    set(el(t, ".shoe"), s.shoe ? s.shoe.number : "—");
    set(el(t, ".round"), s.round);
    const phase = el(t, ".phase");
    set(phase, S.phase[s.phase] || s.phase);
    phase.className = `phase ${s.phase}`;
    if (roadsChanged) renderRoads(t);
    renderAlarms(t);
  }

  function renderRoads(t) {
    const m = t.model;
    for (const name of RoadView.ROADS) {
      const svg = el(t, `svg[data-road="${name}"]`);
      // Miniatures show a good stretch of the shoe, however tall the card: at least 24 Big Road columns.
      if (svg) RoadView.draw(svg, name, m, null, { look, minCols: name === "big_road" ? 24 : 16 });
    }
    const recent = el(t, ".recent");
    recent.replaceChildren(...m.bead.slice(-8).map((c) => {
      const b = document.createElement("span");
      b.className = `res ${c.winner}`;
      b.textContent = c.banker_six ? "6" : S.winner[c.winner];
      return b;
    }));
    while (recent.firstChild && recent.scrollWidth > recent.clientWidth) recent.removeChild(recent.firstChild);
    el(t, ".counts").replaceChildren(...["B", "P", "T"].flatMap((w) => {
      const label = document.createElement("span"), count = document.createElement("b");
      label.className = `res ${w}`; label.textContent = S.winner[w];
      count.className = `c${w}`; count.textContent = m.stats[w] || 0;
      return [label, count];
    }));
    el(t, ".badges").replaceChildren(...m.patterns.map((p) => {
      const chip = document.createElement("span"), name = document.createElement("span"), run = document.createElement("b");
      const code = p.pattern === "one_hall_two_rooms" ? `${p.pattern}:${RoadView.lastSide(m) === "P" ? "B" : "P"}` : p.pattern;
      chip.className = `chip ${p.pattern}`;
      name.textContent = S.patterns[code] || p.label;
      run.className = "run"; run.textContent = p.length;
      chip.append(name, run);
      return chip;
    }));
  }

  function duration(seconds) {
    const s = Math.floor(seconds);
    return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
  }

  /* The alarms of surfaces.md, most urgent first. */
  function alarms(t) {
    const s = t.state, out = [], now = Page.now();
    if (!s) return out;
    const open = s.shoe && s.phase !== "shoe_finished";
    const last = s.last_event_at;
    if (open && last !== null && now - last > s.stale_after) out.push(["stale", Page.fmt(S.alarm.stale, { time: duration(now - last) })]);
    const n = s.notice;
    if (n && now - n.at < Page.setting("noticeSeconds")) {
      if (n.irregularity) out.push(["irregularity", S.alarm.irregularity]);
      else if (n.kind === "void") out.push(["void", S.alarm.void]);
    }
    if (open && s.shoe.cut) out.push(["cut", S.alarm.cut]);
    if (t.displays === 0) out.push(["no_display", S.alarm.no_display]);
    return out;
  }

  function renderAlarms(t) {
    const list = alarms(t), box = el(t, ".alarms");
    const key = list.map(([k, text]) => `${k}:${text}`).join("|");
    if (box.dataset.key !== key) {
      box.dataset.key = key;
      box.replaceChildren(...list.map(([kind, text]) => {
        const a = document.createElement("span");
        a.className = `alarm ${kind}`; a.textContent = text;
        return a;
      }));
    }
    t.el.classList.toggle("alarmed", list.some(([k]) => k !== "cut"));
    if (t.displays !== null) {
      const d = el(t, ".displays");
      d.hidden = false;
      set(d, Page.fmt(S.displays, { count: t.displays }));
    }
  }

  function countAlarms() {
    const n = [...tables.values()].filter((t) => t.el.classList.contains("alarmed")).length;
    const box = document.getElementById("alarm-count");
    box.hidden = n === 0;
    set(box, `⚠ ${n}`);
  }

  function connection(on) {
    body.classList.remove("connecting");
    body.classList.toggle("offline", !on);
    document.getElementById("veil").hidden = on;
    const live = document.getElementById("live");
    live.classList.toggle("off", !on);
    live.textContent = on ? S.live : S.offline;
  }

  const socket = Live.connect((on) => { if (!on) connection(false); });
  Live.pit(socket, asked, {
    snapshot(answer) {
      connection(true);
      for (const snap of answer.tables) {
        const t = tables.get(snap.table);
        if (!t) continue;
        t.state = snap.state; t.model = RoadView.fromJSON(snap.roads);
        t.displays = answer.displays ? answer.displays[snap.table] ?? null : null;
        render(t, true);
      }
      countAlarms();
    },
    update(d) {
      const t = tables.get(d.table);
      t.state = d.state;
      if (d.roads) t.model = RoadView.fromJSON(d.roads);
      else if (d.cells) RoadView.applyRound(t.model, d);
      render(t, Boolean(d.roads || d.cells));
      countAlarms();
    },
    displays(d) { const t = tables.get(d.table); t.displays = d.displays; if (t.state) renderAlarms(t); countAlarms(); },
  });

  setInterval(() => { tables.forEach((t) => t.state && renderAlarms(t)); countAlarms(); }, 1000);
  window.addEventListener("resize", () => { fit(); tables.forEach((t) => t.model && renderRoads(t)); });
  // The Chinese font can arrive after the first drawing and widen the texts: fit the recent results again.
  document.fonts.addEventListener("loadingdone", () => tables.forEach((t) => t.model && renderRoads(t)));
  fit();
  Page.clock(document.getElementById("clock"), "24h");
  Page.pixelShift(Page.setting("shiftEvery"), Page.setting("shiftPixels"));
})();
