/* <scoreboard-roads>: a table's roads, drawn live inside any page of an origin the service allows (the table file's
   [server] allowed_origins, or --allowed-origins: docs/integration.md).

     <script src="https://HOST/static/embed.js" defer></script>
     <scoreboard-roads src="https://HOST" table="T1" roads="big,bead" lang="en" theme="dark"></scoreboard-roads>

   - src: the service (default: where embed.js came from); table: the table's id;
   - roads: which, in order: big, bead, big_eye, small, cockroach (default: all five);
   - lang: en, zh-Hans or zh-Hant (default en); theme: dark or light (default dark).
   The page gives the element its size (it is a block); the roads share it, the Big Road twice as tall as another.

   It draws in a shadow root, so the page's styles do not reach the roads and its own styles (static/embed.css) do
   not leave it, with the boards' own drawing code (static/roads.js) on the boards' own live updates (live.js and
   updates.js: a snapshot on joining, then each change, a new snapshot after any gap), over a Socket.IO connection
   of its own. The palette, the winner letters and the road titles come from the service (/api/look). The scripts it
   loads from the service are classic scripts, loaded once for every component of the page: they add the globals
   `io`, `RoadView`, `SlimUpdate` and `Live`. The element's `data-version` is the table's version it shows. */
"use strict";

(() => {
  if (customElements.get("scoreboard-roads")) return; // loaded twice: the first definition stands

  // What each script the component needs defines; one already there (the page loaded it) is not loaded again.
  const SCRIPTS = [
    ["vendor/socket.io.min.js", () => typeof io !== "undefined"],
    ["roads.js", () => typeof RoadView !== "undefined"],
    ["updates.js", () => typeof SlimUpdate !== "undefined"],
    ["live.js", () => typeof Live !== "undefined"],
  ];
  const script = document.currentScript;
  const home = script ? script.src.replace(/\/static\/embed\.js(\?.*)?$/, "") : ""; // the service embed.js came from
  const loading = new Map(); // service -> the promise of its scripts, loaded once per page

  /* The service's scripts, in order (async = false: inserted scripts run in the order they were inserted). */
  function scripts(base) {
    if (!loading.has(base)) {
      const wanted = SCRIPTS.filter(([, present]) => !present()).map(([name]) => new Promise((resolve, reject) => {
        const s = document.createElement("script");
        s.src = `${base}/static/${name}`;
        s.async = false;
        s.onload = resolve;
        s.onerror = () => reject(new Error(`cannot load ${s.src}`));
        document.head.appendChild(s);
      }));
      loading.set(base, Promise.all(wanted));
    }
    return loading.get(base);
  }

  class ScoreboardRoads extends HTMLElement {
    static get observedAttributes() { return ["src", "table", "roads", "lang", "theme"]; }

    constructor() {
      super();
      this.attachShadow({ mode: "open" });
      this.generation = 0; // a start that a newer one replaced stops there
      this.socket = null;
      this.model = null;
      this.look = null;
      this.resized = new ResizeObserver(() => this.draw());
    }

    connectedCallback() { this.start(); }

    disconnectedCallback() { this.stop(); }

    attributeChangedCallback() { if (this.isConnected) this.start(); }

    stop() {
      this.generation += 1;
      if (this.socket) this.socket.disconnect();
      this.socket = null;
      this.resized.disconnect();
    }

    async start() {
      this.stop();
      const mine = this.generation;
      const base = (this.getAttribute("src") || home).replace(/\/+$/, "");
      const table = this.getAttribute("table");
      this.build(base);
      if (!table) { this.say("no table: give the element a table attribute"); return; }
      const query = new URLSearchParams({ lang: this.getAttribute("lang") || "en", theme: this.getAttribute("theme") || "dark" });
      try {
        const [answer] = await Promise.all([fetch(`${base}/api/look?${query}`, { credentials: "omit" }), scripts(base)]);
        const look = await answer.json();
        if (!answer.ok) throw new Error(look.message || `${answer.status}`);
        if (mine !== this.generation) return;
        this.dress(look, this.getAttribute("roads"));
        this.follow(base, table, mine);
      } catch (e) {
        // A page of an origin the service does not allow lands here too: its browser kept the answer from it.
        if (mine === this.generation) this.say(`cannot read ${base}: ${e.message || e}`);
      }
    }

    /* The shadow root: the component's stylesheet and its message line; the roads' sections come with the look. */
    build(base) {
      const link = document.createElement("link");
      link.rel = "stylesheet";
      link.href = `${base}/static/embed.css`;
      this.box = document.createElement("div");
      this.box.className = "roads connecting";
      this.sections = [];
      this.message = document.createElement("p");
      this.message.className = "message";
      this.message.hidden = true;
      this.box.appendChild(this.message);
      this.shadowRoot.replaceChildren(link, this.box);
      this.model = null;
    }

    /* The service's palette (as custom properties the stylesheet uses), letters, and roads: one section per road
       asked for (`roads`, by the names of page options; all of the service's roads by default, in its order), its
       title over its drawing. */
    dress(look, asked) {
      for (const [name, value] of Object.entries(look.palette)) this.box.style.setProperty(`--${name}`, value);
      this.box.lang = look.lang;
      const words = look.vocabulary;
      this.look = { colours: RoadView.colours((name) => look.palette[name]), letters: look.letters, roads: words };
      const wanted = asked ? asked.split(",").map((r) => r.trim()) : words.map((w) => w.option);
      this.sections = wanted.map((option) => words.find((w) => w.option === option)).filter(Boolean).map((w) => {
        const section = document.createElement("section");
        section.className = "road";
        section.dataset.road = w.road;
        const title = document.createElement("h3");
        title.className = "title";
        title.textContent = w.title;
        section.append(title, document.createElementNS("http://www.w3.org/2000/svg", "svg"));
        this.box.insertBefore(section, this.message);
        return { name: w.option, road: w.road, title, svg: section.lastChild };
      });
    }

    follow(base, table, mine) {
      const service = new URL(base);
      const socket = io(service.origin, {
        path: `${service.pathname.replace(/\/+$/, "")}/socket.io`,
        transports: ["websocket", "polling"],
        reconnectionDelay: 500,
        reconnectionDelayMax: 2000,
      });
      this.socket = socket;
      const live = (fn) => (...args) => { if (mine === this.generation) fn(...args); };
      Live.table(socket, table, {
        snapshot: live((snap) => { this.model = RoadView.fromJSON(snap.roads); this.shown(snap.version); }),
        update: live((d) => {
          if (d.roads) this.model = RoadView.fromJSON(d.roads);
          else if (d.cells) RoadView.applyRound(this.model, d);
          this.shown(d.version);
        }),
        refused: live((message) => this.say(message)),
      });
      socket.on("disconnect", live(() => this.box.classList.add("offline")));
      socket.on("connect_error", live(() => this.box.classList.add("offline")));
      // Each road is drawn again when its box changes: the page resizes the element, or the stylesheet arrives.
      for (const s of this.sections) this.resized.observe(s.svg);
    }

    shown(version) {
      this.dataset.version = version;
      this.box.classList.remove("connecting", "offline");
      this.say("");
      this.draw();
    }

    say(text) {
      this.message.textContent = text;
      this.message.hidden = !text;
    }

    /* Every road from the model: the Big Road first, whose cells the derived roads take at half size, as the
       board does; each road keeps its newest columns in view. */
    draw() {
      if (!this.model || !this.look) return;
      const boxes = this.sections.map((s) => ({ ...s, width: s.svg.clientWidth, height: s.svg.clientHeight }));
      const opts = (b) => ({ look: this.look, width: b.width, height: b.height });
      const big = boxes.find((b) => b.road === "big_road");
      const frame = big ? RoadView.draw(big.svg, "big_road", this.model, null, opts(big)) : null;
      const half = frame ? Math.max(3, Math.floor(frame.cell / 2)) : 0;
      for (const b of boxes) {
        if (b === big) continue;
        const size = RoadView.roads(this.look, true).includes(b.road) && half ? { cell: half } : {};
        RoadView.draw(b.svg, b.road, this.model, null, { ...opts(b), ...size });
      }
    }
  }

  customElements.define("scoreboard-roads", ScoreboardRoads);
})();
