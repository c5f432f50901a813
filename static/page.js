/* What every page's script shares: the strings and settings the server put in the page, the server's clock,
   the palette's colours, and the care of screens left on all day. No text, colour or timing is written here. */
"use strict";

const Page = (() => {
  const body = document.body;
  const strings = JSON.parse(document.getElementById("strings").textContent);
  // The server's clock: notices and stale feeds are timed in server epoch seconds (state.notice.at,
  // state.last_event_at); the page was rendered at data-now, so the offset to this display's clock is known.
  const offset = Number(body.dataset.now) * 1000 - Date.now();

  /* A display setting the server gave the page (data-notice-seconds="30" -> setting("noticeSeconds") = 30). */
  function setting(name) { return Number(body.dataset[name]); }

  function now() { return (Date.now() + offset) / 1000; }

  /* "Round %(round)s" with {round: 12} -> "Round 12". */
  function fmt(text, values) {
    return text.replace(/%\((\w+)\)s/g, (_, k) => (values[k] === undefined || values[k] === null ? "" : values[k]));
  }

  /* The palette's colours, read from the CSS custom properties the palette stylesheet sets for the page's theme
     (roads.js names which: the pages that draw roads load it). */
  function colours() {
    const css = getComputedStyle(document.documentElement);
    return RoadView.colours((name) => css.getPropertyValue(`--${name}`).trim());
  }

  /* What roads.js draws with: the palette's colours, the language's letters for Banker, Player and Tie, and the
     roads with their marks (the server's list: scoreboard/roads/names.py). */
  function look() { return { colours: colours(), letters: strings.winner, roads: strings.roads }; }

  /* Set the text of an element (or the element with that id), if it changed. */
  function text(id, value) {
    const el = typeof id === "string" ? document.getElementById(id) : id;
    if (el && el.textContent !== String(value)) el.textContent = value;
  }

  /* A card for people: "TH" -> "10♥". */
  const SUITS = { S: "♠", H: "♥", D: "♦", C: "♣" };
  function card(code) { return `${code[0] === "T" ? "10" : code[0]}${SUITS[code[1]] || code[1]}`; }

  /* The last round's winning bets with what each paid (state.last_pays: [title, odds] pairs from the server's
     variant registry), one span each, in `box`; hidden while a round is dealt or when nothing won. */
  function pays(box, state, dealing) {
    const won = !dealing && state.last_result ? state.last_pays || [] : [];
    box.replaceChildren(...won.map(([title, odds]) => {
      const span = document.createElement("span");
      span.className = "pay";
      span.textContent = fmt(strings.pays, { bet: strings.bets[title] || title, odds });
      return span;
    }));
    box.hidden = !won.length;
  }

  /* The table's live settings as signs (floor.md), the board's and the overlay's: in `box`, one `cls g-GROUP` row
     for each of `groups` the table has limits for, its name (`label(group)`) and its range; in `note`, the
     announcement, hidden when there is none. Answers the rows. */
  function signs(state, groups, box, cls, label, note) {
    const l = state.limits;
    const rows = groups.filter((g) => l[g]).map((g) => {
      const row = document.createElement("div"), name = document.createElement("span"), range = document.createElement("b");
      row.className = `${cls} g-${g}`;
      name.textContent = label(g);
      range.textContent = `${number(l[g][0])} – ${number(l[g][1])}`;
      row.append(name, range);
      return row;
    });
    box.replaceChildren(...rows);
    note.hidden = !state.announcement;
    text(note, state.announcement || "");
    return rows;
  }

  /* A whole number with thousands separators in the page's language. */
  let numbers = null; // made once: an Intl.NumberFormat costs milliseconds to make
  function number(n) {
    if (n === null || n === undefined) return "—";
    numbers = numbers || new Intl.NumberFormat(document.documentElement.lang);
    return numbers.format(n);
  }

  /* Against burn-in: every `every` seconds the picture moves one step round a square of `pixels` each side of
     its place, through CSS variables the stylesheet turns into a transform. */
  function pixelShift(every, pixels) {
    if (!every) return;
    const steps = [];
    for (let x = -pixels; x <= pixels; x++) steps.push([x, -pixels]);
    for (let y = -pixels + 1; y <= pixels; y++) steps.push([pixels, y]);
    for (let x = pixels - 1; x >= -pixels; x--) steps.push([x, pixels]);
    for (let y = pixels - 1; y > -pixels; y--) steps.push([-pixels, y]);
    let i = -1;
    setInterval(() => {
      i = (i + 1) % steps.length;
      document.documentElement.style.setProperty("--shift-x", `${steps[i][0]}px`);
      document.documentElement.style.setProperty("--shift-y", `${steps[i][1]}px`);
    }, every * 1000);
  }

  /* A clock in the page's language, 24 or 12 hours, on the server's time. */
  function clock(el, mode) {
    if (!el || mode === "off") return;
    const f = new Intl.DateTimeFormat(document.documentElement.lang, { hour: "numeric", minute: "2-digit", hourCycle: mode === "12h" ? "h12" : "h23" });
    const tick = () => { el.textContent = f.format(new Date(now() * 1000)); };
    el.hidden = false;
    tick();
    setInterval(tick, 1000);
  }

  /* The void or correction notice in `box`, for the server's notice time counted from when it happened; it hides
     itself when the time is up (and then calls `ended`, if given). `classes` are the box's own classes besides the
     notice's. */
  const noticeTimers = new WeakMap();
  function notice(box, n, classes = "notice", ended = null) {
    clearTimeout(noticeTimers.get(box));
    const left = n ? setting("noticeSeconds") - (now() - n.at) : 0;
    if (left <= 0) { box.hidden = true; return; }
    const S = strings;
    // The service's own void for an excess card is said in the page's words; its `reason` cites the rule
    // document, which is for operators and the audit.
    const excess = n.irregularity && n.cards && n.cards.length;
    const key = excess ? "excess" : n.kind === "correct" ? "corrected" : n.kind === "undo" ? "undone"
      : n.round ? "void" : "void_unnumbered";
    box.textContent = fmt(S[key], { round: n.round, reason: n.reason || "", cards: excess ? n.cards.map(card).join(" ") : "" });
    box.className = `${classes}${n.irregularity ? " irregularity" : ""}`;
    box.hidden = false;
    noticeTimers.set(box, setTimeout(() => { notice(box, n, classes, ended); if (box.hidden && ended) ended(); }, left * 1000 + 50));
  }

  /* The betting window as the table's state has it (state.bets, made by the server): what to announce, or null.
     `{ text, cls, left }`: "Place your bets" with the seconds left (`left`) while it is open, "No more bets" from
     its close until the round's first card. Nothing while the page's live connection is down (a board that lost
     the service never shows bets open), nor at a table whose status is not open. Once `closes_at` has passed by
     the server's clock the window is closed, whether or not its close has arrived yet. */
  function bets(state, connected) {
    const b = state && state.bets;
    if (!connected || !b || !b.announce || (state.status && state.status !== "open")) return null;
    if (b.announce === "place_your_bets") {
      if (b.closes_at === null || b.closes_at === undefined) return { text: strings.window.place_your_bets, cls: "bets-open", left: null };
      // Never more than the window's own seconds: this clock may run a little behind the server's.
      const left = Math.min(b.seconds || Infinity, Math.ceil(b.closes_at - now()));
      if (left > 0) return { text: fmt(strings.window.count, { seconds: left }), cls: "bets-open", left };
    }
    return { text: strings.window.no_more_bets, cls: "no-more-bets", left: 0 };
  }

  return { strings, setting, now, fmt, colours, look, text, card, pays, signs, number, pixelShift, clock, notice, bets };
})();
