/* The operator page: polls the operator's view of the chosen table, and posts each action only after a second,
   explicit click on its confirm panel. The session cookie and the CSRF token authenticate; the page never holds the
   operator's token. Every sentence it shows comes from the page's data block. */
"use strict";

(() => {
  const data = JSON.parse(document.getElementById("operator-data").textContent);
  const S = data.strings;
  const SUIT = { S: "♠", H: "♥", D: "♦", C: "♣" };
  const DETAIL_MS = 1500, TABLES_MS = 5000;
  let current = null;      // the table on show
  let detail = null;       // its last operator view: {table, rounds, next: {seq, sig}}
  let auditVersion = -1;   // the table version the audit was last read at
  let pending = null;      // the action awaiting confirmation: {form, table, body}
  let detailTimer = null;

  const $ = (id) => document.getElementById(id);
  const fmt = (template, values) => template.replace(/\{(\w+)\}/g, (m, k) => (k in values && values[k] !== null ? String(values[k]) : m));

  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = text;
    if (cls) e.className = cls;
    return e;
  }

  async function getJSON(url) {
    const r = await fetch(url, { headers: { Accept: "application/json" }, cache: "no-store", credentials: "same-origin" });
    if (r.status === 401) { signedOut(); throw new Error("signed out"); }
    if (!r.ok) throw new Error(`${r.status}`);
    return r.json();
  }

  function signedOut() {
    stale(S.codes.signed_out);
    window.setTimeout(() => window.location.reload(), 1500);
  }

  function stale(message) {
    const s = $("stale");
    s.hidden = !message;
    s.textContent = message || "";
  }

  /* -- tables ------------------------------------------------------------------------------------------------- */

  function tabs() { return Array.from(document.querySelectorAll(".op-tab")); }

  async function refreshTables() {
    try {
      const reply = await getJSON(data.urls.tables);
      for (const t of reply.tables) badge(t.table, t.phase);
    } catch (e) { /* the detail poll reports a lost connection */ }
  }

  function badge(tableId, phase) {
    const tab = tabs().find((b) => b.dataset.table === tableId);
    if (!tab) return;
    const b = tab.querySelector("[data-badge]");
    b.textContent = S.phase[phase] || phase;
    b.className = `op-badge ${phase}`;
  }

  function choose(tableId) {
    if (pending) cancel(pending.form);
    current = tableId; detail = null; auditVersion = -1;
    for (const tab of tabs()) tab.setAttribute("aria-pressed", String(tab.dataset.table === tableId));
    $("desk").hidden = false;
    $("audit-csv").href = `${data.urls.table}${encodeURIComponent(tableId)}/audit?format=csv`;
    // The forms this operator's role allows here (the server's list; it judges every action all the same).
    const may = data.may[tableId] || [];
    let offered = 0;
    for (const form of document.querySelectorAll(".op-action")) {
      form.hidden = !form.dataset.needs.split(" ").some((a) => may.includes(a));
      if (!form.hidden) offered += 1;
    }
    $("no-actions").hidden = offered > 0;
    $("settings-panel").hidden = !may.includes("settings");
    for (const r of document.querySelectorAll(".op-result")) r.textContent = "";
    refreshDetail();
  }

  async function refreshDetail() {
    window.clearTimeout(detailTimer);
    const tableId = current;
    try {
      const reply = await getJSON(data.urls.table + encodeURIComponent(tableId));
      if (tableId !== current) return;
      const changed = !detail || detail.table.version !== reply.table.version;
      const first = !detail;
      detail = reply;
      if (first) fillSettings();
      stale(null);
      if (changed) { renderTable(); badge(tableId, reply.table.phase); }
      if (reply.table.version !== auditVersion) refreshAudit(reply.table.version);
    } catch (e) {
      if (e.message !== "signed out") stale(S.stale);
    }
    detailTimer = window.setTimeout(refreshDetail, DETAIL_MS);
  }

  /* -- drawing the table --------------------------------------------------------------------------------------- */

  function cardEl(code) {
    if (!code) return el("span", "?", "op-card back");
    const rank = code[0] === "T" ? "10" : code[0];
    const suit = code[1];
    return el("span", rank + SUIT[suit], `op-card ${suit === "H" || suit === "D" ? "red" : "black"}`);
  }

  function cardsText(cards) {
    return (cards || []).map((c) => (c ? (c[0] === "T" ? "10" : c[0]) + SUIT[c[1]] : "?")).join(" ");
  }

  function renderTable() {
    const t = detail.table;
    $("t-name").textContent = t.name || t.table;
    $("t-variant").textContent = S.titles[t.variant_title] || t.variant_title;
    const phase = $("t-phase");
    phase.textContent = S.phase[t.phase] || t.phase;
    phase.className = `op-phase ${t.phase}`;
    $("t-shoe").textContent = t.shoe ? fmt(S.shoe, t.shoe) : S.no_shoe;
    $("t-rounds").textContent = String(t.rounds);
    $("t-left").textContent = t.shoe ? String(t.shoe.cards_left) : S.no_shoe;
    $("t-version").textContent = String(t.version);
    const dealing = t.phase === "dealing" || t.phase === "squeeze";
    $("t-progress").textContent = dealing ? fmt(S.in_progress, { round: t.round }) : S.no_round;
    for (const [hand, cards, points] of [["p", t.deal.player, t.deal.player_points], ["b", t.deal.banker, t.deal.banker_points]]) {
      const row = $(`${hand}-cards`);
      row.replaceChildren(...cards.map(cardEl));
      $(`${hand}-points`).textContent = points === null || points === undefined ? "" : String(points);
    }
    const notice = $("t-notice");
    const n = t.notice;
    notice.hidden = !n;
    if (n) {
      const key = n.kind === "correct" ? "notice_correct" : n.round === null ? "notice_void_current" : "notice_void";
      notice.textContent = fmt(S[key], n);
    }
    renderRounds();
  }

  function resultText(r) {
    if (!r || !r.winner) return r && r.round === null && !r.void ? S.being_dealt : S.nothing;
    const name = S.winner[r.winner] || r.winner;
    if (r.player_points === null || r.banker_points === null) return name;
    return fmt(S.points, { winner: name, player: r.player_points, banker: r.banker_points });
  }

  function renderRounds() {
    const body = document.querySelector("#rounds tbody");
    const rows = detail.rounds.slice().reverse().map((r) => {
      const tr = el("tr", null, r.void ? "void" : `w${r.winner}`);
      tr.append(
        el("td", r.round === null ? S.void : String(r.round)),
        el("td", r.void ? S.void : resultText(r)),
        el("td", cardsText(r.player)),
        el("td", cardsText(r.banker)),
        el("td", r.void ? fmt(r.operator ? S.voided_by : S.voided, { operator: r.operator, reason: r.reason || "" }) : ""),
      );
      return tr;
    });
    body.replaceChildren(...rows);
  }

  /* -- the audit ----------------------------------------------------------------------------------------------- */

  async function refreshAudit(version) {
    const tableId = current;
    try {
      const reply = await getJSON(`${data.urls.table}${encodeURIComponent(tableId)}/audit`);
      if (tableId !== current) return;
      auditVersion = version;
      renderAudit(reply.audit);
    } catch (e) { /* tried again at the next change */ }
  }

  function sideText(entry, side) {
    const v = entry[side];
    if (!v) return S.nothing;
    if (entry.kind === "shoe") return fmt(S.shoe_decks, { id: v.shoe || S.nothing, decks: v.rules ? v.rules.decks : "?" });
    if (entry.kind === "alarm_ack") return side === "before" ? v.detail : fmt(S.acknowledged_by, { operator: v.acknowledged_by });
    if (v.winner !== undefined || v.player !== undefined) {
      const cards = v.player && v.player.length ? ` · ${cardsText(v.player)} / ${cardsText(v.banker)}` : "";
      return resultText(v) + cards;
    }
    return JSON.stringify(v);
  }

  function renderAudit(entries) {
    const body = document.querySelector("#audit tbody");
    if (!entries.length) {
      const tr = el("tr");
      const td = el("td", S.audit_empty);
      td.colSpan = 7;
      tr.append(td);
      body.replaceChildren(tr);
      return;
    }
    const rows = entries.slice().reverse().map((e) => {
      const refused = e.kind === "refused";
      const tr = el("tr", null, refused ? "refused" : e.kind);
      tr.append(
        el("td", new Date(e.at * 1000).toLocaleString(document.documentElement.lang)),
        el("td", e.operator || S.nothing),
        el("td", refused ? fmt(S.refused_entry, { action: S.kinds[e.action] || e.action || "?", message: e.message })
          : S.kinds[e.kind] || e.kind.replace("_", " ")),
        el("td", e.round === null ? S.nothing : String(e.round)),
        el("td", e.reason || S.nothing),
        el("td", sideText(e, "before")),
        el("td", sideText(e, "after")),
      );
      return tr;
    });
    body.replaceChildren(...rows);
  }

  /* -- actions: fill in, confirm, send ------------------------------------------------------------------------- */

  function fieldsOf(form) {
    const fields = {};
    for (const input of form.querySelectorAll("input, select")) {
      if (!input.name || input.name === "mode" || input.closest("fieldset:disabled")) continue;
      fields[input.name] = input.type === "checkbox" ? input.checked : input.value;
    }
    return fields;
  }

  function summary(form, fields) {
    const table = detail.table.name || current;
    let key = form.dataset.confirm;
    const values = { ...fields, table };
    if (form.dataset.action === "correct") {
      key = fields.winner !== undefined ? "correct_result" : "correct_cards";
      values.winner = S.winner[fields.winner] || fields.winner;
      values.points = fields.player_points !== undefined && fields.player_points !== "" && fields.banker_points !== ""
        ? fmt(S.points_of, { player: fields.player_points, banker: fields.banker_points }) : "";
    }
    if (key === "shoe") {
      values.id = fields.shoe ? fmt(S.shoe_id, { id: fields.shoe }) : "";
      values.decks = fields.decks ? fmt(S.shoe_decks_of, { decks: fields.decks }) : "";
    }
    return fmt(S.confirm[key], values);
  }

  /* What is on the confirm panel is what is sent: the form's fields cannot change while it is open. */
  function lock(form, locked) {
    for (const input of form.querySelectorAll("input, select, button[type=submit]")) input.disabled = locked;
  }

  function ask(form) {
    if (!form.reportValidity() || !detail) return;
    if (pending && pending.form !== form) cancel(pending.form);
    const fields = fieldsOf(form);
    pending = { form, table: current, body: { ...fields, ...detail.next } };
    lock(form, true);
    form.querySelector(".op-result").textContent = "";
    const panel = form.querySelector(".op-confirm");
    panel.querySelector(".op-summary").textContent = summary(form, fields);
    const yes = panel.querySelector(".op-yes");
    yes.textContent = yes.dataset.label || yes.textContent;
    yes.dataset.label = yes.textContent;
    yes.disabled = false;
    panel.hidden = false;
    yes.focus();
  }

  function cancel(form) {
    form.querySelector(".op-confirm").hidden = true;
    lock(form, false);
    if (form.id === "correct") setMode(form);
    if (pending && pending.form === form) pending = null;
  }

  async function send(form) {
    if (!pending || pending.form !== form) return;
    const attempt = pending;
    const yes = form.querySelector(".op-yes");
    const result = form.querySelector(".op-result");
    yes.disabled = true;
    result.textContent = S.sending;
    const url = `${data.urls.table}${encodeURIComponent(attempt.table)}/${form.dataset.action}`;
    const { status, reply } = await sendAction("POST", url, attempt.body, data.csrf);
    if (status === 200 && reply) {
      const first = reply.results[0];
      result.textContent = fmt(first.duplicate ? S.already : S.done[form.dataset.action], { version: first.version });
      pending = null;
      cancel(form);
      form.reset();
      if (form.id === "correct") setMode(form);
      refreshDetail();
      return;
    }
    if (status === 0 || status >= 500) {
      // Maybe done, maybe not: the same body (the same seq) again is safe, the service never applies it twice.
      result.textContent = fmt(S.unsure, { message: reply && reply.message ? `${reply.message}.` : S.offline });
      yes.textContent = S.send_again;
      yes.disabled = false;
      return;
    }
    if (status === 401) signedOut();
    const code = reply && reply.error;
    result.textContent = (code && S.codes[code]) || fmt(S.refused, { message: reply ? reply.message : String(status) });
    pending = null;
    cancel(form);
    auditVersion = -1;  // a refusal changes no table, but the audit gains it
    refreshDetail();
  }

  /* -- the table's live settings ------------------------------------------------------------------------------- */

  const GROUPS = ["main", "tie", "pair", "side"];

  /* The form shows the settings as the table has them (read when the table is chosen, and after each save). */
  function fillSettings() {
    const form = $("settings"), t = detail.table, l = t.limits || {};
    form.elements.status.value = t.status || "open";
    form.elements.name.value = t.name || "";
    form.elements.dealer.value = t.dealer || "";
    form.elements.announcement.value = t.announcement || "";
    form.elements.currency.value = l.currency || "";
    for (const g of GROUPS) {
      form.elements[`${g}-min`].value = l[g] ? String(l[g][0]) : "";
      form.elements[`${g}-max`].value = l[g] ? String(l[g][1]) : "";
    }
    form.elements.stale_after.value = String(t.stale_after ?? "");
    form.elements.expected_screens.value = String(t.expected_screens ?? "");
  }

  /* What the form asks for, as the API takes it: numbers as numbers (anything else is sent as typed, and the
     service names what is wrong with it), an empty text as null, a group without limits as null. */
  function settingsBody(form) {
    const number = (text) => (/^\s*\d+\s*$/.test(text) ? Number(text) : text);
    const text = (name) => form.elements[name].value.trim() || null;
    const limits = { currency: text("currency") };
    for (const g of GROUPS) {
      const low = form.elements[`${g}-min`].value.trim(), high = form.elements[`${g}-max`].value.trim();
      limits[g] = low || high ? [number(low), number(high)] : null;
    }
    return {
      status: form.elements.status.value,
      name: form.elements.name.value,
      dealer: text("dealer"),
      announcement: text("announcement"),
      limits,
      stale_after: number(form.elements.stale_after.value),
      expected_screens: number(form.elements.expected_screens.value),
    };
  }

  async function saveSettings(form) {
    const result = $("settings-result"), tableId = current;
    result.textContent = S.sending;
    const url = `${data.urls.table}${encodeURIComponent(tableId)}/settings`;
    const { status, reply } = await sendAction("POST", url, settingsBody(form), data.csrf);
    if (status === 200) {
      result.textContent = S.saved;
      detail = null;  // read again: the form shows what the table now has
    } else if (status === 401) {
      signedOut();
    } else {
      const code = reply && reply.error;
      result.textContent = (code && S.codes[code]) || fmt(S.refused, { message: reply ? reply.message : S.offline });
      auditVersion = -1;
    }
    if (tableId === current) refreshDetail();
  }

  function setMode(form) {
    const mode = form.querySelector("input[name=mode]:checked").value;
    for (const set of form.querySelectorAll("fieldset[data-mode]")) {
      const off = set.dataset.mode !== mode;
      set.hidden = off;
      set.disabled = off;
    }
  }

  for (const form of document.querySelectorAll("form.op-action")) {
    form.addEventListener("submit", (e) => { e.preventDefault(); ask(form); });
    form.querySelector(".op-no").addEventListener("click", () => {
      form.querySelector(".op-result").textContent = "";
      cancel(form);
    });
    form.querySelector(".op-yes").addEventListener("click", () => send(form));
  }
  const correct = $("correct");
  if (correct) {
    for (const radio of correct.querySelectorAll("input[name=mode]")) radio.addEventListener("change", () => setMode(correct));
  }
  for (const tab of tabs()) tab.addEventListener("click", () => choose(tab.dataset.table));
  $("settings").addEventListener("submit", (e) => { e.preventDefault(); saveSettings(e.target); });

  refreshTables();
  window.setInterval(refreshTables, TABLES_MS);
  if (data.tables.length) choose(data.tables[0].table);
})();
