/* Sending an action as the signed-in operator (the operator page, the dealer's keypad, the pit): JSON with the
   session's cookie and its CSRF token. No text is written here: each page says what the answer means. */
"use strict";

/* Answers { status, reply }: `status` 0 when no answer came (offline, or the connection broke: maybe done, maybe
   not), `reply` null when the answer was not JSON. A `body` of null sends none. */
async function sendAction(method, url, body, csrf) {
  try {
    const r = await fetch(url, {
      method,
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", Accept: "application/json", "X-CSRFToken": csrf },
      body: body === null ? null : JSON.stringify(body),
    });
    return { status: r.status, reply: await r.json().catch(() => null) };
  } catch (e) {
    return { status: 0, reply: null };
  }
}
