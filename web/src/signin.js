// Signing in (`/signin`): a library token is exchanged for a session cookie (HttpOnly,
// SameSite=Strict); the token itself is never stored by the page.

import { ApiError, el, header, resetSession, sameSite, say } from "./common.js";

const form = document.getElementById("signin");
const input = document.getElementById("token");
const next = new URLSearchParams(location.search).get("next");

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  const response = await fetch("/api/v1/session", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ token: input.value.trim() }),
    credentials: "same-origin",
  });
  if (!response.ok) {
    const problem = await response.json().catch(() => ({ detail: response.statusText }));
    say(new ApiError(problem).message, "error");
    input.focus();
    return;
  }
  input.value = "";
  resetSession();
  location.href = sameSite(next);
});

header();
document.querySelector(".hint")?.replaceChildren(
  "Ask an admin for a token (",
  el("code", {}, "llmtool token create NAME --role viewer"),
  ").",
);
