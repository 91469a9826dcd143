// An invite's link (`/signin/invite#SECRET`): the secret stays after `#`, which the browser
// never sends to a server; a click spends it (`POST /api/v1/session/invite`), so that a mail
// scanner that opens the link does not.

import { ApiError, header, resetSession, say } from "./common.js";

const secret = location.hash.slice(1);
const accept = document.getElementById("accept");
// The secret leaves the address bar (and the history) at once.
history.replaceState(null, "", location.pathname);

if (!/^[0-9a-f]{64}$/.test(secret)) {
  accept.disabled = true;
  say("This link is incomplete: open the whole link from your invite, or ask an admin for a new one.", "error");
}

accept.addEventListener("click", async () => {
  accept.disabled = true;
  const response = await fetch("/api/v1/session/invite", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ secret }),
    credentials: "same-origin",
  });
  if (!response.ok) {
    const problem = await response.json().catch(() => ({ detail: response.statusText }));
    say(new ApiError(problem).message, "error");
    return;
  }
  resetSession();
  location.href = "/";
});

header();
