/* Live tables over Socket.IO (the contract's `join`, `join_pit` and `update`): a snapshot, then one delta per
   change. A delta from another event log (the service was rebuilt), an older version or a version gap means this
   page's copy can no longer be trusted: it is thrown away and a new snapshot taken. Answers to joins are matched
   to the latest join by a counter, so a slow answer to an earlier join never replaces a newer snapshot. An update
   comes over the wire as what changed (updates.js): it is made whole here, against the copy this page holds, so
   the pages always get the full state and roads delta. */
"use strict";

const Live = (() => {
  const ANSWER_MS = 10000; // a join not answered in this time is asked again

  function connect(onConnected) {
    // WebSocket first: a board on the casino network has no proxy in the way, and it saves the polling round trip.
    // Reconnecting within two seconds at most: a board that lost the service must be live again soon after it
    // is back (the default backoff waits up to five).
    // The path comes from the page: behind a proxy that serves the service under a path, it carries that path.
    const socket = io({
      path: document.body.dataset.socketPath,
      transports: ["websocket", "polling"],
      reconnectionDelay: 500,
      reconnectionDelayMax: 2000,
    });
    // A page that is a screen (screen.js, loaded before the page's script) says so on every connection.
    if (typeof ScreenLink !== "undefined") ScreenLink.attach(socket);
    socket.on("connect", () => onConnected(true));
    socket.on("disconnect", () => onConnected(false));
    socket.on("connect_error", () => onConnected(false));
    return socket;
  }

  /* What this page keeps of a table to make its updates whole: the state and the roads' stats and patterns. */
  function keep(copy, snap) {
    copy.log = snap.log; copy.version = snap.version;
    copy.state = snap.state; copy.roads = { stats: snap.roads.stats, patterns: snap.roads.patterns };
  }

  function whole(copy, d) {
    const full = SlimUpdate.expand(d, copy.state, copy.roads);
    copy.version = full.version; copy.state = full.state;
    if (full.roads) copy.roads = { stats: full.roads.stats, patterns: full.roads.patterns };
    else if (full.stats) copy.roads = { stats: full.stats, patterns: full.patterns };
    return full;
  }

  /* What to do with a delta for a table whose copy is at (log, version). */
  function verdict(copy, d) {
    if (d.log !== copy.log || d.version < copy.version || d.version > copy.version + 1) return "rejoin";
    return d.version === copy.version ? "seen" : "apply";
  }

  /* One table, for boards and overlays (each counts as a display on the server). */
  function table(socket, tableId, { snapshot, update, refused }) {
    let joins = 0, pending = false;
    const copy = { log: undefined, version: -1 };

    function join() {
      const mine = ++joins;
      pending = true;
      socket.timeout(ANSWER_MS).emit("join", { table: tableId }, (err, snap) => {
        if (mine !== joins) return; // the answer to an earlier join: a newer one is on its way
        if (err) { if (socket.connected) join(); return; }
        if (!snap || snap.error) { refused(snap ? snap.message : ""); return; }
        pending = false;
        keep(copy, snap);
        snapshot(snap);
      });
    }

    socket.on("connect", join);
    socket.on("update", (d) => {
      if (d.table !== tableId || pending) return; // while a snapshot is coming, it will hold this change
      const v = verdict(copy, d);
      if (v === "rejoin") join();
      else if (v === "apply") update(whole(copy, d));
    });
    return { join };
  }

  /* Many tables on one connection, for the pit and the table list (not counted as displays). */
  function pit(socket, tableIds, { snapshot, update, displays }) {
    let joins = 0, pending = false;
    const copies = new Map();

    function join() {
      const mine = ++joins;
      pending = true;
      socket.timeout(ANSWER_MS).emit("join_pit", { tables: tableIds }, (err, answer) => {
        if (mine !== joins) return;
        if (err || !answer || answer.error) { setTimeout(() => socket.connected && mine === joins && join(), 2000); return; }
        pending = false;
        copies.clear();
        for (const snap of answer.tables) {
          const copy = {};
          keep(copy, { ...snap, log: answer.log });
          copies.set(snap.table, copy);
        }
        snapshot(answer);
      });
    }

    socket.on("connect", join);
    socket.on("update", (d) => {
      const copy = copies.get(d.table);
      if (pending || !copy) return;
      const v = verdict(copy, d);
      if (v === "rejoin") join();
      else if (v === "apply") update(whole(copy, d));
    });
    socket.on("displays", (d) => { if (!pending && copies.has(d.table)) displays(d); });
    return { join };
  }

  return { connect, table, pit, verdict };
})();
