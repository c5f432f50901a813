/* The page of a screen not told what to show yet (/screen): its id large, and whether it is connected. screen.js
   moves it once it is assigned. */
"use strict";

(() => {
  const body = document.body, S = Page.strings;
  Page.text("screen-id", ScreenLink.id);
  ScreenLink.onChange((id) => Page.text("screen-id", id));
  Live.connect((on) => {
    body.classList.remove("connecting");
    const live = document.getElementById("live");
    live.classList.toggle("off", !on);
    live.textContent = on ? S.live : S.offline;
  });
})();
