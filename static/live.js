/* Live tables over Socket.IO (the contract's `join`, `join_pit` and `update`): a snapshot, then one delta per
   change. A delta from another event log (the service was rebuilt), an older version or a version gap means this
   page's copy can no longer be trusted: it is thrown away and a new snapshot taken. Answers to joins are matched
   to the latest join by a counter, so a slow answer to an earlier join never replaces a newer snapshot. */
"use strict";

const Live = (() => {
  const ANSWER_MS = 10000; // a join not answered in this time is asked again

  function connect(onConnected) {
    // WebSocket first: a board on the casino network has no proxy in the way, and it saves the polling round trip.
    const socket = io({ transports: ["websocket", "polling"] });
    socket.on("connect", () => onConnected(true));
    socket.on("disconnect", () => onConnected(false));
    socket.on("connect_error", () => onConnected(false));
    return socket;
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
        copy.log = snap.log; copy.version = snap.version;
        snapshot(snap);
      });
    }

    socket.on("connect", join);
    socket.on("update", (d) => {
      if (d.table !== tableId || pending) return; // while a snapshot is coming, it will hold this change
      const v = verdict(copy, d);
      if (v === "rejoin") join();
      else if (v === "apply") { copy.version = d.version; update(d); }
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
        for (const snap of answer.tables) copies.set(snap.table, { log: answer.log, version: snap.version });
        snapshot(answer);
      });
    }

    socket.on("connect", join);
    socket.on("update", (d) => {
      const copy = copies.get(d.table);
      if (pending || !copy) return;
      const v = verdict(copy, d);
      if (v === "rejoin") join();
      else if (v === "apply") { copy.version = d.version; update(d); }
    });
    socket.on("displays", (d) => { if (!pending && copies.has(d.table)) displays(d); });
    return { join };
  }

  return { connect, table, pit, verdict };
})();
