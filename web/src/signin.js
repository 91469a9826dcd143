// Signing in (`/signin`): a library token is exchanged for a session cookie (HttpOnly,
// SameSite=Strict); the token itself is never stored by the page.

import { ApiError, el, header, resetSession, say } from "./common.js";

const form = document.getElementById("signin");
const input = document.getElementById("token");
const next = new URLSearchParams(location.search).get("next");

/** `next` if it is a page of this site (as the browser reads it), else the gallery. */
function sameSite(next) {
  if (!next) return "/";
  try {
    const url = new URL(next, location.origin);
    return url.origin === location.origin ? `${url.pathname}${url.search}${url.hash}` : "/";
  } catch {
    return "/";
  }
}

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
