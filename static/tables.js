/* The table list, kept live over the pit's connection (`join_pit`): shoe, round and phase of every table. */
"use strict";

(() => {
  const S = Page.strings;

  function show(state) {
    const li = document.querySelector(`li[data-table="${CSS.escape(state.table)}"]`);
    if (!li) return;
    li.dataset.version = state.version;
    li.querySelector(".shoe").textContent = state.shoe ? state.shoe.number : "—";
    li.querySelector(".round").textContent = state.round;
    const phase = li.querySelector(".phase");
    phase.textContent = S.phase[state.phase] || state.phase;
    phase.className = `phase ${state.phase}`;
  }

  const socket = Live.connect((on) => document.body.classList.toggle("offline", !on));
  Live.pit(socket, null, {
    snapshot(answer) { answer.tables.forEach((snap) => show(snap.state)); },
    update(d) { show(d.state); },
    displays() {},
  });
})();
