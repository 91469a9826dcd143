// Signing in (`/signin`): with the organisation's single sign-on when the server has it, or a
// library token exchanged for a session cookie (HttpOnly, SameSite=Strict); the token itself is
// never stored by the page.

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

/** Offers single sign-on first when the server has it. */
async function offerSingleSignOn() {
  const methods = await fetch("/api/v1/session/methods").then((r) => (r.ok ? r.json() : {})).catch(() => ({}));
  if (!methods.sso) return;
  const target = `/signin/sso?next=${encodeURIComponent(sameSite(next))}`;
  document.getElementById("sso").replaceChildren(
    el("a", { href: target, class: "button" }, "Sign in with single sign-on"),
    el("p", { class: "help" }, "Or, for scripts and tests, with a library token:"),
  );
}

header();
offerSingleSignOn();
document.querySelector(".hint")?.replaceChildren(
  "Ask an admin for a token (",
  el("code", {}, "llmtool token create NAME --role viewer"),
  ").",
);
