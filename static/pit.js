/* The pit monitor: every table (or ?tables=) on one Socket.IO connection (`join_pit`), each with its roads in
   miniature, counts and good-road badges; and the service's alarms (floor.md "Alarms"), latched until a supervisor
   acknowledges them. The server raises and clears every alarm and says who may acknowledge which: this page shows
   them (unacknowledged first, in words and a sign, not only a colour), plays the optional sound and posts the
   acknowledgements of the signed-in operator (the operator page's session). */
"use strict";

(() => {
  const body = document.body, grid = document.getElementById("grid");
  const S = Page.strings, A = S.alarms;
  const look = Page.look();
  const PIT = JSON.parse(document.getElementById("pit-data").textContent);
  const SIGN = { alarm: "⚠", info: "ℹ", done: "✓", sound: "♪" };
  const REMIND_MS = 60000; // the sound again while an alarm waits for its acknowledgement
  const tables = new Map();
  document.querySelectorAll(".tcard").forEach((el) => tables.set(el.dataset.table, { el, state: null, model: null, displays: null }));
  const asked = body.dataset.tables ? body.dataset.tables.split(",") : null;
  const alarms = new Map(); // id -> the alarm as the server last sent it
  const $ = (id) => document.getElementById(id);

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
  function make(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = text;
    return e;
  }

  function render(t, roadsChanged) {
    const s = t.state;
    t.el.dataset.version = s.version;
    set(el(t, ".tname"), s.name);
    set(el(t, ".shoe"), s.shoe ? s.shoe.number : "—");
    set(el(t, ".round"), s.round);
    renderPhase(t);
    if (roadsChanged) renderRoads(t);
    if (t.displays !== null) {
      const d = el(t, ".displays");
      d.hidden = false;
      set(d, Page.fmt(S.displays, { count: t.displays }));
    }
  }

  /* The phase, or the betting window while the table announces it (page.js bets: never while the pit is not live);
     its seconds tick down once a second. */
  let pitLive = false;
  function renderPhase(t) {
    const s = t.state, phase = el(t, ".phase"), bets = Page.bets(s, pitLive);
    set(phase, bets ? bets.text : S.phase[s.phase] || s.phase);
    phase.className = `phase ${bets ? bets.cls : s.phase}`;
  }
  window.setInterval(() => {
    for (const t of tables.values()) if (t.state && t.state.bets && t.state.bets.open) renderPhase(t);
  }, 1000);

  function renderRoads(t) {
    const m = t.model;
    for (const name of RoadView.roads(look)) {
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
    el(t, ".counts").replaceChildren(...["B", "P", "T"].flatMap((w) => {
      const label = document.createElement("span"), count = document.createElement("b");
      label.className = `res ${w}`; label.textContent = S.winner[w];
      count.className = `c${w}`; count.textContent = m.stats[w] || 0;
      return [label, count];
    }));
    // Trimmed once the counts beside it have their width (they take what the strip leaves).
    while (recent.firstChild && recent.scrollWidth > recent.clientWidth) recent.removeChild(recent.firstChild);
    el(t, ".badges").replaceChildren(...m.patterns.map((p) => {
      const chip = document.createElement("span"), name = document.createElement("span"), run = document.createElement("b");
      const code = p.hall ? `${p.pattern}:${p.hall}` : p.pattern; // a one-hall-two-rooms is named by its hall
      chip.className = `chip ${p.pattern}`;
      name.textContent = S.patterns[code] || p.label;
      run.className = "run"; run.textContent = p.length;
      chip.append(name, run);
      return chip;
    }));
  }

  /* -- alarms -------------------------------------------------------------------------------------------------- */

  const clock = new Intl.DateTimeFormat(document.documentElement.lang, { hour: "numeric", minute: "2-digit", second: "2-digit", hourCycle: "h23" });
  const at = (seconds) => clock.format(new Date(seconds * 1000));
  const kindOf = (a) => A.kinds[a.kind] || { title: a.kind, text: "%(detail)s" };
  const shown = (a) => !asked || asked.includes(a.table);
  // Unacknowledged first, alarms before information, newest first.
  const order = (x, y) => (y.active - x.active) || ((x.severity === "info") - (y.severity === "info")) || (y.raised_at - x.raised_at);

  function text(a) {
    const values = { ...a.values };
    return Page.fmt(kindOf(a).text, values) || a.detail;
  }

  function mayAcknowledge(a) {
    const op = PIT.operator;
    return Boolean(op && a.active && (op.may[a.table] || []).includes(PIT.ack[a.kind] || "ack_alarm"));
  }

  function tableName(a) {
    const t = tables.get(a.table);
    return t && t.state ? t.state.name : a.table;
  }

  function item(a) {
    const li = make("li", `alarm-item sev-${a.severity}${a.active ? " active" : " done"}${a.cleared_at ? " cleared" : ""}`);
    li.dataset.alarm = a.id; li.dataset.kind = a.kind; li.dataset.table = a.table;
    const head = make("div", "ai-head");
    const sign = a.active ? SIGN[a.severity] || SIGN.alarm : SIGN.done;
    head.append(make("span", "ai-badge", `${sign} ${A.severity[a.severity] || a.severity}`), make("b", "ai-title", kindOf(a).title), make("span", "ai-table", tableName(a)));
    const detail = make("div", "ai-detail");
    if (a.round !== null && a.round !== undefined) detail.append(make("span", "ai-round", Page.fmt(A.round, { round: a.round })));
    detail.append(make("span", "ai-text", text(a)));
    const state = make("div", "ai-state");
    state.append(make("span", null, Page.fmt(A.raised, { time: at(a.raised_at) })));
    if (a.active) {
      state.append(make("span", a.cleared_at ? "ai-cleared" : "ai-ongoing", a.cleared_at ? Page.fmt(A.cleared, { time: at(a.cleared_at) }) : (kindOf(a).condition ? A.ongoing : "")));
    } else {
      state.append(make("span", "ai-acknowledged", Page.fmt(A.acknowledged, { operator: a.acknowledged_by, time: at(a.acknowledged_at) })));
      if (a.cleared_at) state.append(make("span", null, Page.fmt(A.was_cleared, { time: at(a.cleared_at) })));
      if (a.note) state.append(make("span", "ai-note", a.note));
    }
    li.append(head, detail, state);
    if (mayAcknowledge(a)) li.append(ackForm(a));
    return li;
  }

  function ackForm(a) {
    const form = make("form", "ai-ack");
    const note = make("input"); note.name = "note"; note.maxLength = 200; note.placeholder = A.note; note.autocomplete = "off";
    note.setAttribute("aria-label", A.note);
    const button = make("button", "ai-ack-button", A.acknowledge); button.type = "submit";
    const result = make("span", "ai-result"); result.setAttribute("role", "status");
    form.append(note, button, result);
    form.addEventListener("submit", (e) => { e.preventDefault(); acknowledge(a, form); });
    return form;
  }

  async function acknowledge(a, form) {
    const button = form.querySelector("button"), result = form.querySelector(".ai-result");
    const note = form.elements.note.value.trim();
    button.disabled = true; result.textContent = A.acknowledging;
    const url = `${PIT.ack_url}${encodeURIComponent(a.id)}/ack`;
    const { status, reply } = await sendAction("POST", url, note ? { note } : {}, PIT.csrf);
    if (reply && reply.alarm) { take([reply.alarm]); return; } // done, or done already by someone else
    if (status === 0) {
      result.textContent = A.unsure;
    } else {
      result.textContent = Page.fmt(A.refused, { message: reply ? reply.message : String(status) });
      if (status === 401) window.setTimeout(() => window.location.reload(), 3000);
    }
    button.disabled = false;
  }

  function take(list) { for (const a of list) if (shown(a)) alarms.set(a.id, a); renderAlarms(); }

  function renderAlarms() {
    const all = [...alarms.values()].sort(order);
    const active = all.filter((a) => a.active), done = all.filter((a) => !a.active);
    const history = $("history-toggle").getAttribute("aria-pressed") === "true";
    keyed($("alarm-list"), active);
    keyed($("history-list"), done);
    $("alarm-none").hidden = active.length > 0;
    $("history-none").hidden = done.length > 0;
    $("alarm-history").hidden = !history;
    const panel = $("alarm-panel"), was = panel.hidden;
    panel.hidden = !(active.length || history || Screens.open());
    const waiting = active.filter((a) => a.severity !== "info").length;
    const count = $("alarm-count");
    count.hidden = active.length === 0;
    set(count, `${SIGN.alarm} ${Page.fmt(A.to_acknowledge, { count: active.length })}`);
    count.classList.toggle("info-only", waiting === 0);
    const ongoing = done.filter((a) => kindOf(a).condition && !a.cleared_at);
    for (const t of tables.values()) {
      const mine = (a) => a.table === t.el.dataset.table;
      renderCard(t, active.filter(mine), ongoing.filter(mine));
    }
    Sound.waiting(waiting > 0);
    if (panel.hidden !== was) relayout(); // the grid is wider or narrower: the cards are sized again
  }

  function relayout() { fit(); tables.forEach((t) => t.model && renderRoads(t)); }

  /* A list's items, redrawn only when what they show changed (a note being typed is kept). */
  function keyed(list, items) {
    const key = items.map((a) => `${a.id}:${a.active}:${a.cleared_at}:${mayAcknowledge(a)}`).join("|");
    if (list.dataset.key === key) return;
    list.dataset.key = key;
    const typing = new Map([...list.querySelectorAll(".alarm-item")].map((li) => [li.dataset.alarm, li.querySelector("input")?.value || ""]));
    list.replaceChildren(...items.map((a) => {
      const li = item(a), note = li.querySelector("input");
      if (note && typing.get(a.id)) note.value = typing.get(a.id);
      return li;
    }));
  }

  /* A table's card: its unacknowledged alarms as labels (sign, title, round), framed when one is an alarm; and,
     quieter, the conditions still going on that were acknowledged (a table still without its screens). One label
     per kind, for its first alarm in the panel's order, with how many more wait: alarms latch, and a card that
     nobody acknowledged for a few shoes would otherwise fill with cut-card labels and squeeze its roads away. */
  function renderCard(t, active, ongoing) {
    const box = el(t, ".alarms");
    const key = [...active, ...ongoing].map((a) => `${a.id}:${a.active}:${a.cleared_at}`).join("|");
    if (box.dataset.key !== key) {
      box.dataset.key = key;
      const groups = new Map();
      for (const a of [...active, ...ongoing]) {
        const k = `${a.active}:${a.kind}`;
        if (groups.has(k)) groups.get(k).count += 1;
        else groups.set(k, { a, count: 1 });
      }
      box.replaceChildren(...[...groups.values()].map(({ a, count }) => {
        const sign = a.active ? SIGN[a.severity] || SIGN.alarm : SIGN.done;
        const label = make("span", `alarm sev-${a.severity} ${a.kind}`, `${sign} ${kindOf(a).title}`);
        if (a.round !== null && a.round !== undefined) label.append(make("span", "alarm-round", ` · ${Page.fmt(A.round, { round: a.round })}`));
        if (count > 1) label.append(make("span", "alarm-more", ` ${Page.fmt(A.more, { count: count - 1 })}`));
        label.dataset.count = String(count);
        label.classList.toggle("cleared", Boolean(a.cleared_at));
        label.classList.toggle("done", !a.active);
        return label;
      }));
      // The labels took or gave back height: the card's roads are fitted to their box again.
      if (t.model) renderRoads(t);
    }
    t.el.classList.toggle("alarmed", active.some((a) => a.severity !== "info"));
  }

  /* -- the sound: off until asked for, and then only after a click (browsers play nothing before one) ----------- */

  const Sound = (() => {
    const KEY = "scoreboard.pit.sound", button = $("sound");
    let ctx = null, state = "off", timer = null, chimes = 0;
    try { if (window.localStorage.getItem(KEY) === "on") state = "ask"; } catch (e) { /* no storage: off */ }

    function save(on) { try { window.localStorage.setItem(KEY, on ? "on" : "off"); } catch (e) { /* kept for this page only */ } }

    function show() {
      button.className = `pit-button sound ${state}`;
      button.setAttribute("aria-pressed", String(state === "on"));
      button.textContent = `${SIGN.sound} ${state === "on" ? A.sound_on : state === "ask" ? A.sound_ask : A.sound_off}`;
    }

    function chime() {
      if (state !== "on" || !ctx) return;
      const t0 = ctx.currentTime;
      [[880, 0], [660, 0.28], [880, 0.56]].forEach(([freq, start]) => {
        const osc = ctx.createOscillator(), gain = ctx.createGain();
        osc.type = "sine"; osc.frequency.value = freq;
        gain.gain.setValueAtTime(0.0001, t0 + start);
        gain.gain.exponentialRampToValueAtTime(0.35, t0 + start + 0.02);
        gain.gain.exponentialRampToValueAtTime(0.0001, t0 + start + 0.24);
        osc.connect(gain).connect(ctx.destination);
        osc.start(t0 + start); osc.stop(t0 + start + 0.26);
      });
      body.dataset.chimes = String(++chimes);
    }

    button.addEventListener("click", () => {
      if (state === "on") { state = "off"; save(false); } else {
        ctx = ctx || new (window.AudioContext || window.webkitAudioContext)();
        ctx.resume();
        state = "on"; save(true);
      }
      show();
    });

    /* Whether an alarm waits for its acknowledgement: the sound reminds of it every REMIND_MS. */
    function waiting(any) {
      if (any && !timer) timer = window.setInterval(chime, REMIND_MS);
      if (!any && timer) { window.clearInterval(timer); timer = null; }
    }

    show();
    return { chime, waiting };
  })();

  /* -- the screens (floor.md "Screens"): each table's, connected or not, listed for a signed-in operator from the
     service every few seconds while the list is open; a supervisor assigns, identifies and reloads them ------- */

  const Screens = (() => {
    const SC = S.screens, button = $("screens-toggle"), section = $("screens-section"), list = $("screens-list");
    const EVERY_MS = 3000, PAGES = ["board", "overlay", "pit", "screen"], WITH_TABLE = ["board", "overlay"];
    let shown = false, timer = null;

    function open() { return shown; }

    function toggle() {
      shown = !shown;
      button.setAttribute("aria-pressed", String(shown));
      section.hidden = !shown;
      window.clearTimeout(timer);
      if (shown) refresh();
      renderAlarms();
    }

    async function refresh() {
      window.clearTimeout(timer);
      if (!shown) return;
      if (!PIT.screens_url) { render(null); return; }
      try {
        const r = await fetch(PIT.screens_url, { credentials: "same-origin", headers: { Accept: "application/json" } });
        if (r.status === 401) { render(null); return; }
        if (r.ok) render((await r.json()).screens);
      } catch (e) { /* the next look tries again */ }
      timer = window.setTimeout(refresh, EVERY_MS);
    }

    /* The table a screen is on: the one it shows while connected, else the one it is assigned to. */
    const tableOf = (s) => (s.connected || !s.assigned ? s.table : s.assigned.table) || null;

    function render(screens) {
      if (screens === null) {
        const link = make("a", "pit-button", SC.sign_in); link.href = PIT.sign_in;
        list.replaceChildren(link);
        list.dataset.key = "";
        return;
      }
      const key = JSON.stringify(screens.map((s) => [s.id, s.connected, s.page, s.table, s.lang, s.viewport, s.assigned, Math.floor((s.last_seen || 0) / 60)]));
      if (list.dataset.key === key || list.contains(document.activeElement) && document.activeElement.tagName === "SELECT") return;
      list.dataset.key = key;
      const names = new Map((PIT.tables || []).map((t) => [t.id, t.name]));
      const groups = [...(PIT.tables || []).filter((t) => !asked || asked.includes(t.id)).map((t) => t.id), null];
      // A screen on a table this pit does not show is listed with those showing none (where it can be moved).
      const group = (s) => (groups.includes(tableOf(s)) ? tableOf(s) : null);
      list.replaceChildren(...groups.map((table) => {
        const mine = screens.filter((s) => group(s) === table);
        const box = make("section", "screens-group");
        box.dataset.table = table || "";
        box.append(make("h3", null, table === null ? SC.no_table : `${names.get(table) || table} · ${table}`));
        if (!mine.length) box.append(make("p", "alarm-none", SC.none));
        else {
          const ol = make("ol", "screen-items");
          ol.append(...mine.map(item));
          box.append(ol);
        }
        return box;
      }));
    }

    function item(s) {
      const li = make("li", `screen-item ${s.connected ? "connected" : "gone"}`);
      li.dataset.screen = s.id;
      const head = make("div", "sc-head");
      const state = s.connected ? `● ${SC.connected}` : `○ ${s.last_seen ? Page.fmt(SC.gone, { time: at(s.last_seen) }) : SC.never}`;
      head.append(make("b", "sc-id", s.id), make("span", "sc-state", state));
      const facts = [SC.pages[s.page] || s.page, s.lang, s.viewport ? `${s.viewport[0]}×${s.viewport[1]}` : null, s.address].filter(Boolean);
      li.append(head, make("div", "sc-facts", facts.join(" · ")));
      if (s.assigned) li.append(make("div", "sc-assigned", Page.fmt(SC.assigned_by, { operator: s.assigned.by })));
      if (PIT.manage_screens) li.append(controls(s));
      return li;
    }

    function select(name, options, value) {
      const el = make("select"); el.name = name; el.setAttribute("aria-label", SC[name]);
      for (const [v, label] of options) {
        const o = make("option", null, label); o.value = v; o.selected = v === value;
        el.append(o);
      }
      return el;
    }

    function controls(s) {
      const form = make("form", "sc-controls");
      const now = s.assigned || s;
      const page = select("page", PAGES.map((p) => [p, SC.pages[p]]), now.page);
      const table = select("table", (PIT.tables || []).map((t) => [t.id, t.name]), now.table || (PIT.tables[0] || {}).id);
      const sync = () => { table.disabled = !WITH_TABLE.includes(page.value); };
      page.addEventListener("change", sync); sync();
      const assign = make("button", "ai-ack-button", SC.assign); assign.type = "submit";
      const identify = make("button", "pit-button", SC.identify); identify.type = "button"; identify.dataset.act = "identify";
      const reload = make("button", "pit-button", SC.reload); reload.type = "button"; reload.dataset.act = "reload";
      const result = make("span", "ai-result"); result.setAttribute("role", "status");
      form.append(page, table, assign, identify, reload, result);
      form.addEventListener("submit", (e) => {
        e.preventDefault();
        const body = { page: page.value, table: WITH_TABLE.includes(page.value) ? table.value : null };
        if (body.page !== now.page) body.options = {};
        send(form, "PUT", `${PIT.screens_url}/${encodeURIComponent(s.id)}`, body);
      });
      for (const b of [identify, reload]) {
        b.addEventListener("click", () => send(form, "POST", `${PIT.screens_url}/${encodeURIComponent(s.id)}/${b.dataset.act}`, null));
      }
      return form;
    }

    async function send(form, method, url, body) {
      const result = form.querySelector(".ai-result"), buttons = form.querySelectorAll("button");
      buttons.forEach((b) => { b.disabled = true; });
      result.textContent = "…";
      const { status, reply } = await sendAction(method, url, body, PIT.csrf);
      const ok = status >= 200 && status < 300;
      if (status === 0) result.textContent = SC.unsure;
      else result.textContent = ok ? SC.done : Page.fmt(SC.refused, { message: reply ? reply.message : String(status) });
      if (ok) window.setTimeout(refresh, 500);
      buttons.forEach((b) => { b.disabled = false; });
    }

    button.addEventListener("click", toggle);
    return { open, refresh };
  })();

  /* -- the connection ------------------------------------------------------------------------------------------ */

  function connection(on) {
    pitLive = on;
    for (const t of tables.values()) if (t.state) renderPhase(t);
    body.classList.remove("connecting");
    body.classList.toggle("offline", !on);
    $("veil").hidden = on;
    const live = $("live");
    live.classList.toggle("off", !on);
    live.textContent = on ? S.live : S.offline;
  }

  function refetch() {
    socket.timeout(10000).emit("pit_alarms", { tables: asked }, (err, answer) => {
      if (err || !answer || !answer.alarms) { window.setTimeout(refetch, 3000); return; }
      alarms.clear(); take(answer.alarms);
    });
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
      if (answer.alarms) { alarms.clear(); take(answer.alarms); } else refetch();
    },
    update(d) {
      const t = tables.get(d.table);
      t.state = d.state;
      if (d.roads) t.model = RoadView.fromJSON(d.roads);
      else if (d.cells) RoadView.applyRound(t.model, d);
      render(t, Boolean(d.roads || d.cells));
    },
    displays(d) { const t = tables.get(d.table); t.displays = d.displays; if (t.state) render(t, false); },
  });
  socket.on("alarm", (m) => {
    if (m.change === "cleared") { if (!asked || asked.includes(m.table)) refetch(); return; }
    const fresh = (m.alarms || []).filter((a) => shown(a) && !alarms.has(a.id));
    take(m.alarms || []);
    if (m.change === "raised" && fresh.some((a) => a.severity !== "info")) Sound.chime();
  });

  $("history-toggle").addEventListener("click", (e) => {
    const on = e.currentTarget.getAttribute("aria-pressed") !== "true";
    e.currentTarget.setAttribute("aria-pressed", String(on));
    renderAlarms();
  });
  $("alarm-count").addEventListener("click", () => $("alarm-panel").scrollTo({ top: 0 }));

  window.addEventListener("resize", relayout);
  // The Chinese font can arrive after the first drawing and widen the texts: fit the recent results again.
  document.fonts.addEventListener("loadingdone", () => tables.forEach((t) => t.model && renderRoads(t)));
  fit();
  renderAlarms();
  Page.clock($("clock"), "24h");
  Page.pixelShift(Page.setting("shiftEvery"), Page.setting("shiftPixels"));
})();
